"""Static analysis of a valid loop: mistakes that would only show up while it runs.

Warnings (`ll-loop validate --strict` makes them errors):

* verdict coverage: a verdict the state's evaluator can give that has no route, so the
  loop would stop with "no valid transition" (for `error`, only where a `_` default
  suggests the author meant to catch everything, and in `maintain: true` loops);
* used before set: `${captured.X}` or `${result.*}` read on some path before any state
  sets it (a dataflow analysis over the state graph);
* shell injection: text the loop does not control pasted into a bash command unquoted,
  by the `${raw:...}` opt-out.

A warning for `maintain: true` restarts that go round terminal states only (they do no
work but the terminal actions, until max_iterations).

Reachability (unreachable states, states with no way to a terminal state), undefined
`${context.X}` and unknown namespaces are checked in `graph_checks`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from little_loops.fsm.actions.spec import Interpolation
from little_loops.fsm.definition.checks.graph_checks import KeyPath, never_given_keys
from little_loops.fsm.definition.checks.uses import Use, expand, injection_message, untrusted
from little_loops.fsm.definition.graph.edges import (
    RESTART,
    WRITTEN,
    LoopGraph,
    breadth_first,
    loop_graph,
)
from little_loops.fsm.definition.graph.routing import resolve_route
from little_loops.fsm.definition.graph.transitions import restart
from little_loops.fsm.definition.graph.verdicts import (
    StateVerdicts,
    free_text_verdicts,
    state_verdicts,
)
from little_loops.fsm.definition.model.typed import ROUTE_DEFAULT_KEY, FSMLoop, StateConfig
from little_loops.fsm.evaluators.registry import interpolated_fields
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import ValidationError
from little_loops.fsm.values.references import OPEN

# A pseudo capture name for "some state has produced an evaluation result" (`${result.*}`).
_RESULT = "\0result"
# The verdict a loop may leave unrouted on purpose, to fail the run.
DELIBERATE_STOP = "failure"
_SHORTHAND_VERDICTS = {"success": "on_success", "failure": "on_failure", ERROR_VERDICT: "on_error"}


def _quoted(items: list[str]) -> str:
    quoted = [f"'{item}'" for item in items]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def successors(fsm: FSMLoop, graph: LoopGraph | None = None) -> dict[str, list[str]]:
    """The states each state can move to, over the loop's graph (*graph*, when the caller
    has it already): what a state declares, known targets only, `$current` is itself; a
    terminal state only by its restart (a `maintain: true` loop, at `on_maintain` or
    `initial`); the loop's stall breaker is left out."""
    graph = loop_graph(fsm) if graph is None else graph
    out: dict[str, list[str]] = {}
    for name, state in fsm.states.items():
        if state.terminal:
            ways = [e.target for e in graph.out[name] if e.origin == RESTART]
        else:
            ways = [
                e.target
                for e in graph.out[name]
                if e.origin == WRITTEN and e.key != ("on_maintain",)
            ]
        out[name] = [t for t in dict.fromkeys(ways) if t in fsm.states]
    return out


