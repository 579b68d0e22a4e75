"""One answer to "which transitions does a state have": routing, checks and diagram agree."""

from __future__ import annotations

import pytest
from support.paths import DATA, SHIPPED_LOOPS

from little_loops.fsm.definition.checks.analysis import successors
from little_loops.fsm.definition.graph.edges import loop_graph
from little_loops.fsm.definition.graph.routing import resolve_route
from little_loops.fsm.definition.graph.transitions import (
    ERROR_VERDICT,
    NEXT_KEY,
    Transition,
    declared,
    moves,
    restart,
    transitions,
)
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop, StateConfig
from little_loops.fsm.definition.reading.loader import load_file
from little_loops.fsm.definition.writing.diagram import edges
from little_loops.fsm.validate.loopfile import check_document

ALL_KINDS = {
    "next": "a",
    "route": {"ok": "b", "_": "c", "_error": "d"},
    "on_success": "e",
    "on_failure": "f",
    "on_error": "g",
    "on_maintain": "h",
}


def _shipped() -> list[tuple[str, FSMLoop]]:
    """The shipped loops (`SHIPPED_LOOPS`), the documented loops and the paradigm examples."""
    paths = [
        *SHIPPED_LOOPS,
        *sorted((DATA / "doc_loops").glob("*.yaml")),
        *sorted((DATA / "paradigms").glob("*.yaml")),
    ]
    found = []
    for path in paths:
        report = check_document(load_file(path))
        assert report.fsm is not None, path
        found.append((f"{path.parent.name}/{path.name}", report.fsm))
    return found


SHIPPED = _shipped()


def test_there_are_shipped_loops_with_every_kind_of_transition() -> None:
    assert len([name for name, _ in SHIPPED if name.startswith(("loops/", ".loops/"))]) >= 3
    kinds = {t.key[0] for _, fsm in SHIPPED for s in fsm.states.values() for t in declared(s)}
    assert {"next", "route", "on_success", "on_failure"} <= kinds


def test_declared_lists_every_key_in_resolution_order() -> None:
    state = StateConfig.from_dict(ALL_KINDS)
    assert [t.key for t in declared(state)] == [
        ("next",),
        ("route", "ok"),
        ("route", "_"),
        ("route", "_error"),
        ("on_success",),
        ("on_failure",),
        ("on_error",),
        ("on_maintain",),
    ]
    assert [t.target for t in declared(state)] == list("abcdefgh")


def test_declared_labels_in_resolution_order() -> None:
    state = StateConfig.from_dict(
        {"next": "a", "route": {"ok": "b", "_": "c", "_error": "d"}, "on_success": "e"}
    )
    assert [(t.label, t.target) for t in declared(state)] == [
        ("next", "a"),
        ("ok", "b"),
        ("_", "c"),
        ("_error", "d"),
        ("success", "e"),
    ]


@pytest.mark.parametrize(
    ("data", "taken"),
    [
        (ALL_KINDS, [("next", "a"), ("_error", "d")]),
        ({"next": "a", "route": {"error": "b", "_error": "c"}}, [("next", "a"), ("error", "b")]),
        ({"next": "a", "on_error": "b", "on_failure": "c"}, [("next", "a"), ("error", "b")]),
        ({"next": "a", "route": {"_": "b"}, "on_error": "c"}, [("next", "a")]),
        ({"route": {"ok": "b", "_": "c"}, "on_success": "e"}, [("ok", "b"), ("_", "c")]),
        ({"on_failure": "f", "on_success": "e"}, [("success", "e"), ("failure", "f")]),
        ({"terminal": True, "on_maintain": "a"}, []),
    ],
)
def test_transitions_are_those_the_executor_can_take(
    data: dict[str, object], taken: list[tuple[str, str]]
) -> None:
    state = StateConfig.from_dict(data)
    assert [(t.label, t.target) for t in transitions(state)] == taken


def test_restart_goes_to_on_maintain_or_initial() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "maintain": True,
            "states": {
                "a": {"action": "x", "next": "b"},
                "b": {"terminal": True, "on_maintain": "c"},
                "c": {"terminal": True},
            },
        }
    )
    assert restart(fsm, fsm.states["a"]) is None
    assert restart(fsm, fsm.states["b"]) == Transition("maintain", "c", ("on_maintain",))
    assert restart(fsm, fsm.states["c"]) == Transition("maintain", "a", ())
    fsm.maintain = False
    assert restart(fsm, fsm.states["b"]) is None


def _probes(state: StateConfig) -> list[tuple[str, bool]]:
    """Every (verdict, action_failed) pair that could pick a different transition."""
    verdicts = {t.label for t in declared(state)} | {ERROR_VERDICT, "success", "\0other"}
    return [(v, failed) for v in sorted(verdicts) for failed in (False, True)]


@pytest.mark.parametrize(("name", "fsm"), SHIPPED, ids=[name for name, _ in SHIPPED])
def test_routing_checks_and_diagram_read_the_same_edges(name: str, fsm: FSMLoop) -> None:
    drawn = {(e.source, e.target, label) for e in edges(fsm) for label in e.labels}
    graph = loop_graph(fsm)
    checked, _dynamic = graph.successor_sets()
    analysed = successors(fsm)
    for state_name, state in fsm.states.items():
        ways = moves(fsm, state)
        assert [(e.label, e.raw) for e in graph.drawn[state_name]] == [
            (t.label, t.target) for t in ways
        ]
        for t in ways:
            target = state_name if t.target == CURRENT_STATE_TOKEN else t.target
            # The diagram draws every edge (a dropped `route:` entry fails here).
            assert (state_name, target, t.label) in drawn, (state_name, t)
            if target in fsm.states:
                assert target in checked[state_name], (state_name, t)
                assert target in analysed[state_name], (state_name, t)
        drawn_here = {(target, label) for source, target, label in drawn if source == state_name}
        assert len(drawn_here) == len(
            {(state_name if t.target == CURRENT_STATE_TOKEN else t.target, t.label) for t in ways}
        )
        # Routing takes exactly the transitions listed, nothing else.
        taken = {(t.target, t.reason) for t in transitions(state)}
        reached = set()
        for verdict, failed in _probes(state):
            choice = resolve_route(state, verdict, action_failed=failed)
            if choice is not None:
                assert (choice.target, choice.reason) in taken, (state_name, verdict, choice)
                reached.add((choice.target, choice.reason))
        assert reached == taken, state_name


def test_routing_follows_the_listed_transitions() -> None:
    state = StateConfig.from_dict(ALL_KINDS)
    choice = resolve_route(state, "ok")
    assert choice is not None
    assert (choice.target, choice.reason) == ("a", "next")
    choice = resolve_route(state, ERROR_VERDICT, action_failed=True)
    assert choice is not None
    assert (choice.target, choice.reason) == ("d", "route '_error'")
    table = StateConfig.from_dict({"route": {"ok": "b", "_": "c"}})
    assert resolve_route(table, ERROR_VERDICT) is None
    choice = resolve_route(table, "other")
    assert choice is not None
    assert (choice.target, choice.reason) == ("c", "route '_' (default)")
    shorthand = StateConfig.from_dict({"on_failure": "f"})
    choice = resolve_route(shorthand, "failure")
    assert choice is not None
    assert (choice.target, choice.reason) == ("f", "on_failure")
    assert resolve_route(shorthand, None) is None
    assert [t.key for t in transitions(state)][0] == NEXT_KEY
