"""How a run ends and what ll-loop exits with: statuses, outcomes, exit codes (a table each)."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    """Every code `ll-loop` exits with (the table in docs/cli.md; the lists in README.md and
    docs/guide.md are held to it by scripts/tests/docs/test_exit_codes.py)."""

    OK = 0  # a terminal state was reached / the command succeeded
    FAILED = 1  # the loop failed (an error with no route out) / the command could not do it
    USAGE = 2  # invalid loop definition, command-line usage, or a tool the run needs (set-up)
    MAX_ITERATIONS = 3  # stopped at max_iterations
    TIMEOUT = 4  # stopped by the loop-level timeout
    HANDOFF = 5  # context handoff: awaiting continuation (resume it later)
    BUDGET = 6  # the spending budget was used up
    TERMINAL_FAILURE = 7  # ended in a terminal with `outcome: failure`, or reached on `error`
    STALL = 8  # a stall breaker fired and the loop has no on_stall route
    AWAITING_APPROVAL = 9  # an approval state waits for `ll-loop approve`/`reject` (then resume)
    MAX_STEPS = 10  # stopped at max_steps (states run)
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    STOPPED = 143  # SIGTERM / `ll-loop stop`


class Status(StrEnum):
    """The status of a run as stored in its state file."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    STOPPED = "stopped"
    AWAITING_CONTINUATION = "awaiting_continuation"
    AWAITING_APPROVAL = "awaiting_approval"


class Outcome(StrEnum):
    """One way a run ends (the executor's `terminated_by`), the status it leaves, its exit code."""

    status: Status
    exit_code: ExitCode
    meaning: str

    def __new__(cls, value: str, status: Status, exit_code: ExitCode, meaning: str) -> Outcome:
        member = str.__new__(cls, value)
        member._value_ = value
        member.status = status
        member.exit_code = exit_code
        member.meaning = meaning
        return member

    TERMINAL = ("terminal", Status.COMPLETED, ExitCode.OK, "a terminal state was reached")
    TERMINAL_FAILURE = (
        "terminal_failure",
        Status.FAILED,
        ExitCode.TERMINAL_FAILURE,
        "a terminal state with `outcome: failure`, or one reached on the verdict `error`",
    )
    ERROR = (
        "error",
        Status.FAILED,
        ExitCode.FAILED,
        "an action or evaluation failed with no route out",
    )
    # Hitting the limit means the goal state was never reached: a failure, told apart by code 3.
    MAX_ITERATIONS = (
        "max_iterations",
        Status.FAILED,
        ExitCode.MAX_ITERATIONS,
        "max_iterations reached before a terminal state",
    )
    MAX_STEPS = (
        "max_steps",
        Status.FAILED,
        ExitCode.MAX_STEPS,
        "max_steps reached before a terminal state",
    )
    TIMEOUT = ("timeout", Status.FAILED, ExitCode.TIMEOUT, "the loop-level timeout expired")
    HANDOFF = (
        "handoff",
        Status.AWAITING_CONTINUATION,
        ExitCode.HANDOFF,
        "context handoff; resume it later",
    )
    HANDOFF_ENDED = (
        "handoff_ended",
        Status.FAILED,
        ExitCode.HANDOFF,
        "context handoff with `on_handoff: terminate`; the run ends, not resumable",
    )
    BUDGET = ("budget", Status.FAILED, ExitCode.BUDGET, "the spending budget was used up")
    INTERRUPTED = (
        "interrupted",
        Status.INTERRUPTED,
        ExitCode.INTERRUPTED,
        "Ctrl-C (SIGINT); resumable",
    )
    STOPPED = ("stopped", Status.STOPPED, ExitCode.STOPPED, "SIGTERM or `ll-loop stop`; resumable")
    STALL = (
        "stall",
        Status.FAILED,
        ExitCode.STALL,
        "a stall breaker fired and there is no on_stall route",
    )
    AWAITING_APPROVAL = (
        "awaiting_approval",
        Status.AWAITING_APPROVAL,
        ExitCode.AWAITING_APPROVAL,
        "an approval state waits for its answer; resume it after",
    )


