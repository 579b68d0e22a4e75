"""Check a loop model as a state machine: targets exist, every state can move on or end."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation
from little_loops.fsm.definition.checks.features import STALL
from little_loops.fsm.definition.checks.prose import sentence_warning
from little_loops.fsm.definition.checks.route_checks import route_problems
from little_loops.fsm.definition.graph.edges import LoopGraph, closure, loop_graph, reverse
from little_loops.fsm.definition.graph.verdicts import StateVerdicts, state_verdicts
from little_loops.fsm.definition.model.circuit_keys import TARGET_KEY as CIRCUIT_KEY
from little_loops.fsm.definition.model.fanout_keys import fan_out_of
from little_loops.fsm.definition.model.lint_flags import (
    NOTHING_TO_EVALUATE,
    ROUTE_NEVER_GIVEN,
    UNDEFINED_CAPTURE,
    UNDEFINED_CONTEXT,
    UNQUOTABLE_REFERENCE,
)
from little_loops.fsm.definition.model.metadata import runner_keys
from little_loops.fsm.definition.model.route_keys import EXTRA_SHORTHANDS
from little_loops.fsm.definition.model.typed import (
    CURRENT_STATE_TOKEN,
    DEFAULT_EVALUATOR,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.evaluators.registry import SPECS, interpolated_fields, needs_llm
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import (
    InterpolationError,
    LoopDefinitionError,
    Severity,
    ValidationError,
)
from little_loops.fsm.facts.suggest import closest, did_you_mean
from little_loops.fsm.values.interpolation import context_problems
from little_loops.fsm.values.references import (
    NAMESPACES,
    OPEN,
    checked_references,
    near_misses,
)
from little_loops.fsm.values.shellquote import (
    escape_problems,
    interpreted,
    one_word_lists,
    too_long,
    unquotable,
)

KeyPath = tuple[str | int, ...]

# The fields of the namespaces whose shape is fixed (see interpolation.InterpolationContext).
_FIXED_FIELDS: dict[str, tuple[str, ...]] = {
    "state": ("name", "iteration"),
    "loop": ("name", "started_at", "elapsed_ms", "elapsed"),
}
_SHORTHAND = ("on_success", "on_failure", "on_error", *(key for _, key in EXTRA_SHORTHANDS))
# Unknown targets get a did-you-mean for this many distinct names; the states are listed
# when there are no more than this many.
_SUGGESTED_NAMES = 20
_LISTED_STATES = 20


def captured_names(fsm: FSMLoop) -> set[str]:
    """The names a `${captured.NAME...}` can read: each `capture:`, and each sub-loop state's
    own name (its child's `terminated_by`; with `with:` or `context_passthrough`, also the
    child's captures, `${captured.STATE.CAPTURE.output}`), and each fan-out state's name
    (definition/model/fanout.py: its verdict, merged branches and each branch's figures)."""
    names = {s.capture for s in fsm.states.values() if s.capture is not None}
    subloops = {name for name, s in fsm.states.items() if s.loop is not None}
    return names | subloops | {name for name, s in fsm.states.items() if fan_out_of(s)}


def _is_dynamic(target: str) -> bool:
    """A target with a `${...}` reference is only known at run time."""
    return OPEN in target


class _GraphChecker:
    def __init__(self, fsm: FSMLoop, graph: LoopGraph | None = None) -> None:
        self.fsm = fsm
        self.problems: list[ValidationError] = []
        self.graph = loop_graph(fsm) if graph is None else graph
        self.written = self.graph.written
        self.hints: dict[str, str] = {}  # unknown target -> what not_a_state adds
        # What ${context.X} may name: a context value or a parameter (given at run time).
        self.context_keys = [*map(str, fsm.context), *fsm.parameters]
        self.filled_keys = runner_keys(bool(fsm.parameters), fsm.input_key, fsm.required_inputs)
        # The context values that are lists: one word each in a shell action.
        self.lists = {str(k) for k, v in fsm.context.items() if isinstance(v, list)}
        self.lists |= {name for name, spec in fsm.parameters.items() if spec.type == "list"}

    def add(
        self,
        path: KeyPath,
        message: str,
        severity: Severity = "error",
        key: str | None = None,
        check: str | None = None,
    ) -> None:
        self.problems.append(
            ValidationError.at(self.fsm.name or None, path, message, severity, key, check)
        )

    def not_a_state(self, name: str) -> str:
        hint = self.hints.get(name)
        if hint is None:
            # A did-you-mean compares the name with every state: only for the first few
            # names, so a big file full of typos is not checked in states x typos.
            states = self.fsm.states
            close = did_you_mean(name, states) if len(self.hints) < _SUGGESTED_NAMES else ""
            listed = f" (states: {', '.join(states)})" if len(states) <= _LISTED_STATES else ""
            hint = self.hints[name] = close or listed
        return f"'{name}' is not a state{hint}"

    def run(self) -> list[ValidationError]:
        fsm = self.fsm
        if fsm.initial not in fsm.states:
            self.add(("initial",), self.not_a_state(fsm.initial))
        stall_target = fsm.stall.on_stall if fsm.stall is not None else None
        if stall_target is not None and stall_target not in fsm.states:
            self.add(("stall", "on_stall"), self.not_a_state(stall_target))
        breaker = fsm.circuit.target if fsm.circuit is not None else None
        if breaker is not None and breaker not in fsm.states:
            self.add(CIRCUIT_KEY, self.not_a_state(breaker))
        if not fsm.terminal_states():
            self.add(("states",), "no terminal state (mark at least one with terminal: true)")
        for name, state in fsm.states.items():
            self.state(name, state)
            self.never_given(name, state)
        for path, message, severity in (*route_problems(fsm), *STALL.at_model(fsm)):
            self.add(path, message, severity)
        self.reachability()
        self.references()
        return self.problems

    def targets(self, path: KeyPath, name: str) -> None:
        """Each target *name* writes is a state, `$current`, or known only at run time."""
        for transition in self.written[name]:
            target = transition.target
            known = target == CURRENT_STATE_TOKEN or _is_dynamic(target)
            if not known and target not in self.fsm.states:
                self.add((*path, *transition.key), self.not_a_state(target))

    def way_out(self, path: KeyPath, state: StateConfig) -> None:
        """A terminal state writes no route; any other state writes at least one."""
        if state.terminal:
            for key in ("next", "route", *_SHORTHAND):
                if getattr(state, key) is not None:
                    self.add(
                        (*path, key),
                        "contradicts terminal: true (a terminal state ends the loop)",
                    )
        elif (
            state.next is None
            and state.route is None
            and not any(getattr(state, key) is not None for key in _SHORTHAND)
        ):
            self.add(
                path,
                "dead end: not terminal and no way out "
                "(add next, route, on_success/on_failure/on_error, or terminal: true)",
            )

    def state(self, name: str, state: StateConfig) -> None:
        path: KeyPath = ("states", name)
        self.targets(path, name)
        self.way_out(path, state)
        if not state.terminal:
            if state.next is not None:
                # Only an error route is used with next: when the action cannot run.
                for key in ("on_success", "on_failure", "on_partial", "on_blocked"):
                    if getattr(state, key) is not None:
                        self.add(
                            (*path, key),
                            f"never used: next always moves on to '{state.next}' (only "
                            "on_error is used, when the action fails)",
                            "warning",
                        )
                if state.route is not None and state.route.routes.keys() - {"error"}:
                    self.add(
                        (*path, "route"),
                        f"never used but for error/_error: next always moves on to "
                        f"'{state.next}' unless the action fails",
                        "warning",
                    )
            elif state.route is not None:
                for key in _SHORTHAND:
                    if getattr(state, key) is not None:
                        self.add(
                            (*path, key), "ignored: route decides where this state goes", "warning"
                        )
        self.idle_timeout(path, state)
        if state.on_maintain is not None:
            if not state.terminal:
                self.add((*path, "on_maintain"), "only used by terminal states", "warning")
            elif not self.fsm.maintain:
                self.add(
                    (*path, "on_maintain"),
                    "unused: the loop does not set maintain: true",
                    "warning",
                )
        if state.evaluate is not None and state.action is None and state.evaluate.source is None:
            self.add(
                (*path, "evaluate"),
                "nothing to evaluate: the state has no action and evaluate has no source",
                check=NOTHING_TO_EVALUATE,
            )
        action = state.action or ""
        first_word = action.split(maxsplit=1)[0] if action.strip() else ""
        if state.action_type is None and first_word.startswith("/") and "/" in first_word[1:]:
            self.add(
                (*path, "action"),
                f"'{first_word}' looks like a file path, but an action starting with '/' "
                "is sent to Claude as a slash command; add action_type: shell to run it in bash",
                "warning",
            )
        elif (prose := sentence_warning(state)) is not None:
            self.add((*path, "action"), prose, "warning")

    def idle_timeout(self, path: KeyPath, state: StateConfig) -> None:
        """An `idle_timeout:` shorter than its action's kind stays quiet for (only a state
        with one asks its kind: that may import the kind's module)."""
        idle = state.idle_timeout
        if idle is None or not state.action:
            return
        kind = self.kind_for(state)
        quiet = kind.quiet_seconds
        if quiet is not None and idle < quiet:
            self.add(
                (*path, "idle_timeout"),
                f"{idle:g}s is short for a {kind.shown_as} action: {kind.quiet_reason}; "
                f"{quiet:g}s or more is safer",
                "warning",
            )

    def never_given(self, name: str, state: StateConfig) -> None:
        """Route keys the state's evaluator can never give: a typo (`sucess:`) or a route
        that can never be taken."""
        found = state_verdicts(self.fsm, state) if state.route is not None else None
        keys = never_given_keys(state, found)
        if found is None or found.verdicts is None or not keys:
            return
        gives = ", ".join(dict.fromkeys([*found.verdicts, ERROR_VERDICT]))
        for key in keys:
            close = closest(key, found.verdicts)
            hint = f"; did you mean '{close}'?" if close else ""
            self.add(
                ("states", name, "route", key),
                f"route key '{key}' is never given by {found.source} (it gives {gives}){hint}",
                check=ROUTE_NEVER_GIVEN,
            )

    def reachability(self) -> None:
        graph, dynamic = self.graph.successor_sets()
        if dynamic or self.fsm.initial not in graph:
            return
        reached = closure([self.fsm.initial], graph)
        for name in self.fsm.states:
            if name not in reached:
                self.add(
                    ("states", name),
                    f"unreachable from the initial state '{self.fsm.initial}'",
                    "warning",
                )
        finishing = closure(self.fsm.terminal_states(), reverse(graph))
        if not self.fsm.terminal_states():
            return
        for name in self.fsm.states:
            if name in reached and name not in finishing:
                self.add(
                    ("states", name),
                    "no path from here to a terminal state: the loop can only stop "
                    "at max_iterations",
                    "warning",
                )

    def references(self) -> None:
        for where, message in context_problems(self.fsm.context):
            self.add(("context", where.split(".", 1)[0].split("[", 1)[0]), message)
        captures = captured_names(self.fsm)
        for path, text in self.strings():
            is_action = len(path) == 3 and path[2] == "action"
            if OPEN not in text:  # no reference, and nothing that looks like one: only
                # a bash action's length is checked (its kind asked only when too long)
                if is_action and (problem := too_long(text)) and self.shell(path[1]):
                    self.add(path, problem)
                continue
            in_bash = is_action and self.shell(path[1])
            if in_bash:
                problem = too_long(text)
                if problem:
                    self.add(path, problem)
            for miss in near_misses(text):
                self.add(
                    path,
                    f"{miss} is not a reference (write ${{namespace.path}} with no spaces, "
                    "e.g. ${captured.NAME.output}); it would reach the action unchanged",
                    "warning",
                )
            found = checked_references(text)  # (read once: used twice in bash)
            if in_bash:
                # An error where its references are refused for it (as before), else a
                # warning: a branch bash never runs may hold it and the action still work.
                for problem in escape_problems(text):
                    self.add(path, problem, "error" if found else "warning")
                for problem in unquotable(text):
                    self.add(path, problem, check=UNQUOTABLE_REFERENCE)
                for note in one_word_lists(text, self.lists) + interpreted(text):
                    self.add(path, note, "warning")
            for namespace, ref_path, fallback in found:
                ref = f"${{{namespace}.{ref_path}}}"
                first = ref_path.split(".", 1)[0].split("[", 1)[0]
                if namespace not in NAMESPACES:
                    hint = (
                        did_you_mean(namespace, NAMESPACES) or f" (known: {', '.join(NAMESPACES)})"
                    )
                    self.add(path, f"{ref}: unknown namespace '{namespace}'{hint}")
                elif fallback:
                    continue  # `:default=` or `?`: what it names may be missing
                elif namespace in _FIXED_FIELDS and first not in _FIXED_FIELDS[namespace]:
                    fields = _FIXED_FIELDS[namespace]
                    hint = did_you_mean(first, fields) or f" (known: {', '.join(fields)})"
                    self.add(path, f"{ref}: '{namespace}' has no '{first}'{hint}")
                elif namespace == "context" and first not in [
                    *self.context_keys,
                    *self.filled_keys,
                ]:
                    hint = did_you_mean(first, self.context_keys)
                    message = f"{ref}: context has no key '{first}'{hint}"
                    self.add(path, message, check=UNDEFINED_CONTEXT)
                elif namespace == "captured" and first not in captures:
                    hint = did_you_mean(first, captures) if captures else ""
                    message = f"{ref}: no state captures '{first}'{hint}"
                    self.add(path, message, check=UNDEFINED_CAPTURE)

    def kind_for(self, state: StateConfig) -> ActionKindSpec:
        """The kind *state* runs as (its first agent); for an agent that a parameter picks
        and none is given yet, the kind of its action type."""
        try:
            return self.fsm.kind_for(state)
        except (LoopDefinitionError, InterpolationError):
            return state.action_kind()

    def shell(self, name: str | int) -> bool:
        """Whether state *name*'s action goes to bash (its references get quoted)."""
        state = self.fsm.states.get(str(name))
        return (
            state is not None
            and state.kind_entry().interpolation is Interpolation.SHELL
            and not state.is_approval()
        )

    def strings(self) -> Iterator[tuple[KeyPath, str]]:
        """Every string the executor interpolates, with its key path."""
        yield from _walk_strings(self.fsm.context, ("context",))
        for name, state in self.fsm.states.items():
            path: KeyPath = ("states", name)
            if isinstance(state.action, str):
                yield (*path, "action"), state.action
            if state.evaluate is not None:
                for key in interpolated_fields(state.evaluate.type):
                    value = getattr(state.evaluate, key)
                    if isinstance(value, str):
                        yield (*path, "evaluate", key), value
            for transition in self.written[name]:
                yield (*path, *transition.key), transition.target


def never_given_keys(state: StateConfig, found: StateVerdicts | None) -> list[str]:
    """The keys of *state*'s route table that its evaluator (*found*: `state_verdicts`)
    can never give: an error each."""
    if state.route is None or found is None or found.verdicts is None:
        return []  # not evaluated, or the model may answer anything
    possible = [*found.verdicts, ERROR_VERDICT]
    if needs_llm(found.evaluator):  # `ll-loop run --no-llm` judges by exit code
        possible += SPECS[DEFAULT_EVALUATOR].verdicts
    return [key for key in state.route.routes if key not in possible]


def _walk_strings(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk_strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_strings(item, (*path, index))


def check_graph(fsm: FSMLoop, graph: LoopGraph | None = None) -> list[ValidationError]:
    """Every problem with *fsm* as a state machine (its fields must already be well-typed);
    *graph* is its `loop_graph`, when the caller has it already."""
    return _GraphChecker(fsm, graph).run()
