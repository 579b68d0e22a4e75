"""The events a run emits (one line each in the events file): their shapes and builders."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NotRequired, TypedDict

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.engine.records import ExecutionResult, event_value, short
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.timefmt import iso_now

# Receives every event: `{"event": NAME, "ts": ISO time, **payload}`.
EventCallback = Callable[[dict[str, Any]], None]


class LoopStart(TypedDict):
    """`loop_start`: a run (or a resumed run) begins."""

    loop: str
    state: str
    max_iterations: int
    resumed: bool


class StateEnter(TypedDict):
    """`state_enter`: a state is entered (its action is about to run)."""

    state: str
    iteration: int


class _ActionStartKeys(TypedDict):
    """The keys every `action_start` has."""

    state: str
    action: str
    action_type: str  # "prompt" or "shell"
    timeout: float


class ActionStart(_ActionStartKeys, total=False):
    """`action_start`: an action begins; `output_path` is where its stdout streams, live;
    `resume_session` the agent's session a `session: continue` state resumes."""

    agent: str  # the agent (kind) that runs a prompt: `claude`, ...; absent: by action_type
    output_path: str
    resume_session: str
    fresh_session: str  # why a `session: continue` state starts afresh (another agent's session)
    script: str  # a shell action as bash runs it (`action` shows the values in place)
    values: dict[str, str]  # the values its ${...} became, by the variable it reads
    sandbox: dict[str, Any]  # the sandbox it runs in (actions/sandbox.as_event); absent: none


class SessionLost(TypedDict):
    """`session_lost`: Claude Code could not resume a saved session; the action runs fresh."""

    state: str
    session_id: str
    note: str


# `agent_switch`: the step goes on with the next agent of its list (`agent: [a, b]`);
# `reason`: engine/rules/fallback's word; `resets`: the clock time the limit said it lifts.
AgentSwitch = TypedDict(
    "AgentSwitch",
    {"state": str, "from": str, "to": str, "reason": str, "resets": NotRequired[str]},
)


class _ActionCompleteKeys(TypedDict):
    """The keys every `action_complete` has."""

    state: str
    exit_code: int
    duration_ms: int
    output: str


class ActionComplete(_ActionCompleteKeys, total=False):
    """`action_complete`: an action ended; optional keys only when they say something."""

    stderr: str  # its end, like `output`; all of it is in the file next to `output_path`
    error: str
    truncated: bool
    output_path: str
    cost_usd: float
    usage: dict[str, int]
    spent_usd: float
    session_id: str  # the Claude Code session the action ran in
    models: dict[str, float]  # the cost of each model the Claude session used
    tool_calls: list[str]  # the Claude session's tool calls and results, as `logs` shows them
    tools_failed: int  # how many of the agent's own tool calls failed (none: left out)
    uncounted: str  # why its spend cannot be counted (ActionResult.uncounted)


class _EvaluationKeys(TypedDict):
    """The keys every `evaluate` has."""

    state: str
    type: str
    verdict: str


class Evaluation(_EvaluationKeys, total=False):
    """`evaluate`: a verdict; the evaluator's details follow as further keys."""

    error: str
    cost_usd: float
    final_state: str  # a sub-loop state's: where its child ended


class Guards(TypedDict):
    """`guards`: the verdicts of a state's guards on its action, written before they act
    (a revert) or route: a resumed run goes by them. Each verdict follows as a further key,
    its guard's loop key (definition/model/run_keys.py rows): the tamper guard's findings, the
    pre-patch check's record."""

    state: str


class PrepatchFlagged(TypedDict):
    """`prepatch_check_flagged`: under `prepatch_check: warn`, new tests of a state's patch
    passed on the code before it (`tests`: their ids)."""

    state: str
    policy: str
    outcomes: int
    tests: list[str]


# `route`: where the run goes next and why ("from" is a keyword, hence this form).
Route = TypedDict("Route", {"from": str, "to": str, "verdict": str | None, "reason": str})


class StallEvent(TypedDict):
    """`stall`: a stall breaker fired (`to`: its on_stall state; None: the run ends)."""

    state: str
    detector: str  # same_result, no_change_passes or max_visits
    limit: int
    count: int
    to: str | None
    message: str


class _ApprovalWaitKeys(TypedDict):
    """The keys every `approval_wait` has."""

    state: str
    question: str
    asked_at: str
    answer_with: str  # the commands that answer it


class ApprovalWait(_ApprovalWaitKeys, total=False):
    """`approval_wait`: an approval state asks its question and waits for the answer."""

    deadline: str  # when `on_timeout` is taken (ISO time), for a state with a timeout


class ApprovalAnswer(TypedDict):
    """`approval`: the answer came (success: approved, failure: rejected) or the time ran out."""

    state: str
    verdict: str
    note: str


class Attempt(TypedDict):
    """`attempt`: an attempt of a state with `retry:` begins (1 for the first)."""

    state: str
    attempt: int
    max_attempts: int


class _WaitKeys(TypedDict):
    """The keys every wait event has; `until` is when it ends (ISO time)."""

    state: str
    seconds: float
    until: str


class RetryWait(_WaitKeys, total=False):
    """`retry_wait`: a retried state waits before its next attempt (number `attempt`)."""

    attempt: int
    max_attempts: int


class RateLimitWait(_WaitKeys, total=False):
    """`rate_limit_wait`: Claude (`judge`: the LLM judge) answered with a limit; the step
    runs again after the wait. `limit`: rate_limit, overloaded or usage_limit."""

    limit: str
    resets: str
    judge: bool


