"""A loop checked as a state machine (definition/checks/graph_checks.py): targets, ways out,
routes never used, reachability and references."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.definition.checks.graph_checks import check_graph, never_given_keys
from little_loops.fsm.definition.graph.edges import loop_graph
from little_loops.fsm.definition.graph.verdicts import state_verdicts
from little_loops.fsm.definition.model.typed import FSMLoop


def _problems(states: dict[str, Any], **settings: Any) -> list[str]:
    fsm = FSMLoop.from_dict({"name": "x", "initial": "a", "states": states, **settings})
    return [f"{p.severity}: {p}" for p in check_graph(fsm)]


def test_a_sound_loop_has_no_problem() -> None:
    assert _problems({"a": {"action": "x", "next": "b"}, "b": {"terminal": True}}) == []


def test_unknown_targets_dead_ends_and_contradictions() -> None:
    problems = _problems({"a": {"action": "x", "next": "bb"}, "b": {"terminal": True, "next": "a"}})
    assert problems[:2] == [
        "error: loop 'x' > states > a > next: 'bb' is not a state (did you mean b?)",
        "error: loop 'x' > states > b > next: contradicts terminal: true "
        "(a terminal state ends the loop)",
    ]
    assert _problems({"a": {"action": "x"}, "b": {"terminal": True}})[0] == (
        "error: loop 'x' > states > a: dead end: not terminal and no way out "
        "(add next, route, on_success/on_failure/on_error, or terminal: true)"
    )


def test_routes_never_used_and_unreachable_states() -> None:
    problems = _problems(
        {
            "a": {"action": "x", "next": "b", "on_success": "c"},
            "b": {"terminal": True},
            "c": {"terminal": True},
            "d": {"terminal": True},
        }
    )
    assert problems == [
        "warning: loop 'x' > states > a > on_success: never used: next always moves on to 'b' "
        "(only on_error is used, when the action fails)",
        "warning: loop 'x' > states > d: unreachable from the initial state 'a'",
    ]


def test_a_state_with_no_path_to_the_end() -> None:
    problems = _problems({"a": {"action": "x", "next": "a"}, "b": {"terminal": True}})
    assert problems == [
        "warning: loop 'x' > states > b: unreachable from the initial state 'a'",
        "warning: loop 'x' > states > a: no path from here to a terminal state: the loop can "
        "only stop at max_iterations",
    ]


def test_references_are_checked() -> None:
    problems = _problems(
        {"a": {"action": "echo ${contxt.x} ${context.y}", "next": "b"}, "b": {"terminal": True}},
        context={"z": 1},
    )
    assert problems == [
        "error: loop 'x' > states > a > action: ${contxt.x}: unknown namespace 'contxt' "
        "(did you mean context?)",
        "error: loop 'x' > states > a > action: ${context.y}: context has no key 'y'",
    ]


def test_the_graph_is_the_one_given() -> None:
    fsm = FSMLoop.from_dict(
        {"name": "x", "initial": "a", "states": {"a": {"action": "x", "next": "b"}, "b": {}}}
    )
    graph = loop_graph(fsm)
    fsm.states["a"].next = "nowhere"  # the graph was built before: it still reaches b
    problems = [str(p) for p in check_graph(fsm, graph)]
    assert "loop 'x' > states > b: unreachable from the initial state 'a'" not in problems


def test_never_given_keys_are_route_keys_the_evaluator_cannot_give() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "states": {
                "a": {"action": "x", "route": {"sucess": "b", "failure": "b", "error": "b"}},
                "b": {"terminal": True},
            },
        }
    )
    state = fsm.states["a"]
    assert never_given_keys(state, state_verdicts(fsm, state)) == ["sucess"]
    assert never_given_keys(state, None) == []


def test_a_list_written_as_a_whole_argument_is_noted_and_bad_places_refused() -> None:
    action = (
        'pytest ${context.files}; echo "${context.files}" ${words:context.files}; eval ${context.v}'
    )
    problems = _problems(
        {"a": {"action": action, "next": "b"}, "b": {"terminal": True}},
        context={"files": ["a", "b"], "v": "x"},
    )
    assert problems == [
        "error: loop 'x' > states > a > action: ${context.v}: not allowed in the arguments of "
        "eval, which bash reads as code (paste it as code with ${raw:context.v} if you mean that)",
        "warning: loop 'x' > states > a > action: ${context.files} is a list: bash gets it as "
        "one word, its items joined by spaces; write ${words:context.files} for one word per item",
    ]


def test_only_a_state_with_an_idle_timeout_asks_its_action_s_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The warning about a short idle_timeout reads the kind of the state's action (its
    # agent, maybe a custom one): a state without idle_timeout must not pay for that
    # (a 20,000-state file asked 20,000 times). Counted on the model's kind_for.
    asked: list[str | None] = []
    real = FSMLoop.kind_for

    def counting(self: FSMLoop, state: Any) -> Any:
        asked.append(state.action)
        return real(self, state)

    monkeypatch.setattr(FSMLoop, "kind_for", counting)
    states = {
        "a": {"action": "echo a", "next": "b"},
        "b": {"action": "/ll:fix", "next": "c"},
        "c": {"action": "echo c", "idle_timeout": 5, "next": "d"},
        "d": {"action": "/ll:fix", "idle_timeout": 5, "next": "done"},
        "done": {"terminal": True},
    }
    problems = _problems(states)
    assert asked == ["echo c", "/ll:fix"]
    # The warning is still given where it applies (a shell action may have any).
    assert [p for p in problems if "idle_timeout" in p] == [
        "warning: loop 'x' > states > d > idle_timeout: 5s is short for a Claude action: "
        "Claude Code prints a line only when a message or a tool call is finished, so a "
        "long reply or a long tool call (a test run) is silent for longer; 120s or more is "
        "safer"
    ]
