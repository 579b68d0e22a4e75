"""The state of a run as saved in `<name>.state.json`: fields, JSON shape, validation."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypedDict

from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.errors import CorruptStateError
from little_loops.fsm.facts.layout import RUN_ID_PATTERN, files_key, run_key
from little_loops.fsm.facts.outcomes import STATUSES, Status
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.values.value_checks import is_finite

SCHEMA_VERSION = 1


class StateShapeError(ValueError):
    """What is wrong with a parsed document (the caller turns it into a CorruptStateError)."""


_MISSING = object()


def _get(data: dict[str, Any], key: str, kinds: tuple[type, ...], default: Any = _MISSING) -> Any:
    """`data[key]` checked against `kinds`; booleans never pass for integers."""
    if key not in data:
        if default is _MISSING:
            raise StateShapeError(f"missing {key!r}")
        return default() if callable(default) else default
    value = data[key]
    if value is None and type(None) in kinds:
        return None
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        names = " or ".join(_TYPE_NAMES[k] for k in kinds)
        raise StateShapeError(f"{key!r} should be {names}, found {json_type(value)}")
    return value


_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    dict: "an object",
    list: "a list",
    type(None): "null",
    bool: "a boolean",
}


def json_type(value: Any) -> str:
    """The JSON name of a value's type, as error messages say it."""
    for kind, name in (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        (str, "a string"),
        (dict, "an object"),
        (list, "a list"),
    ):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


class StateFile(TypedDict):
    """The JSON object in `<name>.state.json`, key for key in the order it is written."""

    schema_version: int
    loop_name: str
    status: str
    current_state: str
    iteration: int
    pass_states: list[str]
    entered: bool
    pass_pending: bool
    captured: dict[str, Any]
    prev_result: dict[str, Any] | None
    last_result: dict[str, Any] | None
    arrived_on_error: str | None  # why a terminal reached on the verdict error is a failure
    caps: dict[str, Any]  # steps run, repeats of the state, a cap's route (engine/core.py)
    started_at: str
    updated_at: str
    elapsed_ms: int
    continuation_prompt: str | None  # LoopState.continuation (the key older files have)
    pid: int | None
    pid_start: int | None
    context: dict[str, Any]
    loop_path: str | None
    terminated_by: str | None
    error: str | None
    scope: list[str]
    cost_usd: float
    usage: dict[str, int]
    action_result: dict[str, Any] | None  # the current state's finished action (resume judges it)
    approval: dict[str, Any] | None  # the question an approval state waits on
    stall_watch: dict[str, Any]  # the stall breakers' counts
    abstentions: dict[str, int]  # unrouted cannot_judge verdicts in a row (--compat)
    sessions: dict[str, str]  # Claude Code session ids by session_key (session: continue)
    session_agents: dict[str, str]  # the agent of each session (absent: claude)
    limited_agents: dict[str, dict[str, Any]]  # agents a fallback list skips, and until when
    agent_switches: list[dict[str, Any]]  # the latest steps that went on with another agent
    attempt: dict[str, Any] | None  # the current state's attempts and pending wait
    waited_ms: dict[str, int]  # time spent in retry and rate-limit waits, by kind
    child: dict[str, Any] | None  # a running sub-loop's snapshot, nested (engine/subloop.py)
    run_id: str | None  # the run's short id (None in files of versions before run ids)
    worktree: dict[str, str] | None  # runs/place.RunPlace of a --worktree run (path, branch...)
    guard: dict[str, Any] | None  # the current action's guards: test files before it, verdicts
    pr: dict[str, Any] | None  # the current `pr:` state's pull request (engine/rules/pulls.py)


