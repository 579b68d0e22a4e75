"""Check a raw loop definition (plain YAML data): keys, types, enums and required fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from little_loops.fsm.actions.registry import AGENTS, BY_OPTIONS_KEY, KINDS, kind_of
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition import route_keys, runtime_keys
from little_loops.fsm.definition.agent_checks import AGENTS_CHECK, agent_problems
from little_loops.fsm.definition.agents import AGENT_CHECK
from little_loops.fsm.definition.approval_checks import approval_problems
from little_loops.fsm.definition.commit_checks import COMMIT_MODE, checkpoint_key_problems
from little_loops.fsm.definition.learning import LEARNING_STATE_KEYS
from little_loops.fsm.definition.loop_files import LOOP_NAME_PATTERN
from little_loops.fsm.definition.metadata import MORE_LOOP_KEYS, MORE_STATE_KEYS, listed
from little_loops.fsm.definition.model import (
    ACTION_TYPES,
    APPROVAL,
    CURRENT_STATE_TOKEN,
    DIRECTIONS,
    OPERATORS,
    SESSION_MODES,
    TERMINAL_OUTCOMES,
)
from little_loops.fsm.definition.parameters import PARAMETERS_CHECK, parameter_problems
from little_loops.fsm.definition.retry_checks import RATE_LIMIT_KEYS, RETRY_KEYS, unknown_verdicts
from little_loops.fsm.definition.reuse_keys import REUSE_LOOP_CHECKS, REUSE_STATE_CHECKS
from little_loops.fsm.definition.run_keys import RUN_LOOP_KEYS, RUN_STATE_KEYS
from little_loops.fsm.definition.subloop_checks import key_problems as subloop_key_problems
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES, SPECS
from little_loops.fsm.evaluators.spec import COMMON_KEYS
from little_loops.fsm.facts.errors import Severity, ValidationError
from little_loops.fsm.facts.outcomes import NOTIFY_OUTCOMES
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import (
    MAX_ACTION_SECONDS,
    MAX_LOOP_SECONDS,
    URL,
    Check,
    boolean,
    describe,
    integer,
    judge_schema,
    mapping,
    number,
    number_or_reference,
    one_of,
    optional,
    pattern,
    scalar,
    string,
    string_list,
    text,
    words,
)

KeyPath = tuple[str | int, ...]
# A mapping read from YAML: keys are usually strings, but a file may have any scalar there.
YAMLMapping = Mapping[Any, object]

# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"

_ACTION_SECONDS = number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")
_LOOP_SECONDS = number(0, MAX_LOOP_SECONDS, above=True, why="a year")

# --- the keys of each level; tests hold them equal to the dataclass fields -------------

# The options block of each action kind that has one (its `options_key`), at the loop and in a
# state: the keys of each, from the kind's option table; null in a state unsets the loop's.
OPTION_KEYS: dict[str, dict[str, Check]] = {
    key: {name: optional(option.check) for name, option in spec.options.items()}
    for key, spec in BY_OPTIONS_KEY.items()
}
_OPTION_BLOCKS: dict[str, Check] = {key: optional(mapping) for key in OPTION_KEYS}

# The paradigm of a loop written directly as states (and of a file with no `paradigm:`).
FSM_PARADIGM = "fsm"

# Loop settings: the one check of each, for FSM files and paradigm specs alike.
LOOP_SETTING_KEYS: dict[str, Check] = {
    "context": optional(mapping),
    "parameters": optional(PARAMETERS_CHECK),
    "scope": optional(string_list),
    "max_iterations": integer(1),
    "backoff": optional(number(0, MAX_LOOP_SECONDS, why="a year")),
    "timeout": optional(_LOOP_SECONDS),
    "idle_timeout": optional(_ACTION_SECONDS),
    "max_cost_usd": optional(number(0, above=True)),
    "maintain": boolean,
    "worktree": boolean,
    "llm": mapping,
    "archive": mapping,
    "stall": optional(mapping),
    **_OPTION_BLOCKS,
    "agent": optional(AGENT_CHECK),
    "agents": optional(AGENTS_CHECK),
    "notify": optional(mapping),
    "retry": optional(mapping),
    "rate_limit": optional(mapping),
    **runtime_keys.LOOP_RUNTIME_KEYS,
    "commit": COMMIT_MODE,
}
LOOP_KEYS: dict[str, Check] = {
    "name": pattern(LOOP_NAME_PATTERN, "a name of at most 200 letters, digits, '.', '_' and '-'"),
    "initial": string,
    "states": mapping,
    "paradigm": optional(string),
    **LOOP_SETTING_KEYS,
    **route_keys.LOOP_LIMIT_KEYS,
    **REUSE_LOOP_CHECKS,
    **RUN_LOOP_KEYS,
    **MORE_LOOP_KEYS,
}
# How a paradigm's generated action states run (an approval asks, it does not run anything).
RUN_ACTION_TYPE = optional(one_of(tuple(t for t in ACTION_TYPES if t != APPROVAL)))
STATE_KEYS: dict[str, Check] = {
    "action": optional(text),
    "action_type": optional(one_of(ACTION_TYPES)),
    "capture": optional(pattern(_CAPTURE_NAME, "a name of letters, digits, '_' and '-'")),
    "timeout": optional(_ACTION_SECONDS),
    "idle_timeout": optional(_ACTION_SECONDS),
    "evaluate": optional(mapping),
    "route": optional(mapping),
    "on_success": optional(string),
    "on_failure": optional(string),
    "on_error": optional(string),
    "next": optional(string),
    "terminal": boolean,
    "on_maintain": optional(string),
    "stall": optional(mapping),
    "on_timeout": optional(string),
    **_OPTION_BLOCKS,
    "agent": optional(AGENT_CHECK),
    "session": one_of(SESSION_MODES),
    "session_key": optional(string),
    "retry": optional(mapping),
    "on_retry_exhausted": optional(string),
    **runtime_keys.STATE_RUNTIME_KEYS,
    "loop": optional(string),
    "with": optional(mapping),
    "outcome": optional(one_of(TERMINAL_OUTCOMES)),
    "commit": optional(boolean),
    "rollback": boolean,
    **route_keys.STATE_ROUTE_KEYS,
    **REUSE_STATE_CHECKS,
    **RUN_STATE_KEYS,
    **MORE_STATE_KEYS,
    **LEARNING_STATE_KEYS,
}
# `stall:` of the loop and of a state (no_change_passes is the loop's alone: it counts passes).
STALL_KEYS: dict[str, Check] = {
    "same_result": optional(integer(1)),
    "no_change_passes": optional(integer(1)),
    "max_visits": optional(integer(1)),
    "on_stall": optional(string),
}
LOOP_ONLY_STALL_KEYS: tuple[str, ...] = ("no_change_passes",)
EVALUATE_KEYS: dict[str, Check] = {
    "type": one_of(EVALUATOR_TYPES),
    "operator": optional(one_of(OPERATORS)),
    "target": optional(scalar),
    "tolerance": optional(number_or_reference(0)),
    "pattern": optional(string),
    "negate": boolean,
    "path": optional(string),
    "previous": optional(text),
    "direction": one_of(DIRECTIONS),
    "prompt": optional(text),
    "schema": optional(judge_schema),
    "min_confidence": number(0, 1),
    "uncertain_suffix": boolean,
    "source": optional(text),
    **runtime_keys.EVALUATE_RUNTIME_KEYS,
}
LLM_KEYS: dict[str, Check] = {
    "enabled": boolean,
    "model": string,
    "max_tokens": integer(1),
    "timeout": _ACTION_SECONDS,
    "backend": string,  # one of JUDGE_BACKENDS or an agent's name: agent_checks.py says which
}
# State keys that only an action of some kinds can use (an options block, `session:` ...), each
# with the kinds that can.
KIND_STATE_KEYS: dict[str, tuple[ActionKindSpec, ...]] = {
    key: tuple(spec for spec in KINDS.values() if key in spec.state_keys)
    for spec in KINDS.values()
    for key in spec.state_keys
}

# The run archive (`.loops/.history/`): how many finished runs of the loop to keep, how long.
ARCHIVE_KEYS: dict[str, Check] = {
    "keep": integer(0),
    "max_age_days": optional(number(0, MAX_LOOP_SECONDS / 86400, above=True, why="a year")),
}

# Who hears that a run ended: a command and/or a webhook, for some outcomes (default: all).
NOTIFY_KEYS: dict[str, Check] = {
    "command": optional(string),
    "webhook": optional(URL),
    "on": optional(words(tuple(NOTIFY_OUTCOMES))),
    "timeout": number(0, 600, above=True, why="ten minutes"),
    "retries": integer(0, 10),
}
# The settings mappings of a loop and the keys of each.
_SETTINGS: tuple[tuple[str, dict[str, Check]], ...] = (
    ("llm", LLM_KEYS),
    ("archive", ARCHIVE_KEYS),
    ("stall", STALL_KEYS),
    *OPTION_KEYS.items(),
    ("notify", NOTIFY_KEYS),
    ("retry", RETRY_KEYS),
    ("rate_limit", RATE_LIMIT_KEYS),
)

REQUIRED_LOOP_KEYS: tuple[str, ...] = ("name", "initial", "states")
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = number_or_reference()


class _Checker:
    """Walks one definition, collecting problems with their key paths."""

    def __init__(self, data: Mapping[str, Any], project_agents: Sequence[str] = ()) -> None:
        self.project_agents, name = project_agents, data.get("name")
        self.loop = name if isinstance(name, str) and name else None
        self.problems: list[ValidationError] = []

    def add(
        self, path: KeyPath, message: str, severity: Severity = "error", key: str | None = None
    ) -> None:
        self.problems.append(ValidationError.at(self.loop, path, message, severity, key))

    def keys(
        self,
        data: YAMLMapping,
        path: KeyPath,
        allowed: dict[str, Check],
        suggested: tuple[str, ...] | None = None,
        whose: str = "allowed",
    ) -> None:
        """Unknown keys and the type of each known one; an unknown key is compared with
        *suggested* (default: every allowed key), listed as `(whose: ...)` when none is close."""
        choices = tuple(allowed) if suggested is None else suggested
        for key, value in data.items():
            if not isinstance(key, str) or key not in allowed:
                word = str(key)
                hint = did_you_mean(word, choices) or f" ({whose}: {', '.join(listed(choices))})"
                self.add((*path, word), f"unknown key{hint}")
                continue
            problem = allowed[key](value)
            if problem is not None:
                self.add((*path, key), problem)

    def required(self, data: YAMLMapping, path: KeyPath, keys: tuple[str, ...]) -> None:
        for key in keys:
            if data.get(key) is None:
                self.add(path, f"missing required key '{key}'", key=key)

    def loop_level(self, data: YAMLMapping) -> None:
        self.keys(data, (), LOOP_KEYS)
        self.required(data, (), REQUIRED_LOOP_KEYS)
        states = data.get("states")
        if isinstance(states, Mapping):
            self.states(states)
        self.llm(data)
        self.parameters(data)
        for path, message, severity in agent_problems(data, self.project_agents):
            self.add(path, message, severity)

    def parameters(self, data: YAMLMapping) -> None:
        params = data.get("parameters")
        if isinstance(params, Mapping):
            for path, message in parameter_problems(params, data.get("context")):
                self.add(("parameters", *path), message)

    def llm(self, data: YAMLMapping) -> None:
        """The keys of the loop's mapping settings (`llm:`, `archive:`, `notify:` ...)."""
        for key, allowed in _SETTINGS:
            settings = data.get(key)
            if isinstance(settings, Mapping):
                self.keys(settings, (key,), allowed)
        notify = data.get("notify")
        told = ("command", "webhook")
        if isinstance(notify, Mapping) and all(notify.get(key) is None for key in told):
            self.add(("notify",), "expected a command or a webhook (or both) to notify")

    def kind_state(self, state: YAMLMapping, path: KeyPath) -> None:
        """A key only some action kinds use (an options block, `session:` ...) only on a
        state of one of them; a kind's options block holds options of its table."""
        for key, allowed in OPTION_KEYS.items():
            block = state.get(key)
            if isinstance(block, Mapping):
                self.keys(block, (*path, key), allowed)
        action = state.get("action")
        kind = kind_of(state.get("action_type"), action)
        own = tuple(AGENTS.values()) if kind.agent is not None else (kind,)  # a prompt: any agent
        for key, kinds in KIND_STATE_KEYS.items():
            if state.get(key) is None or any(spec in kinds for spec in own):
                continue
            why = f"this state's action {kind.runs_as}" if action else "this state has no action"
            self.add((*path, key), f"only {kinds[0].only_states} ({why})")

    def states(self, states: YAMLMapping) -> None:
        if not states:
            self.add(("states",), "expected at least one state")
        for name, state in states.items():
            path: KeyPath = ("states", str(name))
            if not isinstance(name, str):
                self.add(path, f"a state name must be a string, got {describe(name)} (quote it)")
                continue
            if name == CURRENT_STATE_TOKEN:
                self.add(path, f"'{name}' means 'this state again' and cannot name a state")
            if not isinstance(state, Mapping):
                self.add(path, f"expected a mapping of state settings, got {describe(state)}")
                continue
            self.keys(state, path, STATE_KEYS)
            self.kind_state(state, path)
            if isinstance(state.get("evaluate"), Mapping):
                self.evaluate(state["evaluate"], (*path, "evaluate"))
            if isinstance(state.get("route"), Mapping):
                self.route(state["route"], (*path, "route"))
            stall = state.get("stall")
            if isinstance(stall, Mapping):
                self.keys(stall, (*path, "stall"), STALL_KEYS)
                for key in LOOP_ONLY_STALL_KEYS:
                    if key in stall:
                        self.add((*path, "stall", key), "only at the loop level (it counts passes)")
            for where, problem in approval_problems(state):
                self.add((*path, *where), problem)
            for at, why in subloop_key_problems(state):
                self.add((*path, *at), why)
            for at, why in (*checkpoint_key_problems(state), *route_keys.spelling_problems(state)):
                self.add((*path, *at), why)
            retry = state.get("retry")
            if isinstance(retry, Mapping):
                self.keys(retry, (*path, "retry"), RETRY_KEYS)
                for problem in unknown_verdicts(retry, state):
                    self.add((*path, "retry", "on"), problem)

    def evaluate(self, data: YAMLMapping, path: KeyPath) -> None:
        kind = data.get("type")
        # A list or map is not even hashable; a wrong type is reported by keys().
        spec = SPECS.get(kind) if isinstance(kind, str) else None
        if spec is None:
            self.keys(data, path, EVALUATE_KEYS)
            self.required(data, path, ("type",))
            return
        # An unknown key is most likely a misspelling of one this evaluator reads.
        self.keys(data, path, EVALUATE_KEYS, (*COMMON_KEYS, *spec.keys), f"{kind} reads")
        needed = spec.required
        for key in needed:
            if data.get(key) is None:
                others = " and ".join(needed)
                self.add(
                    path,
                    f"missing required key '{key}' (the {kind} evaluator needs {others})",
                    key=key,
                )
        for unused in data:
            if unused in EVALUATE_KEYS and unused not in (*spec.keys, *COMMON_KEYS):
                self.add((*path, str(unused)), f"not used by the {kind} evaluator", "warning")
        target = data.get("target")
        if spec.numeric_target and target is not None:
            problem = NUMERIC_TARGET(target)
            if problem is not None and scalar(target) is None:
                self.add((*path, "target"), problem)

    def route(self, data: YAMLMapping, path: KeyPath) -> None:
        if not data:
            self.add(path, "expected at least one 'verdict: state' entry")
        for verdict, target in data.items():
            if not isinstance(verdict, str):
                self.add(
                    (*path, str(verdict)),
                    f"a verdict must be a string, got {describe(verdict)} (quote it)",
                )
                continue
            if not verdict:
                self.add((*path, verdict), "a verdict must be a non-empty string")
            problem = string(target)
            if problem is not None:
                self.add((*path, verdict), problem.replace("a string", "a state name", 1))


def check_definition(
    data: Mapping[str, Any], project_agents: Sequence[str] = ()
) -> list[ValidationError]:
    """Every problem in the raw definition *data*, in document order; *project_agents*
    names the custom agents of its project (`.loops/agents.yaml`)."""
    checker = _Checker(data, project_agents)
    checker.loop_level(data)
    return checker.problems


def check_loop_settings(
    data: Mapping[str, Any], checks: Mapping[str, Check] = LOOP_SETTING_KEYS
) -> list[ValidationError]:
    """Problems in the loop settings of *data* (`checks` names them); other keys are skipped.

    Paradigm specs use this, so a wrong setting reads the same in a spec as in an FSM file.
    """
    checker = _Checker(data)
    checker.keys({key: value for key, value in data.items() if key in checks}, (), dict(checks))
    checker.llm(data)
    if "parameters" in checks:
        checker.parameters(data)
    return checker.problems