class _Analyzer:
    def __init__(self, fsm: FSMLoop, graph: LoopGraph | None = None) -> None:
        self.fsm = fsm
        self.problems: list[ValidationError] = []
        graph = loop_graph(fsm) if graph is None else graph
        # Worked out once per state: what it declares and what its evaluator can give.
        self.written = graph.written
        self.found = {name: state_verdicts(fsm, state) for name, state in fsm.states.items()}
        self.graph = successors(fsm, graph)
        self.gens = {name: self.gen(state) for name, state in fsm.states.items()}
        # For each name, how the shortest paths that leave it unset reach each state.
        self.unset_paths: dict[str, dict[str, str | None]] = {}
        # What each `${context.X}` reaches through context values (uses.expand).
        self.reached: dict[str, list[tuple[str, str]]] = {}

    def warn(self, path: KeyPath, message: str) -> None:
        self.problems.append(ValidationError.at(self.fsm.name or None, path, message, "warning"))

    def run(self) -> list[ValidationError]:
        for name, state in self.fsm.states.items():
            self.coverage(name, state)
        self.maintain_errors()
        self.restart_cycles()
        self.used_before_set()
        self.injection()
        return self.problems

    # -- verdict coverage --------------------------------------------------------------

    def coverage(self, name: str, state: StateConfig) -> None:
        found = self.found[name]
        if found is None or not (state.terminal or self.written[name]):
            return  # not evaluated, or a dead end (graph_checks says so: no route at all)
        if never_given_keys(state, found):
            return  # a route key is a typo (an error): the table is not finished yet
        path: KeyPath = ("states", name)
        # An unrouted `failure` is how a loop fails its run on purpose (exit 1: a CI gate);
        # every other verdict left without a route is almost always an oversight.
        unrouted = [
            v
            for v in found.verdicts or ()
            if v != DELIBERATE_STOP and resolve_route(state, v) is None
        ]
        if unrouted:
            self.warn(
                (*path, "route") if state.route is not None else path,
                _unrouted_message(state, found, unrouted),
            )
        if (
            state.route is not None
            and state.route.default is not None
            and resolve_route(state, ERROR_VERDICT) is None
        ):
            self.warn(
                (*path, "route", ROUTE_DEFAULT_KEY),
                f"'_' does not catch the 'error' verdict ({found.error_causes}): with no "
                'error: or _error: in route, an error stops the loop with "no valid '
                'transition"; add _error: STATE if the loop should go on',
            )

    def maintain_errors(self) -> None:
        """A `maintain: true` loop is meant to keep going; an unrouted error ends it."""
        if not self.fsm.maintain:
            return
        names = []
        for name, state in self.fsm.states.items():
            found = self.found[name]
            if found is None or resolve_route(state, ERROR_VERDICT) is not None:
                continue
            if state.route is not None and state.route.default is not None:
                continue  # warned about '_' above
            names.append(name)
        if names:
            self.warn(
                ("maintain",),
                "maintain: true keeps this loop running, but an 'error' verdict (exit code 2 or "
                f"more, a timeout, a failed LLM call) in {_quoted(names)} has no route and "
                'stops it with "no valid transition"; add on_error: or _error: where it should '
                "recover",
            )

    def restart_cycles(self) -> None:
        """Restarts that only ever reach terminal states do no work but their terminal
        actions, over and over until max_iterations."""
        fsm = self.fsm
        if not fsm.maintain:
            return
        terminals = fsm.terminal_states()
        rank = {name: i for i, name in enumerate(terminals)}

        def again(name: str) -> str | None:
            """The terminal state *name* restarts at, if the restart is terminal."""
            way = restart(fsm, fsm.states[name])
            target = fsm.initial if way is None else way.target
            return target if target in rank else None

        # Each terminal state restarts at one place: follow every chain once, and a
        # chain that comes back to a state of its own walk has found a cycle.
        walked: set[str] = set()
        cycles: list[list[str]] = []
        for name in terminals:
            walk: dict[str, int] = {}
            here: str | None = name
            while here is not None and here not in walked:
                walked.add(here)
                walk[here] = len(walk)
                here = again(here)
            if here is not None and here in walk:
                cycle = list(walk)[walk[here] :]
                first = min(range(len(cycle)), key=lambda i: rank[cycle[i]])
                cycles.append(cycle[first:] + cycle[:first])
        for cycle in sorted(cycles, key=lambda c: rank[c[0]]):
            name = cycle[0]
            state = fsm.states[name]
            self.problems.append(
                ValidationError.at(
                    fsm.name or None,
                    ("states", name, "on_maintain")
                    if state.on_maintain is not None
                    else ("states", name),
                    f"maintain: true restarts at '{cycle[1 % len(cycle)]}', which is terminal: "
                    f"the loop goes round {' → '.join([*cycle, name])}, "
                    "running only terminal actions, one iteration each, until "
                    "max_iterations ends it; restart at a state that is not terminal",
                    "warning",
                )
            )

    # -- used before set ---------------------------------------------------------------

    def available(self, bits: dict[str, int]) -> dict[str, int]:
        """For each reachable state: what is surely set on entry, on every path from
        `initial`, as a bit mask over *bits* (capture names, and _RESULT once some state
        has been evaluated).

        A worklist: a state is looked at again only when what reaches it shrinks, so a
        ring of states takes two passes, not one per state (each mask only shrinks).
        """
        initial = self.fsm.initial
        gens = {name: _mask(made, bits) for name, made in self.gens.items()}
        order = self.reach_order()
        entry = dict.fromkeys(order, (1 << len(bits)) - 1)
        entry[initial] = 0
        queue = deque(order)
        queued = set(order)
        while queue:
            name = queue.popleft()
            queued.discard(name)
            out = entry[name] | gens[name]
            for succ in self.graph[name]:
                if succ != initial and entry[succ] & ~out:
                    entry[succ] &= out
                    if succ not in queued:
                        queued.add(succ)
                        queue.append(succ)
        return entry

    def reach_order(self) -> list[str]:
        """The states reachable from `initial`, breadth first."""
        return list(breadth_first(self.fsm.initial, self.graph))

    @staticmethod
    def gen(state: StateConfig) -> set[str]:
        made: set[str] = set()
        if (state.action or state.loop) and state.capture:
            made.add(state.capture)
        if not state.terminal and state.next is None:
            made.add(_RESULT)
        return made

    def used_before_set(self) -> None:
        # Names no state captures at all are reported by graph_checks.
        captures = {s.capture for s in self.fsm.states.values() if s.capture}
        wanted: list[tuple[str, Use, str]] = []
        for name, state in self.fsm.states.items():
            for use in self.uses(name, state):
                if use.namespace == "captured" and use.first in captures:
                    wanted.append((name, use, use.first))
                elif use.namespace == "result":
                    wanted.append((name, use, _RESULT))
        if not wanted:
            return
        bits = {needed: 1 << i for i, needed in enumerate(dict.fromkeys(w[2] for w in wanted))}
        entry = self.available(bits)
        for name, use, needed in wanted:
            if name not in entry:
                continue  # unreachable: graph_checks says so
            have = entry[name]
            if use.path[2] != "action":
                # Evaluate fields and routes come after the action's capture, and
                # routes after the state's own evaluation.
                made = self.gens[name] - ({_RESULT} if use.path[2] == "evaluate" else set())
                have |= _mask(made, bits)
            if have & bits[needed]:
                continue
            trail = " → ".join(self.example_path(name, needed))
            via = f" (through {use.via})" if use.via else ""
            if needed == _RESULT:
                what = "before any state has been evaluated, and then the reference fails "
                what += '("no evaluation result yet")'
            else:
                what = f"before any state captures '{needed}', and then the reference "
                what += "fails as an undefined variable"
            self.warn(use.path, f"{use.text}{via}: the loop can reach here ({trail}) {what}")

    def example_path(self, goal: str, needed: str) -> list[str]:
        """A shortest path from `initial` to *goal* through states that do not set *needed*
        (one breadth-first search per name, kept for every state that needs it)."""
        before = self.unset_paths.get(needed)
        if before is None:
            before = self.unset_paths[needed] = breadth_first(
                self.fsm.initial, self.graph, lambda here: needed not in self.gens[here]
            )
        trail: list[str] = []
        step: str | None = goal
        while step is not None:
            trail.append(step)
            step = before.get(step)
        return trail[::-1]

    def uses(self, name: str, state: StateConfig) -> Iterator[Use]:
        """Every reference in the fields of *state* the executor interpolates."""
        path: KeyPath = ("states", name)
        fields: list[tuple[KeyPath, str]] = []
        # (only a text with a reference is kept: most have none)
        if isinstance(state.action, str) and OPEN in state.action:
            fields.append(((*path, "action"), state.action))
        if state.evaluate is not None:
            for key in interpolated_fields(state.evaluate.type):
                value = getattr(state.evaluate, key)
                if isinstance(value, str) and OPEN in value:
                    fields.append(((*path, "evaluate", key), value))
        fields.extend(
            ((*path, *t.key), t.target)
            for t in self.written[name]
            if OPEN in t.target and t.key != ("on_maintain",)
        )
        for where, text in fields:
            yield from expand(where, text, self.fsm.context, self.reached)

    # -- shell injection ---------------------------------------------------------------

    def injection(self) -> None:
        verdicts_are_text = free_text_verdicts(self.fsm)
        for name, state in self.fsm.states.items():
            if not state.action or OPEN not in state.action:
                continue  # (most actions: no reference, so no kind to ask)
            quoted = state.kind_entry().interpolation is Interpolation.SHELL
            if not quoted or state.is_approval():
                continue
            seen: set[str] = set()
            action = ("states", name, "action")
            for use in expand(action, state.action, self.fsm.context, self.reached):
                if not use.raw or use.text in seen or not untrusted(use, verdicts_are_text):
                    continue
                seen.add(use.text)
                self.warn(use.path, injection_message(use))