@dataclass
class LoopState:
    """Everything needed to show a run and to resume it where it stopped."""

    loop_name: str
    current_state: str
    iteration: int = 0
    pass_states: list[str] = field(default_factory=list)  # states already run in this pass
    entered: bool = True  # current_state had begun (its action runs again on resume)
    pass_pending: bool = False  # a maintain restart's new pass has not begun yet
    captured: dict[str, Any] = field(default_factory=dict)
    prev_result: dict[str, Any] | None = None
    last_result: dict[str, Any] | None = None
    arrived_on_error: str | None = None  # the verdict `error` that led to current_state
    caps: dict[str, Any] = field(default_factory=dict)  # see StateFile
    started_at: str = field(default_factory=iso_now)
    updated_at: str = field(default_factory=iso_now)
    status: Status = Status.RUNNING
    continuation: str | None = None  # the note of a context handoff, given to the next prompt
    pid: int | None = None
    pid_start: int | None = None  # process start ticks, so a reused pid is not taken for ours
    elapsed_ms: int = 0
    context: dict[str, Any] = field(default_factory=dict)  # context overrides to resume with
    loop_path: str | None = None  # the loop file the run came from
    terminated_by: str | None = None
    error: str | None = None
    scope: list[str] = field(default_factory=lambda: ["."])
    cost_usd: float = 0.0  # spend so far (Claude Code's cost + the LLM judge's estimate)
    usage: dict[str, int] = field(default_factory=dict)  # token counters
    action_result: dict[str, Any] | None = None  # records.acted_record, awaiting its verdict
    approval: dict[str, Any] | None = None  # the question an approval state waits on
    stall_watch: dict[str, Any] = field(default_factory=dict)  # the stall breakers' counts
    abstentions: dict[str, int] = field(default_factory=dict)  # see StateFile
    sessions: dict[str, str] = field(default_factory=dict)  # Claude Code sessions by key
    session_agents: dict[str, str] = field(default_factory=dict)  # whose each session is
    limited_agents: dict[str, dict[str, Any]] = field(default_factory=dict)  # engine/rules/fallback
    agent_switches: list[dict[str, Any]] = field(default_factory=list)  # the latest switches
    attempt: dict[str, Any] | None = None  # engine/attempts.AttemptRecord (a wait survives)
    waited_ms: dict[str, int] = field(default_factory=dict)
    child: dict[str, Any] | None = None  # a running sub-loop's snapshot (engine/subloop.py)
    run_id: str | None = None  # the run's short id; None in a state file from before run ids
    worktree: dict[str, str] | None = None  # where a --worktree run runs (runs/place.py)
    guard: dict[str, Any] | None = None  # engine/kinds/guards.py: what a resume judges with
    pr: dict[str, Any] | None = None  # engine/rules/pulls.py: a `pr:` state's pull request
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> str:
        """What the run's files are named by: `<name>`, or `<name>@<id>` for a worktree run."""
        return files_key(self.loop_name, self.run_id, self.worktree is not None)

    @property
    def ref(self) -> str:
        """How a user names this run on the command line: `<name>@<id>` (`<name>` if no id)."""
        return run_key(self.loop_name, self.run_id)

    def to_dict(self) -> StateFile:
        """A JSON-ready dict (the state file's content)."""
        return {
            "schema_version": self.schema_version,
            "loop_name": self.loop_name,
            "status": self.status,
            "current_state": self.current_state,
            "iteration": self.iteration,
            "pass_states": self.pass_states,
            "entered": self.entered,
            "pass_pending": self.pass_pending,
            "captured": self.captured,
            "prev_result": self.prev_result,
            "last_result": self.last_result,
            "arrived_on_error": self.arrived_on_error,
            "caps": self.caps,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "elapsed_ms": self.elapsed_ms,
            "continuation_prompt": self.continuation,  # _FILE_KEYS
            "pid": self.pid,
            "pid_start": self.pid_start,
            "context": self.context,
            "loop_path": self.loop_path,
            "terminated_by": self.terminated_by,
            "error": self.error,
            "scope": self.scope,
            "cost_usd": self.cost_usd,
            "usage": self.usage,
            "action_result": self.action_result,
            "approval": self.approval,
            "stall_watch": self.stall_watch,
            "abstentions": self.abstentions,
            "sessions": self.sessions,
            "session_agents": self.session_agents,
            "limited_agents": self.limited_agents,
            "agent_switches": self.agent_switches,
            "attempt": self.attempt,
            "waited_ms": self.waited_ms,
            "child": self.child,
            "run_id": self.run_id,
            "worktree": self.worktree,
            "guard": self.guard,
            "pr": self.pr,
        }

    @classmethod
    def from_snapshot(cls, loop_name: str, snap: ExecutorSnapshot, **run: Any) -> LoopState:
        """The state of a run whose executor is at `snap`; `run` sets the other fields."""
        return cls(
            loop_name=loop_name, **{name: getattr(snap, name) for name in SNAPSHOT_FIELDS}, **run
        )

    def snapshot(self) -> ExecutorSnapshot:
        """What the executor needs to go on from this state (resume)."""
        return ExecutorSnapshot(**{name: getattr(self, name) for name in SNAPSHOT_FIELDS})

    @classmethod
    def from_dict(cls, data: Any, source: str = "state") -> LoopState:
        """Build from a parsed state file; raise CorruptStateError naming `source` if malformed."""
        try:
            return parse_state(data)
        except StateShapeError as exc:
            raise CorruptStateError(f"{source}: corrupt state file ({exc})") from None


# The fields a run state shares with the executor's snapshot: the same names in both.
SNAPSHOT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ExecutorSnapshot))
_FILE_KEYS = {"continuation": "continuation_prompt"}  # a field saved under an older key
# Each snapshot field and its key in the state file, in order (the journal of a run reads
# the executor's fields by name: FSMExecutor.dumps).
FILE_NAMES = tuple((name, _FILE_KEYS.get(name, name)) for name in SNAPSHOT_FIELDS)


