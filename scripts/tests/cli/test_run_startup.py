"""What `ll-loop run` of a shell-only loop loads: none of the machinery of the features the
loop does not use (start-up time is part of the product; issue 42). Checked in a fresh
process through `sys.modules` after the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.bench_loops import SPIN as BENCH_SPIN
from support.slowdown import scaled

PROBE = """\
import contextlib, io, sys
from little_loops.cli import main_loop
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main_loop(sys.argv[1:])
print(code, " ".join(sorted(sys.modules)))
"""

SPIN = BENCH_SPIN.format(n=2)

# Each feature's machinery, by the key of a loop that uses it: a shell-only run loads none.
FEATURES = {
    "notify": {"little_loops.fsm.runs.notify", "little_loops.fsm.runs.webhook"},
    "tamper_guard": {
        "little_loops.fsm.engine.tamper",
        "little_loops.fsm.engine.nofollow",
        "secrets",
    },
    "prepatch_check": {
        "little_loops.fsm.engine.prepatch",
        "little_loops.fsm.engine.prepatch_tests",
        "difflib",
    },
    "pr": {"little_loops.fsm.forges.forge"},
    "fanout": {"little_loops.fsm.fanout.children"},
    # A prompt (or an LLM judge) on Claude Code: its kind, its session reading, the judge.
    "agent": {
        "little_loops.fsm.actions.claude_code",
        "little_loops.fsm.actions.claude_options",
        "little_loops.fsm.actions.claude",
        "little_loops.fsm.actions.transcript",
        "little_loops.fsm.evaluators.judge_claude",
    },
    # A stall breaker that hashes the tree or the output, a loop that reads its input's hash.
    "stall": {"hashlib"},
    # A prompt file without an output file, a sandbox's hidden files, a jittered retry.
    "prompt, sandbox, jitter": {"tempfile", "random"},
    # A `retry:`, `rate_limit:` or stall block: the classes of the policy blocks.
    "retry, rate_limit, stall": {"little_loops.fsm.definition.model.policy_blocks"},
    # A run's OpenTelemetry trace (OTEL_* set): its model of visits and spans.
    "telemetry": {"little_loops.fsm.runs.telemetry"},
}
NOT_FOR_SHELL = set().union(*FEATURES.values())


def loaded_by_run(root: Path, text: str) -> tuple[int, set[str]]:
    (root / ".loops").mkdir(parents=True, exist_ok=True)
    (root / ".loops/x.yaml").write_text(text)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "x", "--quiet"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert proc.returncode == 0, proc.stderr
    code, _, modules = proc.stdout.strip().partition(" ")
    return int(code), set(modules.split())


def test_a_shell_only_run_loads_no_machinery_of_features_it_does_not_use(
    tmp_path: Path,
) -> None:
    code, modules = loaded_by_run(tmp_path, SPIN)
    assert code == 3  # max_iterations: the steps ran
    assert sorted(modules & NOT_FOR_SHELL) == []


def test_a_run_that_uses_a_guard_or_notify_loads_its_machinery(tmp_path: Path) -> None:
    """The probe sees what a run loads: a loop with a tamper guard, a pre-patch check and a
    `notify:` command loads theirs (they are loaded when used, not gone)."""
    guarded = SPIN.replace(
        "states:\n",
        'tamper_guard: fail\nprepatch_check: warn\nnotify:\n  command: "true"\nstates:\n',
    )
    code, modules = loaded_by_run(tmp_path, guarded)
    assert code == 3
    used = FEATURES["notify"] | FEATURES["tamper_guard"] | FEATURES["prepatch_check"]
    assert sorted(used - modules) == []