class PullRequestOpened(TypedDict):
    """`pull_request`: a `pr:` state pushed `head` to `branch` and opened (`created`) or
    updated pull request `number` at `url`."""

    state: str
    number: int
    url: str
    branch: str
    head: str
    created: bool


class ChecksWait(_WaitKeys):
    """`checks_wait`: a `pr:` state's checks are not all in (`reason`); it looks again after
    the wait."""

    number: int
    reason: str


class ChecksSeen(TypedDict, total=False):
    """`checks`: the verdict on a `pr:` state's pull request (`passed`, `failed`, `merged`,
    `timeout` or `error`), why, the failed checks' names, and whether it was merged now."""

    state: str
    number: int
    verdict: str
    reason: str
    failed: list[str]
    merged: bool


# `checkpoint`: a state's action changed the worktree and was committed (`commit:`);
# `sha` is the new commit, `pass` the executor's pass number. A git failure (no commit
# made; the run goes on) has `error` instead of `sha`. ("pass" is a keyword, hence this form.)
_CheckpointKeys = TypedDict("_CheckpointKeys", {"state": str, "pass": int})


class Checkpoint(_CheckpointKeys, total=False):
    """`checkpoint`: a commit after a state's action (see above)."""

    sha: str
    error: str


class _RollbackKeys(TypedDict):
    """The keys every `rollback` has."""

    state: str


class Rollback(_RollbackKeys, total=False):
    """`rollback`: before a `rollback: true` state's action, the worktree went back to commit
    `sha` (HEAD, which never moves); `files` names up to 100 of the `count` discarded
    (changed or untracked) files. A git failure has `error` instead."""

    sha: str
    count: int
    files: list[str]
    error: str


class _LoopCompleteKeys(TypedDict):
    """The keys every `loop_complete` has."""

    final_state: str
    iterations: int
    terminated_by: str
    duration_ms: int


class LoopComplete(_LoopCompleteKeys, total=False):
    """`loop_complete`: how the run ended."""

    error: str
    handoff: str
    stall: dict[str, Any]  # the stall breaker that ended the run (detector, state, limit, count)
    cost_usd: float
    usage: dict[str, int]
    waited_ms: dict[str, int]  # time spent in retry and rate-limit waits, by kind


# A sub-loop's events go to its parent's log with these keys added (engine/subloop.py):
# how deep the loop that emitted it is (1: a child of the run's loop), and its name.
DEPTH_KEY = "depth"
LOOP_KEY = "loop"


def nested(event: Mapping[str, object]) -> bool:
    """Whether *event* came from a sub-loop (its loop_start/loop_complete do not start or
    end the run)."""
    return bool(event.get(DEPTH_KEY))


def stamped(event: Event, payload: Mapping[str, object]) -> dict[str, Any]:
    """The line written for *event*: its name, the time, then the payload."""
    return {"event": event, "ts": iso_now(), **payload}


def action_complete(name: str, result: ActionResult, spent_usd: float) -> ActionComplete:
    """The `action_complete` payload for *result* of state *name*."""
    complete = ActionComplete(
        state=name,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        output=short(result.output, tail=True),
    )
    if result.stderr:
        complete["stderr"] = short(result.stderr, tail=True)
    if result.error:
        complete["error"] = result.error
    if result.truncated:
        complete["truncated"] = result.truncated
    if result.output_path:
        complete["output_path"] = result.output_path
    if result.cost_usd:
        # Claude's own sum can carry float noise (0.29152500000000003): every
        # dollar figure the product records is rounded to micro-dollars.
        complete["cost_usd"] = round(result.cost_usd, 6)
    if result.usage:
        complete["usage"] = result.usage
    if spent_usd:
        complete["spent_usd"] = round(spent_usd, 6)
    if result.session_id:
        complete["session_id"] = result.session_id
    if result.model_costs:
        complete["models"] = {name: round(cost, 6) for name, cost in result.model_costs.items()}
    if result.tool_calls:
        complete["tool_calls"] = result.tool_calls
    if result.tools_failed:
        complete["tools_failed"] = result.tools_failed
    if result.uncounted:
        complete["uncounted"] = result.uncounted
    return complete


def tools_failed_text(count: object) -> str:
    """An `action_complete`'s `tools_failed` as the step line shows it after the verdict:
    `(1 of the agent's own tool call failed)`; "" for none (or a value that is no count)."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return ""
    return f"({count} of the agent's own tool {'call' if count == 1 else 'calls'} failed)"


def evaluation(
    name: str,
    kind: str,
    verdict: str,
    details: Mapping[str, object],
    cost_usd: float | None = None,
) -> dict[str, object]:
    """The `evaluate` payload: `Evaluation`, then each detail not already given."""
    head = Evaluation(state=name, type=kind, verdict=verdict)
    if cost_usd is not None:
        head["cost_usd"] = round(cost_usd, 6)
    event: dict[str, object] = dict(head)
    for key, value in details.items():
        event.setdefault(key, event_value(value))
    return event


def loop_complete(result: ExecutionResult, spent: bool) -> LoopComplete:
    """The `loop_complete` payload for *result* (cost and usage when anything was *spent*)."""
    payload = LoopComplete(
        final_state=result.final_state,
        iterations=result.iterations,
        terminated_by=result.terminated_by,
        duration_ms=result.duration_ms,
    )
    if result.error:
        payload["error"] = result.error
    if result.handoff is not None:
        payload["handoff"] = result.handoff
    if result.stall is not None:
        payload["stall"] = result.stall
    if spent:
        payload["cost_usd"] = result.cost_usd
        payload["usage"] = result.usage
    if result.waited_ms:
        payload["waited_ms"] = result.waited_ms
    return payload