# The ends at a context handoff (the run's result keeps the note as `handoff`).
HANDOFFS: tuple[Outcome, ...] = (Outcome.HANDOFF, Outcome.HANDOFF_ENDED)
STATUSES: tuple[str, ...] = tuple(Status)
OUTCOMES: dict[str, Outcome] = {outcome: outcome for outcome in Outcome}
TERMINATION_STATUS: dict[str, str] = {outcome: outcome.status for outcome in Outcome}
TERMINATION_EXIT_CODE: dict[str, int] = {outcome: outcome.exit_code for outcome in Outcome}

# Statuses a run can be resumed from (a `running` one whose pid is dead crashed: also resumable).
RESUMABLE_STATUSES: frozenset[str] = frozenset(
    {
        Status.INTERRUPTED,
        Status.STOPPED,
        Status.AWAITING_CONTINUATION,
        Status.AWAITING_APPROVAL,
        Status.RUNNING,
    }
)

# A run that ended at one of these limits stopped *before* a step started, with everything
# it had (captures, prev, spend) saved: raise the limit and it can be resumed. The value
# says how (NAME is the loop's name).
RAISABLE_LIMITS: dict[str, str] = {
    Outcome.BUDGET: "ll-loop resume NAME --max-cost USD",
    Outcome.MAX_ITERATIONS: "ll-loop resume NAME --max-iterations N",
    Outcome.TIMEOUT: "raise timeout: in the loop file, then ll-loop resume NAME",
    Outcome.MAX_STEPS: "raise max_steps: in the loop file, then ll-loop resume NAME",
}


def how_to_go_on(terminated_by: str | None, loop_name: str) -> str | None:
    """The command (or step) that continues a run stopped at a limit, or None."""
    hint = RAISABLE_LIMITS.get(str(terminated_by))
    return None if hint is None else hint.replace("NAME", loop_name)


def can_resume(status: str, terminated_by: str | None) -> bool:
    """Whether a saved run may be resumed at all (a limit still has to be raised first)."""
    return status in RESUMABLE_STATUSES or (
        status == Status.FAILED and terminated_by in RAISABLE_LIMITS
    )


def succeeded(terminated_by: str | None) -> bool | None:
    """Whether a run that ended so is a success (True) or a failure (False), by the status
    its outcome leaves; None when it has not ended or can go on (stopped, awaiting, ...)."""
    if terminated_by is None:
        return None
    status = outcome_of(terminated_by).status
    return True if status == Status.COMPLETED else False if status == Status.FAILED else None


def outcome_label(terminated_by: str | None, final_state: str) -> str:
    """How a run's end is named in `runs` and `status`: a terminal state's name and whether
    it counts as a success (`done (success)`, `stuck (failure)`), else the outcome word."""
    if terminated_by in (Outcome.TERMINAL, Outcome.TERMINAL_FAILURE):
        return f"{final_state} ({'success' if succeeded(terminated_by) else 'failure'})"
    return str(terminated_by)


def outcome_of(terminated_by: str | None) -> Outcome:
    """The outcome for a `terminated_by` value; an unknown value is a bug, reported as `error`."""
    return OUTCOMES.get(str(terminated_by), Outcome.ERROR)


# The words a loop's `notify: on:` names outcomes by: each outcome's own, except `done` for a
# terminal state and `failed` for an error (the words people say); those two are accepted too.
_SAID_AS: dict[Outcome, str] = {Outcome.TERMINAL: "done", Outcome.ERROR: "failed"}
NOTIFY_OUTCOMES: dict[str, Outcome] = {
    **{_SAID_AS.get(outcome, str(outcome)): outcome for outcome in Outcome},
    **{str(outcome): outcome for outcome in _SAID_AS},
}


def outcome_word(outcome: Outcome) -> str:
    """How notifications name *outcome*: `done`, `failed`, `budget`, `stopped` ..."""
    return _SAID_AS.get(outcome, str(outcome))
