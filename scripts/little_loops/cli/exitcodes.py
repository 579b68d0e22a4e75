"""The exit codes of ll-loop, one per outcome (documented in docs/cli.md)."""

from __future__ import annotations

EXIT_OK = 0  # a terminal state was reached / the command succeeded
EXIT_FAILED = 1  # the loop failed: an error verdict with no route, no valid transition, ...
EXIT_DEFINITION = 2  # invalid loop definition or command-line usage
EXIT_MAX_ITERATIONS = 3  # stopped at max_iterations
EXIT_TIMEOUT = 4  # stopped by the loop-level timeout
EXIT_HANDOFF = 5  # context handoff: awaiting continuation (resume it later)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_STOPPED = 143  # SIGTERM / `ll-loop stop`
EXIT_BUDGET = 6  # the spending budget was used up (see fsm/outcomes.py)
