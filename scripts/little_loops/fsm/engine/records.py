"""The records a run produces: its result, a snapshot to resume from, and event text."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from little_loops.fsm.facts.outcomes import Outcome

if TYPE_CHECKING:
    from little_loops.fsm.actions.request import ActionResult


KEEP_SWITCHES = 50  # a run keeps this many of its latest `agent_switch` events in its state

# Strings longer than this are shortened in events (the full output stays in the
# output file and, up to SAVED_TEXT_LIMIT, in `captured`).
EVENT_TEXT_LIMIT = 2000
# `captured` and `prev` keep at most the last this many characters of an action's stdout
# and stderr. They live in the state file, saved at every state entry, so a capture of a
# command that printed 200 MB must not make it 4 MiB (the runner's tail). A longer capture
# could not be passed to a shell action anyway: Linux limits one argument to 128 KiB.
SAVED_TEXT_LIMIT = 64 * 1024


@dataclass
class ExecutionResult:
    """How a run ended."""

    final_state: str
    iterations: int
    # terminal, max_iterations, timeout, error, handoff, budget, interrupted, stopped, stall
    # or awaiting_approval (facts/outcomes.py)
    terminated_by: Outcome
    duration_ms: int
    captured: dict[str, Any]
    error: str | None = None
    handoff: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    stall: dict[str, Any] | None = None  # the stall breaker that ended it: detector, state ...
    waited_ms: dict[str, int] = field(default_factory=dict)  # retry / rate_limit waits
    # Each time a step went on with the next agent of its list (`agent_switch`), the last
    # KEEP_SWITCHES; and the agents still limited or missing when it ended.
    agent_switches: list[dict[str, Any]] = field(default_factory=list)
    limited_agents: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.stall is None:
            del out["stall"]  # only a run a stall breaker ended says which one
        for key in ("agent_switches", "limited_agents"):
            if not out[key]:
                del out[key]  # only a run with a fallback list has them
        return out


@dataclass
class ExecutorSnapshot:
    """Everything needed to continue a run later (persisted by PersistentExecutor)."""

    current_state: str
    iteration: int
    pass_states: list[str] = field(default_factory=list)
    entered: bool = True  # current_state had been entered (it runs again on resume)
    pass_pending: bool = False  # a maintain restart's new pass has not begun yet
    captured: dict[str, Any] = field(default_factory=dict)
    prev_result: dict[str, Any] | None = None
    last_result: dict[str, Any] | None = None
    started_at: str = ""
    elapsed_ms: int = 0
    continuation: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    # The current state's finished action, awaiting its verdict (see acted_record): a run
    # resumed here evaluates it instead of running the action again.
    action_result: dict[str, Any] | None = None
    # The question an approval state waits on ({state, question, asked_at, deadline}).
    approval: dict[str, Any] | None = None
    stall_watch: dict[str, Any] = field(default_factory=dict)  # the stall breakers' counts
    # Each state's unrouted `cannot_judge` verdicts in a row (--compat: rules/abstentions.py).
    abstentions: dict[str, int] = field(default_factory=dict)
    # Claude Code session ids by session_key (a state's name by default), for `session: continue`.
    sessions: dict[str, str] = field(default_factory=dict)
    # The agent that made each session, by session_key (one not named: claude's, as before).
    session_agents: dict[str, str] = field(default_factory=dict)
    # The agents of a fallback list the run found limited or missing: {reason, until, resets}.
    limited_agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    agent_switches: list[dict[str, Any]] = field(default_factory=list)  # the last KEEP_SWITCHES
    # The current state's attempts and the wait it is in (engine/attempts.AttemptRecord).
    attempt: dict[str, Any] | None = None
    waited_ms: dict[str, int] = field(default_factory=dict)
    # The running child loop of a sub-loop state (`loop:`): its own snapshot, as a dict of
    # these fields (with its own `child` when it runs one), and `loop`, its name.
    child: dict[str, Any] | None = None
    # Why the run came to current_state on the verdict `error` (the state that gave it and
    # its error); None when it came another way. A terminal reached so is a failure.
    arrived_on_error: str | None = None
    # The caps' counts (engine/core.Position): `steps` run, `repeats` of current_state in a
    # row (its max_retries), the cap whose on_max_* route runs (`capped`), and `cap_done`.
    caps: dict[str, Any] = field(default_factory=dict)
    # The guards of the current state's action (engine/kinds/guards.py): the test files as
    # they were before it, then the guards' verdicts; a resume judges with them.
    guard: dict[str, Any] | None = None
    # The pull request of the current `pr:` state (engine/rules/pulls.py): its number,
    # address, the commit pushed, and the time waited for its checks.
    pr: dict[str, Any] | None = None


def resumed_mid_action(snap: ExecutorSnapshot) -> bool:
    """Whether a run resumed at *snap* was stopped (or crashed) inside its state's action:
    the state runs again from its start (a finished action is judged instead)."""
    return snap.entered and snap.action_result is None


def chomp(text: str) -> str:
    """Output as `$(...)` would give it: trailing newlines removed, so
    `[ "${captured.n.output}" -ge 3 ]` works. The output file keeps every byte."""
    return text.rstrip("\r\n")


def saved_tail(text: str, limit: int = SAVED_TEXT_LIMIT) -> tuple[str, bool]:
    """The last `limit` characters of `text`, and whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[-limit:], True