def _mask(names: set[str], bits: dict[str, int]) -> int:
    mask = 0
    for name in names:
        mask |= bits.get(name, 0)
    return mask


def _unrouted_message(state: StateConfig, found: StateVerdicts, unrouted: list[str]) -> str:
    one = len(unrouted) == 1
    head = (
        f"verdict{'' if one else 's'} {_quoted(unrouted)} ({found.source}) "
        f"{'has' if one else 'have'} no route"
    )
    stop = 'the loop would stop here with "no valid transition"'
    if state.route is not None:
        return (
            f"{head} and there is no '_' default: {stop}; add "
            f"{'it' if one else 'them'} or _: STATE to route"
        )
    if all(v in _SHORTHAND_VERDICTS for v in unrouted):
        keys = " and ".join(f"{_SHORTHAND_VERDICTS[v]}: STATE" for v in unrouted)
        return f"{head}: {stop}; add {keys}"
    return (
        f"{head}: {stop}; on_success/on_failure cannot route "
        f"{'it' if one else 'them'}: use a route table with an entry for each verdict "
        "(or _: STATE for the rest)"
    )


def analyze(fsm: FSMLoop, graph: LoopGraph | None = None) -> list[ValidationError]:
    """Warnings about *fsm* that need the whole state machine (its initial state must exist;
    targets that are not states are left out of the graph); *graph* is its `loop_graph`,
    when the caller has it already."""
    return _Analyzer(fsm, graph).run()
