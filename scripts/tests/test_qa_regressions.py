"""Bad input found by a new user's walkthrough: each gives a clean answer, not a traceback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.project import LoopProject

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.loader import load_text
from little_loops.fsm.errors import LoopDefinitionError
from little_loops.fsm.evaluators.builtin import evaluate_output_contains, evaluate_output_json
from little_loops.fsm.runs.layout import output_file_name


def test_dates_in_yaml_stay_strings() -> None:
    doc = load_text("name: x\ncontext: {d: 2001-12-14}\n")
    assert doc.data["context"] == {"d": "2001-12-14"}


def test_tagged_non_json_values_are_refused_with_their_place() -> None:
    with pytest.raises(LoopDefinitionError) as info:
        load_text("name: x\ncontext: {b: !!binary aGVsbG8=}\n", "x.yaml")
    assert str(info.value) == (
        "x.yaml:2:14: a value tagged !!binary is not supported here; write it as a string"
    )


def test_a_catastrophic_regex_gives_error_within_its_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("little_loops.fsm.evaluators.builtin.REGEX_TIME_LIMIT", 0.3)
    started = time.monotonic()
    result = evaluate_output_contains("a" * 40 + "!", "(a+)+b")
    assert time.monotonic() - started < 2
    assert result.verdict == "error"
    assert result.details["error"] == (
        "pattern took longer than 0.3s to match (a nested quantifier like (a+)+ backtracks "
        "without end); simplify the pattern"
    )


def test_nan_in_json_output_is_not_json() -> None:
    result = evaluate_output_json('{"a": NaN}', ".a", "eq", 0)
    assert result.verdict == "error"
    assert result.details["error"] == "output is not valid JSON: NaN is not a JSON value"


@pytest.mark.parametrize(
    ("state", "name"),
    [
        ("check", "loop.check.out"),
        ("x/../../etc/passwd", "loop.x_.._.._etc_passwd-"),
        ("..", "loop._-"),
    ],
)
def test_output_files_stay_in_their_folder(state: str, name: str) -> None:
    made = output_file_name("loop", state)
    assert made.startswith(name)
    assert "/" not in made
    assert made.endswith(".out")


def test_two_unsafe_state_names_never_share_a_file() -> None:
    assert output_file_name("l", "a/b") != output_file_name("l", "a b")


def test_a_nul_byte_in_an_action_is_an_error_result(tmp_path: Path) -> None:
    result = DefaultActionRunner(cwd=tmp_path).run("echo a\0b", 5, False)
    assert (result.exit_code, result.error) == (
        126,
        "the action contains a NUL byte, which a command line cannot carry",
    )


def test_a_running_folder_that_is_a_file_is_one_line(loop_project: LoopProject) -> None:
    loop_project.write(
        "hello",
        "name: hello\ninitial: a\nstates:\n  a:\n    action: 'true'\n    next: b\n"
        "  b:\n    terminal: true\n",
    )
    (loop_project.loops / ".running").write_text("")
    result = loop_project.run("run", "hello")
    assert result.code == 1
    assert (
        result.err == f"ll-loop: error: {loop_project.loops.resolve() / '.running'}: File exists\n"
    )


def test_json_of_a_run_never_holds_nan(loop_project: LoopProject) -> None:
    loop_project.write(
        "nan",
        """\
        name: nan
        initial: a
        states:
          a:
            action: "echo '{\\"a\\": NaN}'"
            evaluate: {type: output_json, path: .a, operator: eq, target: 0}
            on_success: done
            on_failure: done
            on_error: done
          done:
            terminal: true
        """,
    )
    assert loop_project.run("run", "nan", "--quiet").code == 0
    status = loop_project.run("status", "nan", "--json").out
    json.loads(status, parse_constant=lambda name: pytest.fail(f"{name} in status --json"))
