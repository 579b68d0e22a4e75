"""Keys little-loops reads otherwise: each row's note, and its rewrite for `--compat`
(validate/meanings.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model.blocks import ROUTE_DEFAULT_KEY, ROUTE_ERROR_KEY
from little_loops.fsm.definition.model.key_row import LOOP, STATE
from little_loops.fsm.definition.model.spellings import ROUTE
from little_loops.fsm.validate.meanings import (
    MEANINGS,
    NOTE,
    THEIR_MAX_STEPS,
    as_theirs,
    notes,
)


def loop(*, spelling: str = "on_yes", **top: Any) -> dict[str, Any]:
    """A loop whose `check` state routes with *spelling* (`on_yes`: little-loops'; `on_success`:
    ours), with *top* keys added, and its `check` state's `evaluate:` given as `evaluate=`."""
    evaluate = top.pop("evaluate", None)
    check: dict[str, Any] = {"action": "make test", spelling: "done", "on_failure": "done"}
    if evaluate is not None:
        check["evaluate"] = evaluate
    return {
        "name": "fix",
        "initial": "check",
        "states": {"check": check, "done": {"terminal": True}},
        **top,
    }


def said(data: dict[str, Any]) -> list[tuple[tuple[object, ...], str]]:
    found = notes(data, "fix")
    assert all(note.severity == "note" and note.loop == "fix" for note in found)
    assert all(note.message.endswith(NOTE) for note in found)
    return [(note.path, note.message.removesuffix(NOTE)) for note in found]


def test_one_row_for_each_key_read_otherwise() -> None:
    assert [m.key for m in MEANINGS] == [
        "max_iterations",
        "output_numeric",
        "llm_structured",
        "run_dir",
        "evaluate",
        "on_cannot_judge",
        "_",
        "${prev.*}",
    ]
    assert [m.key for m in MEANINGS if m.as_theirs is not None] == ["max_iterations"]


def test_a_key_s_meaning_names_the_place_of_its_row() -> None:
    tables = {
        LOOP: key_tables.LOOP_KEYS,
        STATE: key_tables.STATE_KEYS,
        ROUTE: {ROUTE_DEFAULT_KEY: None, ROUTE_ERROR_KEY: None},
    }
    assert {m.key: m.place for m in MEANINGS} == {
        "max_iterations": LOOP,
        "output_numeric": None,
        "llm_structured": None,
        "run_dir": None,
        "evaluate": STATE,
        "on_cannot_judge": STATE,
        "_": ROUTE,
        "${prev.*}": None,
    }
    for meaning in MEANINGS:
        if meaning.place is not None:
            assert meaning.key in tables[meaning.place], meaning.key
        row = meaning.table_row()
        assert "\n" not in row, row
        assert row.startswith("| "), row
        assert row.count(" | ") == 2, row


def test_the_exit_code_meaning_names_each_evaluator_by_the_registry() -> None:
    from little_loops.fsm.evaluators.registry import SPECS

    (meaning,) = [m for m in MEANINGS if m.key == "evaluate"]
    shown, _, theirs = meaning.table_row().strip("| ").split(" | ")
    for name, spec in SPECS.items():
        assert (f"`{name}`" in theirs) is spec.reads_exit_code, name
        assert (f"`{name}`" in shown) is not spec.reads_exit_code, name


def test_max_iterations_without_max_steps_is_noted_in_their_spelling() -> None:
    assert said(loop(max_iterations=7)) == [
        (
            ("max_iterations",),
            "little-loops reads max_iterations without max_steps as a cap of 7 steps; "
            "ll-loop, of 7 passes",
        )
    ]
    assert said(loop(spelling="on_success", max_iterations=7)) == []  # ours
    assert said(loop(max_iterations=7, max_steps=20)) == []
    assert said(loop(max_iterations=0)) == []
    assert said(loop(max_iterations=True)) == []
    assert said(loop(max_iterations="7")) == []
    assert said(loop()) == []


def test_a_route_table_or_failure_key_in_their_spelling_counts_too() -> None:
    routed = loop(spelling="on_success", max_iterations=3)
    routed["states"]["check"] = {"action": "make test", "route": {"yes": "done", "no": "done"}}
    assert [path for path, _ in said(routed)] == [("max_iterations",)]
    failing = loop(spelling="on_success", max_iterations=3)
    failing["states"]["done"] = {"terminal": True, "failure": True}
    assert [path for path, _ in said(failing)] == [("max_iterations",)]


def test_output_numeric_without_a_key_is_noted_in_their_spelling() -> None:
    numeric = {"type": "output_numeric", "operator": "eq", "target": 0}
    assert said(loop(evaluate=numeric))[0] == (
        ("states", "check", "evaluate", "type"),
        "little-loops reads the whole output as the number (several lines are an "
        "error there); ll-loop reads its last non-empty line",
    )
    assert len(said(loop(evaluate={**numeric, "key": "count"}))) == 1  # the exit code's
    assert said(loop(spelling="on_success", evaluate=numeric)) == []