def short(text: str, limit: int = EVENT_TEXT_LIMIT, tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    if tail:
        return "…" + text[-limit:]
    return text[:limit] + "…"


def event_value(value: Any) -> Any:
    if isinstance(value, str):
        return short(value)
    return value


def saved_result(result: ActionResult) -> dict[str, Any]:
    """An action's result as `captured` and `prev` keep it: the tail of each stream.

    At most SAVED_TEXT_LIMIT characters of stdout and of stderr; when the action printed
    more, `truncated` is true and `output_path` names the file with all of stdout.
    """
    output, cut_out = saved_tail(chomp(result.output))
    stderr, cut_err = saved_tail(result.stderr)
    saved: dict[str, Any] = {
        "output": output,
        "stderr": stderr,
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
    }
    if cut_out or cut_err or result.truncated:
        saved["truncated"] = True
        if result.output_path:
            saved["output_path"] = result.output_path
    return saved


def acted_record(result: ActionResult) -> dict[str, Any]:
    """A finished action as a snapshot keeps it until its verdict: saved_result plus error,
    with the output as the evaluator sees it, not chomped (a resume judges it again, and
    `output_contains: "x\n\n"` or a same_result count must see the same bytes); its last
    SAVED_TEXT_LIMIT characters (a longer one is judged on them: `truncated`)."""
    acted = saved_result(result)
    acted["output"], cut = saved_tail(result.output)
    if cut:
        acted["truncated"] = True
        if result.output_path:
            acted["output_path"] = result.output_path
    if result.error:
        acted["error"] = result.error
    if result.timed_out:
        acted["timed_out"] = True
    return acted


def acted_result(acted: dict[str, Any]) -> ActionResult:
    """The ActionResult an `acted_record` stands for (its output is the saved tail)."""
    from little_loops.fsm.actions.request import ActionResult

    def text(key: str) -> str:
        value = acted.get(key)
        return value if isinstance(value, str) else ""

    code, took = acted.get("exit_code"), acted.get("duration_ms")
    error = acted.get("error")
    return ActionResult(
        output=text("output"),
        stderr=text("stderr"),
        exit_code=code if isinstance(code, int) else 1,
        duration_ms=took if isinstance(took, int) else 0,
        truncated=bool(acted.get("truncated")),
        output_path=acted.get("output_path") if isinstance(acted.get("output_path"), str) else None,
        timed_out=bool(acted.get("timed_out")),
        error=error if isinstance(error, str) else None,
    )


def prev_record(name: str, action: ActionResult | None, verdict: str) -> dict[str, Any]:
    """`${prev.*}`: the state that gave the last verdict, its action's result and verdict."""
    saved = saved_result(action) if action else {"output": "", "stderr": "", "exit_code": 0}
    saved.pop("duration_ms", None)
    return {"state": name, **saved, "verdict": verdict}
