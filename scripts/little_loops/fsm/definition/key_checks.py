"""Check a raw loop definition (plain YAML data): keys, types, enums and required fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.definition.model import (
    ACTION_TYPES,
    CURRENT_STATE_TOKEN,
    DEFAULT_EVALUATOR,
    DEFAULT_PROMPT_EVALUATOR,
    DIRECTIONS,
    OPERATORS,
    EvaluateConfig,
)
from little_loops.fsm.definition.value_checks import (
    Check,
    boolean,
    check_with,
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
)
from little_loops.fsm.errors import Severity, ValidationError
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES, SPECS
from little_loops.fsm.evaluators.spec import COMMON_KEYS, ERROR_VERDICT
from little_loops.fsm.suggest import did_you_mean

KeyPath = tuple[str | int, ...]
# A mapping read from YAML: keys are usually strings, but a file may have any scalar there.
YAMLMapping = Mapping[Any, object]

# The loop name names files under .loops/.running/: a plain file name that fits in 255 bytes.
_LOOP_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"


# The longest time an action may run or stay silent: the action runner waits with poll(),
# which takes at most 2**31 - 1 milliseconds (about 24.8 days).
MAX_ACTION_SECONDS = (2**31 - 1) // 1000
# The longest loop timeout and backoff: a year (a wait past threading.TIMEOUT_MAX fails).
MAX_LOOP_SECONDS = 365 * 24 * 60 * 60

_ACTION_SECONDS = number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")
_LOOP_SECONDS = number(0, MAX_LOOP_SECONDS, above=True, why="a year")
_WAIT_SECONDS = number(0, MAX_LOOP_SECONDS, why="a year")
# How `retry: {jitter: ...}` spreads the waits (Step Functions' JitterStrategy FULL|NONE).
JITTER_STRATEGIES: tuple[str, ...] = ("none", "full")


@check_with(
    {
        "anyOf": [
            {"type": ["string", "integer"]},
            {"type": "array", "items": {"type": ["string", "integer"]}, "minItems": 1},
        ]
    }
)
def retry_on(value: object) -> str | None:
    """`retry: {on: ...}`: a verdict, `error` or an exit code, or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not items:
        return "expected at least one verdict, `error` or exit code"
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int) or item == "":
            return f"expected verdicts, `error` or exit codes (whole numbers), got {describe(item)}"
    return None


@check_with({"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 1})
def wait_ladder(value: object) -> str | None:
    """`rate_limit: {ladder: ...}`: seconds of each successive wait."""
    if not isinstance(value, list) or not value:
        return f"expected a list of seconds, got {describe(value)}"
    for item in value:
        problem = _WAIT_SECONDS(item)
        if problem is not None:
            return problem
    return None


# --- the keys of each level; tests hold them equal to the dataclass fields -------------

# The paradigm of a loop written directly as states (and of a file with no `paradigm:`).
FSM_PARADIGM = "fsm"

# Loop settings: the one check of each, for FSM files and paradigm specs alike.
LOOP_SETTING_KEYS: dict[str, Check] = {
    "context": optional(mapping),
    "scope": optional(string_list),
    "max_iterations": integer(1),
    "backoff": optional(number(0, MAX_LOOP_SECONDS, why="a year")),
    "timeout": optional(_LOOP_SECONDS),
    "idle_timeout": optional(_ACTION_SECONDS),
    "max_cost_usd": optional(number(0, above=True)),
    "maintain": boolean,
    "llm": mapping,
    "retry": optional(mapping),
    "rate_limit": optional(mapping),
}
LOOP_KEYS: dict[str, Check] = {
    "name": pattern(_LOOP_NAME, "a name of at most 200 letters, digits, '.', '_' and '-'"),
    "initial": string,
    "states": mapping,
    "paradigm": optional(string),
    **LOOP_SETTING_KEYS,
}
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
    "retry": optional(mapping),
    "on_retry_exhausted": optional(string),
}
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
}
LLM_KEYS: dict[str, Check] = {
    "enabled": boolean,
    "model": string,
    "max_tokens": integer(1),
    "timeout": _ACTION_SECONDS,
}

RETRY_KEYS: dict[str, Check] = {
    "on": retry_on,
    "max_attempts": integer(1),
    "interval": _WAIT_SECONDS,
    "backoff_rate": number(1),
    "max_interval": optional(_LOOP_SECONDS),
    "jitter": one_of(JITTER_STRATEGIES),
}
RATE_LIMIT_KEYS: dict[str, Check] = {
    "ladder": wait_ladder,
    "max_wait": _LOOP_SECONDS,
}

REQUIRED_LOOP_KEYS: tuple[str, ...] = ("name", "initial", "states")
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = number_or_reference()


class _Checker:
    """Walks one definition, collecting problems with their key paths."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        name = data.get("name")
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
                hint = did_you_mean(word, choices) or f" ({whose}: {', '.join(choices)})"
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

    def llm(self, data: YAMLMapping) -> None:
        llm = data.get("llm")
        if isinstance(llm, Mapping):
            self.keys(llm, ("llm",), LLM_KEYS)
        retry = data.get("retry")
        if isinstance(retry, Mapping):
            self.retry(retry, ("retry",), None)
        rate_limit = data.get("rate_limit")
        if isinstance(rate_limit, Mapping):
            self.keys(rate_limit, ("rate_limit",), RATE_LIMIT_KEYS)

    def retry(self, data: YAMLMapping, path: KeyPath, verdicts: tuple[str, ...] | None) -> None:
        """A `retry:` block; its `on:` verdicts are checked against *verdicts* when known."""
        self.keys(data, path, RETRY_KEYS)
        on = data.get("on")
        if verdicts is None or retry_on(on) is not None:
            return
        known = (ERROR_VERDICT, *verdicts)
        for item in on if isinstance(on, list) else [on]:
            if isinstance(item, str) and item.removesuffix("_uncertain") not in known:
                hint = did_you_mean(item, known) or f" (it gives: {', '.join(known)})"
                self.add((*path, "on"), f"'{item}' is not a verdict of this state{hint}")

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
            if isinstance(state.get("evaluate"), Mapping):
                self.evaluate(state["evaluate"], (*path, "evaluate"))
            if isinstance(state.get("route"), Mapping):
                self.route(state["route"], (*path, "route"))
            if isinstance(state.get("retry"), Mapping):
                self.retry(state["retry"], (*path, "retry"), _verdicts_of(state))

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


def _verdicts_of(state: YAMLMapping) -> tuple[str, ...] | None:
    """The verdicts besides `error` a raw *state* can give, when its file says (else None)."""
    raw = state.get("evaluate")
    if raw is not None and not isinstance(raw, Mapping):
        return None
    if raw is None:
        action = state.get("action")
        kind = state.get("action_type")
        prompt = kind in ("prompt", "slash_command") or (
            kind is None and isinstance(action, str) and action.startswith("/")
        )
        raw = {"type": DEFAULT_PROMPT_EVALUATOR if prompt and action else DEFAULT_EVALUATOR}
    kind = raw.get("type")
    spec = SPECS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        return None
    try:
        return spec.verdicts_for(EvaluateConfig.from_dict(dict(raw)))
    except TypeError:
        return None


def check_definition(data: Mapping[str, Any]) -> list[ValidationError]:
    """Every problem in the raw definition *data*, in document order."""
    checker = _Checker(data)
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
    return checker.problems