def test_the_judge_without_a_schema_of_its_own_is_noted_in_their_spelling() -> None:
    judge = {"type": "llm_structured", "prompt": "Did the tests pass?"}
    assert said(loop(evaluate=judge)) == [
        (
            ("states", "check", "evaluate", "type"),
            "little-loops' judge answers cannot_judge too (with no route for cannot_judge "
            "the state is judged again, 2 times at most, then takes its error route), and a "
            "verdict it gives without quoting the output is failure there; ll-loop takes the "
            "judge's verdict",
        )
    ]
    routed = loop(evaluate=judge)
    routed["states"]["check"]["route"] = {"yes": "done", "cannot_judge": "done"}
    assert said(routed) == [
        (
            ("states", "check", "evaluate", "type"),
            "little-loops' judge answers cannot_judge too, and a verdict it gives without "
            "quoting the output is failure there; ll-loop takes the judge's verdict",
        )
    ]
    assert said(loop(evaluate={**judge, "schema": {"type": "object"}})) == []
    assert said(loop(spelling="on_success", evaluate=judge)) == []


@pytest.mark.parametrize("spelling", ["on_yes", "on_success"])
def test_a_required_run_dir_is_noted_in_either_spelling(spelling: str) -> None:
    required = {"run_dir": {"type": "string", "required": True}}
    assert said(loop(spelling=spelling, parameters=required)) == [
        (
            ("parameters", "run_dir"),
            "little-loops fills a required run_dir with the run's folder; ll-loop asks for it",
        )
    ]
    optional = {"run_dir": {"type": "string", "required": False}}
    assert said(loop(spelling=spelling, parameters=optional)) == []
    assert said(loop(spelling=spelling, parameters={"run_dir": "x"})) == []
    assert said(loop(spelling=spelling, parameters=["run_dir"])) == []


def test_every_row_notes_in_one_file_in_the_tables_order() -> None:
    data = loop(
        max_iterations=5,
        parameters={"run_dir": {"required": True}},
        evaluate={"type": "output_numeric", "operator": "lt", "target": 3},
    )
    data["states"]["judge"] = {"action": "true", "evaluate": {"type": "llm_structured"}}
    assert [path for path, _ in said(data)] == [
        ("max_iterations",),
        ("states", "check", "evaluate", "type"),
        ("states", "judge", "evaluate", "type"),
        ("parameters", "run_dir"),
        ("states", "check", "evaluate", "type"),  # output_numeric on a non-zero exit
    ]


def test_a_file_of_odd_shapes_gives_no_note_and_no_crash() -> None:
    for data in ({}, {"states": None}, {"states": ["a"]}, {"states": {"a": None, "b": "x"}}):
        assert notes(data) == []
        assert as_theirs(data)["max_steps"] == THEIR_MAX_STEPS


@pytest.mark.parametrize(
    ("top", "steps"),
    [
        ({"max_iterations": 7}, 7),  # the pass cap is the step cap there
        ({}, THEIR_MAX_STEPS),  # neither: little-loops' cap of 50 steps
        ({"max_iterations": 7, "max_steps": 20}, 20),  # a step cap given is kept
        ({"max_steps": 3}, 3),
    ],
)
def test_as_theirs_gives_the_step_cap_little_loops_reads(top: dict[str, Any], steps: int) -> None:
    data = loop(**top)
    before = copy.deepcopy(data)
    out = as_theirs(data)
    assert out["max_steps"] == steps
    assert out.get("max_iterations") == top.get("max_iterations")
    assert {k: v for k, v in out.items() if k != "max_steps"} == {
        k: v for k, v in before.items() if k != "max_steps"
    }
    assert data == before  # the file as read is left as it was


@pytest.mark.parametrize("wrong", [0, -1, True, "7", 2.5])
def test_as_theirs_leaves_a_wrong_max_iterations_for_validation(wrong: object) -> None:
    out = as_theirs(loop(max_iterations=wrong))
    assert "max_steps" not in out
    assert out["max_iterations"] == wrong


def test_an_evaluator_that_does_not_judge_the_exit_code_is_noted_in_their_spelling() -> None:
    contains = {"type": "output_contains", "pattern": "PASS"}
    assert said(loop(evaluate=contains)) == [
        (
            ("states", "check", "evaluate", "type"),
            "little-loops' output_contains gives error when the action exits non-zero; "
            "ll-loop reads the output whatever the exit code",
        )
    ]
    assert said(loop(spelling="on_success", evaluate=contains)) == []  # ours
    assert said(loop(evaluate={"type": "exit_code"})) == []  # it judges the exit code
    assert said(loop(evaluate={"type": "harbor_scorer"})) == []
    no_action = loop(evaluate={**contains, "source": "x"})
    del no_action["states"]["check"]["action"]
    assert said(no_action) == []  # nothing runs: the exit code is 0
