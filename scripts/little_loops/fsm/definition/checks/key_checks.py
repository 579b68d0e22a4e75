"""Check a raw loop definition (plain YAML data): keys, types, enums and required fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from little_loops.fsm.actions.registry import AGENTS, KINDS, entry_of
from little_loops.fsm.definition.checks.features import AGENT_CHECKS, STATE_CHECKS
from little_loops.fsm.definition.checks.key_tables import (
    _SETTINGS,
    EVALUATE_KEYS,
    KIND_STATE_KEYS,
    LOOP_KEYS,
    LOOP_ONLY_STALL_KEYS,
    LOOP_SETTING_KEYS,
    NUMERIC_TARGET,
    OPTION_KEYS,
    REQUIRED_LOOP_KEYS,
    STALL_KEYS,
    STATE_KEYS,
)
from little_loops.fsm.definition.model import route_keys
from little_loops.fsm.definition.model.evaluate_keys import REQUIRED_KEYS as REQUIRED_EVALUATE_KEYS
from little_loops.fsm.definition.model.lint_flags import UNKNOWN_EVALUATE_KEY, UNKNOWN_KEY
from little_loops.fsm.definition.model.metadata import listed
from little_loops.fsm.definition.model.parameters import parameter_problems
from little_loops.fsm.definition.model.pr_keys import (
    PR_CHECKS,
    PR_KEY,
    REQUIRED_PR_KEYS,
    pr_state_problems,
)
from little_loops.fsm.definition.model.retry_keys import (
    RETRY_KEYS,
    unknown_verdicts,
    verdicts_no_state_gives,
)
from little_loops.fsm.definition.model.spellings import written_twice
from little_loops.fsm.definition.model.typed import (
    CURRENT_STATE_TOKEN,
)
from little_loops.fsm.evaluators.registry import SPECS
from little_loops.fsm.evaluators.spec import COMMON_KEYS
from little_loops.fsm.facts.errors import Severity, ValidationError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import (
    Check,
    UnknownKey,
    describe,
    scalar,
    string,
)

KeyPath = tuple[str | int, ...]
# A mapping read from YAML: keys are usually strings, but a file may have any scalar there.
YAMLMapping = Mapping[Any, object]


# The keys `kind_state` reads in a state: its options blocks and the other keys of some kinds.
_KIND_KEYS = frozenset((*OPTION_KEYS, *KIND_STATE_KEYS))


class _Checker:
    """Walks one definition, collecting problems with their key paths."""

    def __init__(self, data: Mapping[str, Any], project_agents: Sequence[str] = ()) -> None:
        self.project_agents, name = project_agents, data.get("name")
        self.loop = name if isinstance(name, str) and name else None
        self.problems: list[ValidationError] = []

    def add(
        self,
        path: KeyPath,
        message: str,
        severity: Severity = "error",
        key: str | None = None,
        check: str | None = None,
    ) -> None:
        self.problems.append(ValidationError.at(self.loop, path, message, severity, key, check))

    def keys(
        self,
        data: YAMLMapping,
        path: KeyPath,
        allowed: dict[str, Check],
        suggested: tuple[str, ...] | None = None,
        whose: str = "allowed",
        unknown: str | None = None,
    ) -> None:
        """Unknown keys and the type of each known one; an unknown key is compared with
        *suggested* (default: every allowed key), listed as `(whose: ...)` when none is close."""
        choices = tuple(allowed) if suggested is None else suggested
        for key, value in data.items():
            if not isinstance(key, str) or key not in allowed:
                word = str(key)
                hint = did_you_mean(word, choices) or f" ({whose}: {', '.join(listed(choices))})"
                self.add((*path, word), f"unknown key{hint}", check=unknown)
                continue
            problem = allowed[key](value)
            if problem is not None:  # an unknown key inside its block: *unknown*'s too
                self.add((*path, key), problem, check=_inner(problem, unknown))

    def required(self, data: YAMLMapping, path: KeyPath, keys: tuple[str, ...]) -> None:
        for key in keys:
            if data.get(key) is None:
                self.add(path, f"missing required key '{key}'", key=key)

    def loop_level(self, data: YAMLMapping) -> None:
        self.keys(data, (), LOOP_KEYS, unknown=UNKNOWN_KEY)
        self.required(data, (), REQUIRED_LOOP_KEYS)
        states = data.get("states")
        if isinstance(states, Mapping):
            self.states(states)
            retry = data.get("retry")
            if retry is not None and isinstance(retry, Mapping):
                for problem in verdicts_no_state_gives(retry, states):
                    self.add(("retry", "on"), problem)
        self.llm(data)
        self.parameters(data)
        for problem in AGENT_CHECKS.at_file(data, self.project_agents):
            self.add(problem.path, problem.message, problem.severity, check=problem.check)

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
                self.keys(settings, (key,), OPTION_KEYS[key] if allowed is None else allowed)
        notify = data.get("notify")
        told = ("command", "webhook")
        if isinstance(notify, Mapping) and all(notify.get(key) is None for key in told):
            self.add(("notify",), "expected a command or a webhook (or both) to notify")

    def kind_state(self, state: YAMLMapping, path: KeyPath) -> None:
        """A key only some action kinds use (an options block, `session:` ...) only on a
        state of one of them; a kind's options block holds options of its table."""
        if _KIND_KEYS.isdisjoint(state):
            return  # (most states have none of these keys: passed over at once)
        for key in OPTION_KEYS:
            block = state.get(key)
            if block is not None and isinstance(block, Mapping):
                self.keys(block, (*path, key), OPTION_KEYS[key])
        action = state.get("action")
        entry = entry_of(state.get("action_type"), action)
        own = tuple(AGENTS) if entry.agent else (entry.name,)  # a prompt: any agent
        for key, kinds in KIND_STATE_KEYS.items():
            if state.get(key) is None or any(name in kinds for name in own):
                continue
            runs_as = KINDS[entry.name].runs_as
            why = f"this state's action {runs_as}" if action else "this state has no action"
            self.add((*path, key), f"only {KINDS[kinds[0]].only_states} ({why})")

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
            self.keys(state, path, STATE_KEYS, unknown=UNKNOWN_KEY)
            self.kind_state(state, path)
            evaluate, route, stall = state.get("evaluate"), state.get("route"), state.get("stall")
            if evaluate is not None and isinstance(evaluate, Mapping):
                self.evaluate(evaluate, (*path, "evaluate"))
            if route is not None and isinstance(route, Mapping):
                self.route(route, (*path, "route"))
            if stall is not None and isinstance(stall, Mapping):
                self.keys(stall, (*path, "stall"), STALL_KEYS)
                for key in LOOP_ONLY_STALL_KEYS:
                    if key in stall:
                        self.add((*path, "stall", key), "only at the loop level (it counts passes)")
            for feature in STATE_CHECKS:
                for at, why in feature.at_state(state):
                    self.add((*path, *at), why)
            for at, why in (*written_twice(state), *route_keys.route_key_problems(state)):
                self.add((*path, *at), why)
            pr = state.get(PR_KEY)
            if pr is not None and isinstance(pr, Mapping):
                self.keys(pr, (*path, PR_KEY), PR_CHECKS)
                self.required(pr, (*path, PR_KEY), REQUIRED_PR_KEYS)
            for key, why in pr_state_problems(state):
                self.add((*path, key), why)
            retry = state.get("retry")
            if retry is not None and isinstance(retry, Mapping):
                self.keys(retry, (*path, "retry"), RETRY_KEYS)
                for problem in unknown_verdicts(retry, state):
                    self.add((*path, "retry", "on"), problem)

    def evaluate(self, data: YAMLMapping, path: KeyPath) -> None:
        kind = data.get("type")
        # A list or map is not even hashable; a wrong type is reported by keys().
        spec = SPECS.get(kind) if isinstance(kind, str) else None
        if spec is None:
            self.keys(data, path, EVALUATE_KEYS, unknown=UNKNOWN_EVALUATE_KEY)
            self.required(data, path, REQUIRED_EVALUATE_KEYS)
            return
        # An unknown key is most likely a misspelling of one this evaluator reads.
        reads = (*COMMON_KEYS, *spec.keys)
        self.keys(data, path, EVALUATE_KEYS, reads, f"{kind} reads", UNKNOWN_EVALUATE_KEY)
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


def _inner(problem: str, unknown: str | None) -> str | None:
    """The check of *problem*: *unknown*'s when it is an unknown key inside the value."""
    return unknown if isinstance(problem, UnknownKey) else None


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
