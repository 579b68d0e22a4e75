"""How a run ended: each `terminated_by` reason has one status and one exit code (one table)."""

from __future__ import annotations

from dataclasses import dataclass

# The status of a run as stored in its state file.
STATUS_RUNNING = "running"
STATUS_COMPLETED = "completed"
STATUS_FAILED = "failed"
STATUS_INTERRUPTED = "interrupted"
STATUS_STOPPED = "stopped"
STATUS_AWAITING_CONTINUATION = "awaiting_continuation"

STATUSES: tuple[str, ...] = (
    STATUS_RUNNING,
    STATUS_COMPLETED,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_STOPPED,
    STATUS_AWAITING_CONTINUATION,
)

# Statuses a run can be resumed from (a `running` one whose pid is dead crashed: also resumable).
RESUMABLE_STATUSES: frozenset[str] = frozenset(
    {STATUS_INTERRUPTED, STATUS_STOPPED, STATUS_AWAITING_CONTINUATION, STATUS_RUNNING}
)

# The executor's `terminated_by` values.
TERMINAL = "terminal"
ERROR = "error"
MAX_ITERATIONS = "max_iterations"
TIMEOUT = "timeout"
HANDOFF = "handoff"
BUDGET = "budget"
INTERRUPTED = "interrupted"
STOPPED = "stopped"


@dataclass(frozen=True)
class Outcome:
    """One way a run ends: the reason, the status it leaves, the exit code `ll-loop` returns."""

    terminated_by: str
    status: str
    exit_code: int
    meaning: str


_TABLE: tuple[Outcome, ...] = (
    Outcome(TERMINAL, STATUS_COMPLETED, 0, "a terminal state was reached"),
    Outcome(ERROR, STATUS_FAILED, 1, "an action or evaluation failed with no route out"),
    # Hitting the limit means the goal state was never reached: a failure, told apart by code 3.
    Outcome(MAX_ITERATIONS, STATUS_FAILED, 3, "max_iterations reached before a terminal state"),
    Outcome(TIMEOUT, STATUS_FAILED, 4, "the loop-level timeout expired"),
    Outcome(HANDOFF, STATUS_AWAITING_CONTINUATION, 5, "context handoff; resume it later"),
    Outcome(BUDGET, STATUS_FAILED, 6, "the spending budget was used up"),
    Outcome(INTERRUPTED, STATUS_INTERRUPTED, 130, "Ctrl-C (SIGINT); resumable"),
    Outcome(STOPPED, STATUS_STOPPED, 143, "SIGTERM or `ll-loop stop`; resumable"),
)

OUTCOMES: dict[str, Outcome] = {outcome.terminated_by: outcome for outcome in _TABLE}
TERMINATION_STATUS: dict[str, str] = {o.terminated_by: o.status for o in _TABLE}
TERMINATION_EXIT_CODE: dict[str, int] = {o.terminated_by: o.exit_code for o in _TABLE}


# A run that ended at one of these limits stopped *before* a step started, with everything
# it had (captures, prev, spend) saved: raise the limit and it can be resumed. The value
# says how (NAME is the loop's name).
RAISABLE_LIMITS: dict[str, str] = {
    BUDGET: "ll-loop resume NAME --max-cost USD",
    MAX_ITERATIONS: "ll-loop resume NAME --max-iterations N",
    TIMEOUT: "raise timeout: in the loop file, then ll-loop resume NAME",
}


def how_to_go_on(terminated_by: str | None, loop_name: str) -> str | None:
    """The command (or step) that continues a run stopped at a limit, or None."""
    hint = RAISABLE_LIMITS.get(str(terminated_by))
    return None if hint is None else hint.replace("NAME", loop_name)


def can_resume(status: str, terminated_by: str | None) -> bool:
    """Whether a saved run may be resumed at all (a limit still has to be raised first)."""
    return status in RESUMABLE_STATUSES or (
        status == STATUS_FAILED and terminated_by in RAISABLE_LIMITS
    )


def outcome_of(terminated_by: str) -> Outcome:
    """The outcome for a `terminated_by` value; an unknown value is a bug, reported as `error`."""
    return OUTCOMES.get(terminated_by, OUTCOMES[ERROR])
