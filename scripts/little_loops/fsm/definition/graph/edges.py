"""The one graph of a loop: its states, the edges between them, reachability and traversals.

Built once per loop (`loop_graph`) from `transitions`, and read by the graph checks, the
static analysis, the diagram and the HTML report. Each of them reads one of two views:

* `out`: every edge out of a state, taken or not, in the order it is written (`declared`),
  then a `maintain: true` restart, then the loop's own stall breaker. Checks and analysis
  walk it (a route written but never taken still names a state someone meant to reach).
* `drawn`: the edges a run can take, in the order the executor tries them, one stall edge
  per state (its own breaker's, else the loop's). The diagram and the report draw it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import NamedTuple

from little_loops.fsm.definition.graph.transitions import (
    STALL_KEY,
    STALL_LABEL,
    TIMEOUT_KEY,
    Transition,
    declared,
    moves,
    restart,
)
from little_loops.fsm.definition.model.circuit_keys import TARGET_KEY as CIRCUIT_KEY
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop
from little_loops.fsm.values.references import OPEN

# Where an edge comes from.
WRITTEN = "written"  # declared in the state (see transitions.declared)
RESTART = "restart"  # a terminal state of a `maintain: true` loop starting over
LOOP_STALL = "loop_stall"  # the loop's `stall: {on_stall: ...}`, out of each non-terminal state
# The key of the loop's stall edge: the loop's `stall:` block, not a key of the state.
LOOP_STALL_KEY = ("stall",)
LOOP_CAP = "loop_cap"  # the loop's `on_max_steps` / `on_max_iterations`, out of each state


def cap_routes(fsm: FSMLoop) -> list[tuple[str, str]]:
    """The loop's cap routes: (the cap's key, its target) for each written."""
    caps = (("on_max_steps", fsm.on_max_steps), ("on_max_iterations", fsm.on_max_iterations))
    return [(key, target) for key, target in caps if target is not None]


class Edge(NamedTuple):
    """One way out of *source*: its label (a verdict, `next`, `_`, `maintain`, `stall`...),
    its target as written (`raw`), the key it is under in the state, where it comes from."""

    source: str
    label: str
    raw: str
    key: tuple[str, ...]
    origin: str

    @property
    def target(self) -> str:
        """The state it leads to (`$current` is the source itself), else the raw text."""
        return self.source if self.raw == CURRENT_STATE_TOKEN else self.raw

    @property
    def dynamic(self) -> bool:
        """Whether the target is only known at run time (it holds a `${...}` reference)."""
        return OPEN in self.raw


def _edge(source: str, transition: Transition, origin: str = WRITTEN) -> Edge:
    return Edge(source, transition.label, transition.target, transition.key, origin)


class LoopGraph:
    """The states of a loop and the edges between them (see the module docstring)."""

    def __init__(self, fsm: FSMLoop) -> None:
        self.fsm = fsm
        self.written: dict[str, list[Transition]] = {}
        self.out: dict[str, list[Edge]] = {}
        loop_stall = fsm.stall.on_stall if fsm.stall is not None else None
        breaker = fsm.circuit.target if fsm.circuit is not None else None
        caps = cap_routes(fsm)
        for name, state in fsm.states.items():
            written = self.written[name] = declared(state)
            out = [_edge(name, t) for t in written]
            restarted = restart(fsm, state)
            if restarted is not None:
                out.append(_edge(name, restarted, RESTART))
            if loop_stall is not None and not state.terminal:
                out.append(Edge(name, STALL_LABEL, loop_stall, LOOP_STALL_KEY, LOOP_STALL))
            for key, target in caps if not state.terminal else ():
                out.append(Edge(name, key.removeprefix("on_"), target, (key,), LOOP_CAP))
            if breaker is not None and not state.terminal:
                out.append(Edge(name, STALL_LABEL, breaker, CIRCUIT_KEY, LOOP_STALL))
            self.out[name] = out

    @cached_property
    def drawn(self) -> dict[str, list[Edge]]:
        """The edges a run can take out of each state, in the order the executor tries
        them, then its stall and approval-timeout routes (worked out on first use: the
        checks do not need it)."""
        drawn: dict[str, list[Edge]] = {}
        for name, state in self.fsm.states.items():
            out = self.out[name]
            restarted = any(e.origin == RESTART for e in out)
            ways = [
                _edge(name, t, RESTART if restarted else WRITTEN) for t in moves(self.fsm, state)
            ]
            ways += [e for e in out if e.origin == WRITTEN and e.key in (STALL_KEY, TIMEOUT_KEY)]
            own = state.stall.on_stall if state.stall is not None else None
            if own is None:
                ways += [e for e in out if e.origin == LOOP_STALL]
            drawn[name] = ways
        return drawn

    @property
    def nodes(self) -> list[str]:
        """The states, in the order the loop lists them."""
        return list(self.fsm.states)

    def successor_sets(self) -> tuple[dict[str, set[str]], bool]:
        """The known successors of each state over every edge (`out`), and whether any
        target is only known at run time."""
        states = self.fsm.states
        graph: dict[str, set[str]] = {name: set() for name in states}
        dynamic = False
        for name, edges in self.out.items():
            for edge in edges:
                if edge.dynamic:
                    dynamic = True
                elif edge.target in states:
                    graph[name].add(edge.target)
        return graph, dynamic

    def reachable(self, start: str | None = None) -> set[str]:
        """The states a run can enter from *start* (default: the initial state): every
        state when a target is only known at run time (`${...}`)."""
        graph, dynamic = self.successor_sets()
        first = self.fsm.initial if start is None else start
        if dynamic or first not in graph:
            return set(self.fsm.states)
        return closure([first], graph)

    def pairs(self) -> set[tuple[str, str]]:
        """(source, target) of each drawn edge between two states."""
        states = self.fsm.states
        return {
            (e.source, e.target)
            for edges in self.drawn.values()
            for e in edges
            if not e.dynamic and e.target in states
        }


def loop_graph(fsm: FSMLoop) -> LoopGraph:
    """The graph of *fsm* (its fields must already be well-typed)."""
    return LoopGraph(fsm)


def reverse(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """*graph* with every edge turned round: the predecessors of each state."""
    backward: dict[str, set[str]] = {name: set() for name in graph}
    for name, successors in graph.items():
        for successor in successors:
            backward.setdefault(successor, set()).add(name)
    return backward


def closure(start: Iterable[str], graph: Mapping[str, Iterable[str]]) -> set[str]:
    """The states reached from any of *start* along *graph*, *start* included."""
    seen = set(start)
    todo = list(seen)
    while todo:
        for successor in graph.get(todo.pop(), ()):
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


def breadth_first(
    start: str,
    graph: Mapping[str, Iterable[str]],
    through: Callable[[str], bool] | None = None,
) -> dict[str, str | None]:
    """Each state reached from *start* along *graph*, in the order a breadth-first walk
    reaches it, with the state it was first reached from (None for *start*). A state that
    *through* refuses is reached but not left."""
    before: dict[str, str | None] = {start: None}
    order = [start]
    for here in order:  # grows while it is read
        if through is not None and not through(here):
            continue
        for successor in graph.get(here, ()):
            if successor not in before:
                before[successor] = here
                order.append(successor)
    return before


def depths(start: str, graph: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """How many edges from *start* each state reached from it is, in breadth-first order."""
    depth: dict[str, int] = {}
    for name, parent in breadth_first(start, graph).items():
        depth[name] = 0 if parent is None else depth[parent] + 1
    return depth