def parse_state(data: Any) -> LoopState:
    """Check a parsed state file's shape and build the LoopState; raise StateShapeError."""
    if not isinstance(data, dict):
        raise StateShapeError(f"expected a JSON object, found {json_type(data)}")
    version = _get(data, "schema_version", (int,), SCHEMA_VERSION)
    if version > SCHEMA_VERSION:
        raise StateShapeError(
            f"schema_version {version} is newer than this ll-loop reads ({SCHEMA_VERSION})"
        )
    status = _get(data, "status", (str,))
    if status not in STATUSES:
        raise StateShapeError(f"unknown status {status!r}")
    iteration = _get(data, "iteration", (int,))
    elapsed_ms = _get(data, "elapsed_ms", (int,), 0)
    if iteration < 0 or elapsed_ms < 0:
        raise StateShapeError("'iteration' and 'elapsed_ms' cannot be negative")
    scope = _get(data, "scope", (list,), lambda: ["."])
    if not all(isinstance(item, str) for item in scope):
        raise StateShapeError("'scope' should be a list of strings")
    cost = _get(data, "cost_usd", (int, float), 0.0)
    usage = _get(data, "usage", (dict,), dict)
    if not is_finite(cost):  # NaN would never reach a budget; a 400-digit int breaks float()
        found = cost if isinstance(cost, float) else f"a {len(str(abs(cost)))}-digit number"
        raise StateShapeError(f"'cost_usd' should be a finite number, found {found}")
    if cost < 0 or not all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values()):
        raise StateShapeError("'cost_usd' cannot be negative and 'usage' holds token counts")
    sessions = _get(data, "sessions", (dict,), dict)
    if not all(isinstance(v, str) for v in sessions.values()):
        raise StateShapeError("'sessions' should map session keys to session ids (strings)")
    pass_states = _get(data, "pass_states", (list,), list)
    if not all(isinstance(item, str) for item in pass_states):
        raise StateShapeError("'pass_states' should be a list of strings")
    return LoopState(
        schema_version=version,
        loop_name=_get(data, "loop_name", (str,)),
        current_state=_get(data, "current_state", (str,)),
        iteration=iteration,
        pass_states=pass_states,
        entered=_get(data, "entered", (bool,), True),
        pass_pending=_get(data, "pass_pending", (bool,), False),
        status=Status(status),
        started_at=_get(data, "started_at", (str,)),
        updated_at=_get(data, "updated_at", (str,), data.get("started_at")),
        captured=_get(data, "captured", (dict,), dict),
        prev_result=_get(data, "prev_result", (dict, type(None)), None),
        last_result=_get(data, "last_result", (dict, type(None)), None),
        arrived_on_error=_get(data, "arrived_on_error", (str, type(None)), None),
        caps=_get(data, "caps", (dict,), dict),
        elapsed_ms=elapsed_ms,
        continuation=_get(data, "continuation_prompt", (str, type(None)), None),
        pid=_get(data, "pid", (int, type(None)), None),
        pid_start=_get(data, "pid_start", (int, type(None)), None),
        context=_get(data, "context", (dict,), dict),
        loop_path=_get(data, "loop_path", (str, type(None)), None),
        terminated_by=_get(data, "terminated_by", (str, type(None)), None),
        error=_get(data, "error", (str, type(None)), None),
        scope=scope,
        cost_usd=float(cost),
        usage=usage,
        action_result=_get(data, "action_result", (dict, type(None)), None),
        approval=_get(data, "approval", (dict, type(None)), None),
        stall_watch=_get(data, "stall_watch", (dict,), dict),
        abstentions=_get(data, "abstentions", (dict,), dict),
        sessions=sessions,
        session_agents=_strings(_get(data, "session_agents", (dict,), dict), "session_agents"),
        limited_agents=_limited(_get(data, "limited_agents", (dict,), dict)),
        agent_switches=_switches(_get(data, "agent_switches", (list,), list)),
        attempt=_get(data, "attempt", (dict, type(None)), None),
        waited_ms=_waited(_get(data, "waited_ms", (dict,), dict)),
        child=_get(data, "child", (dict, type(None)), None),
        run_id=_run_id(_get(data, "run_id", (str, type(None)), None)),
        worktree=_worktree(_get(data, "worktree", (dict, type(None)), None)),
        guard=_get(data, "guard", (dict, type(None)), None),
        pr=_get(data, "pr", (dict, type(None)), None),
    )


def _run_id(value: str | None) -> str | None:
    if value is not None and not RUN_ID_PATTERN.fullmatch(value):
        raise StateShapeError(f"'run_id' {value!r} is not a run id")
    return value


def _worktree(value: dict[str, Any] | None) -> dict[str, str] | None:
    if value is not None and not all(isinstance(v, str) for v in value.values()):
        raise StateShapeError("'worktree' should map names to strings")
    return value


def _strings(value: dict[str, Any], key: str) -> dict[str, str]:
    if not all(isinstance(v, str) for v in value.values()):
        raise StateShapeError(f"'{key}' should map names to strings")
    return value


def _limited(value: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if not all(isinstance(v, dict) for v in value.values()):
        raise StateShapeError("'limited_agents' should map agents to objects")
    return value


def _switches(value: list[Any]) -> list[dict[str, Any]]:
    if not all(isinstance(v, dict) for v in value):
        raise StateShapeError("'agent_switches' should be a list of objects")
    return value


def _waited(value: dict[str, Any]) -> dict[str, int]:
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
        raise StateShapeError("'waited_ms' holds whole milliseconds")
    return value
