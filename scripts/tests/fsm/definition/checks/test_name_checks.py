"""Name lengths: every file name a run makes of a loop's and its states' names fits in 255 bytes."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.checks.name_checks import name_length_problems, run_names
from little_loops.fsm.definition.model.typed import FSMLoop


def loop(name: str, *states: str) -> FSMLoop:
    data = {
        "name": name,
        "initial": states[0],
        "states": {state: {"action": "true", "terminal": True} for state in states},
    }
    return FSMLoop.from_dict(data)


def test_a_state_whose_output_file_name_is_too_long_is_one_error() -> None:
    name, state = "a" * 200, "s" * 100
    (problem,) = name_length_problems(loop(name, "ok", state), [name])
    assert problem.severity == "error"
    assert problem.path == ("states", state)
    assert problem.message == (
        "its action's output file name would be 299 bytes long"
        " (aaaaaaaaaaaaaaaa...sssssss~8c747af1.out), over the 255 a file name may have:"
        " shorten the state's name, or the loop's by 44 bytes"
    )


def test_names_that_fit_pass_and_bytes_are_counted_not_characters() -> None:
    assert name_length_problems(loop("a" * 200, "s" * 45), ["a" * 200]) == []
    assert name_length_problems(loop("fix", "s" * 300), ["fix"]) == []  # cut to 80 + hash
    wide = "é" * 100  # 100 characters, 200 bytes
    (problem,) = name_length_problems(loop("x", "check" * 10), [wide])
    assert "260 bytes long" in problem.message  # 200 + `@xxxx.` + 50 + `.out`
    assert problem.loop == wide


def test_runs_go_by_the_file_name_and_the_loops_own_name() -> None:
    fsm = loop("declared", "s")
    assert run_names(fsm, "/p/.loops/file.yaml") == ["file", "declared"]
    assert run_names(fsm, "/p/.loops/declared.fsm.yaml") == ["declared"]
    assert run_names(fsm, f"/p/{'b' * 201}.yaml") == ["declared"]  # cannot name run files
    assert run_names(fsm, None) == ["declared"]


def test_a_loop_whose_longest_possible_state_name_fits_is_not_measured_state_by_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 20,000 states of a short-named loop: one measure of the longest name any state can
    # make (past the cap, shortened with a hash), not 20,000.
    from little_loops.fsm.facts import layout

    measured: list[str] = []
    real = layout.state_file_names

    def counting(loop_name: str, state_name: str | None = None) -> list[str]:
        measured.append(str(state_name))
        return real(loop_name, state_name)

    monkeypatch.setattr(layout, "state_file_names", counting)
    fsm = loop("fix", *(f"s{i}" for i in range(300)), "x" * 500)
    assert name_length_problems(fsm, ["fix"]) == []
    assert len(measured) == 1
    # A loop name long enough that some state names do not fit: each state is measured.
    measured.clear()
    (problem,) = name_length_problems(fsm, ["a" * 160])
    assert problem.path == ("states", "x" * 500)
    assert len(measured) == 1 + 301
