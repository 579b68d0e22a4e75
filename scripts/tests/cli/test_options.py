"""The run flags of `run` and `resume`: the parser made from the table, the record, the merge."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from support.project import LoopProject

from little_loops.cli import build_parser
from little_loops.cli.options import RunOptions, options_from_args
from little_loops.fsm.definition.model.arguments import Arguments
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.runs.flags import COUNT, DOLLARS, NAME, PAIRED, SWITCH, TEXT, flag_rows
from little_loops.fsm.runs.overrides import RunFlags, apply_overrides, resumed_flags, save_overrides

ROWS = flag_rows(RunFlags)


def test_overrides_recorded_for_resume(loop_project: LoopProject) -> None:
    save_overrides(
        "x", loop_project.loops, RunOptions(max_iterations=3, llm_model="m", max_cost=1.5)
    )
    restored = resumed_flags("x", loop_project.loops, RunOptions(quiet=True))
    assert restored == RunOptions(max_iterations=3, llm_model="m", max_cost=1.5, quiet=True)
    assert (
        apply_overrides(
            FSMLoop.from_dict({"name": "x", "initial": "a", "states": {"a": {"terminal": True}}}),
            restored,
        ).max_cost_usd
        == 1.5
    )
    # Flags given again win over the record.
    again = resumed_flags("x", loop_project.loops, RunOptions(max_iterations=9))
    assert again.max_iterations == 9
    assert resumed_flags("none", loop_project.loops, RunOptions()) == RunOptions()


def test_options_become_the_same_run_flags() -> None:
    options = RunOptions(
        max_iterations=3,
        no_llm=True,
        llm_model="m",
        model="claude-c",
        queue=True,
        quiet=True,
        as_json=True,
    )
    assert options.argv() == [
        "--max-iterations",
        "3",
        "--no-llm",
        "--llm-model",
        "m",
        "--model",
        "claude-c",
        "--queue",
        "--quiet",
        "--json",
    ]
    # ... which the run parser turns back into the same options (background forwarding).
    args = build_parser().parse_args(["run", "x", *options.argv()])
    assert options_from_args(args) == options


def _command(name: str) -> argparse.ArgumentParser:
    for action in build_parser(only=name)._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)[name]
    raise AssertionError("ll-loop has no subcommands")


@pytest.mark.parametrize("command", ["run", "resume"])
def test_every_row_is_an_option_of_run_and_resume(command: str) -> None:
    parser = _command(command)
    by_dest = {action.dest: action for action in parser._actions}
    for name, row in ROWS:
        action = by_dest[name]
        assert tuple(action.option_strings) == row.options
        assert action.help == row.help
        assert action.metavar == row.metavar
        assert action.nargs == (None if row.kind.takes_value else 0)
        assert action.default == row.kind.default
    usage = " ".join(parser.format_help().split())
    for _, row in ROWS:
        assert row.options[0] in usage


def test_each_row_parses_to_its_field_and_back_to_the_same_argv() -> None:
    # One value per row that is not its default: the parser, RunOptions and argv agree.
    samples = [(COUNT, 7), (DOLLARS, 2.5), (TEXT, "m"), (NAME, "c"), (SWITCH, True), (PAIRED, True)]
    given = {name: next(v for kind, v in samples if kind is row.kind) for name, row in ROWS}
    options = RunOptions(**given)
    args = build_parser().parse_args(["run", "x", *options.argv()])
    assert options_from_args(args) == options
    assert set(options.argv()) >= {row.options[-1] for _, row in ROWS}


def test_the_record_holds_the_rows_a_resume_repeats(tmp_path: Path) -> None:
    options = RunOptions(
        max_iterations=2, model="c", max_cost=0.5, quiet=True, as_json=True, queue=True
    )
    save_overrides("x", tmp_path, options)
    written = json.loads(run_files("x", tmp_path).options.read_text())
    assert set(written) == {name for name, row in ROWS if row.resumed}
    assert {"quiet", "as_json", "queue", "verbose", "no_color"}.isdisjoint(written)
    assert written["max_cost"] == 0.5


def test_a_flag_given_to_resume_merges_as_its_row_says(tmp_path: Path) -> None:
    save_overrides("x", tmp_path, RunFlags(max_iterations=3, llm_model="m", wait_approval=True))
    given = RunOptions(model="again", verbose=True, arguments=Arguments(sets=("k=v",)))
    merged = resumed_flags("x", tmp_path, given)
    assert type(merged) is RunOptions
    assert merged.arguments == given.arguments  # what is not a flag stays as given
    for name, row in ROWS:
        saved = {"max_iterations": 3, "llm_model": "m", "wait_approval": True}.get(
            name, row.kind.default
        )
        want = row.merge(getattr(given, name), saved) if row.resumed else getattr(given, name)
        assert getattr(merged, name) == want, name
    assert (merged.max_iterations, merged.model, merged.verbose) == (3, "again", True)


@pytest.mark.parametrize(
    ("given", "want"), [([], None), (["--sandbox"], True), (["--no-sandbox"], False)]
)
def test_sandbox_and_no_sandbox_are_one_row_of_three_values(given: list[str], want: object) -> None:
    options = options_from_args(build_parser().parse_args(["run", "x", *given]))
    assert options.sandbox is want
    assert options.argv() == given  # a background run is started with the same word


def test_sandbox_and_no_sandbox_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", "x", "--sandbox", "--no-sandbox"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("saved", "given", "want"),
    [(True, None, True), (True, False, False), (False, True, True), (None, None, None)],
)
def test_a_resume_keeps_the_saved_sandbox_unless_told(
    tmp_path: Path, saved: bool | None, given: bool | None, want: bool | None
) -> None:
    save_overrides("x", tmp_path, RunFlags(sandbox=saved))
    assert resumed_flags("x", tmp_path, RunOptions(sandbox=given)).sandbox is want


def test_no_sandbox_unconfines_every_state_and_sandbox_confines_them() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "sandbox": {"network": "off"},
            "states": {
                "a": {"action": "true", "next": "b"},
                "b": {"action": "true", "sandbox": "none", "next": "c"},
                "c": {"terminal": True},
            },
        }
    )
    assert fsm.sandbox_for(fsm.states["a"]) is not None
    assert fsm.sandbox_for(fsm.states["b"]) is None
    off = apply_overrides(fsm, RunFlags(sandbox=False))
    assert [off.sandbox_for(s) for s in off.states.values()] == [None, None, None]
    on = apply_overrides(fsm, RunFlags(sandbox=True))
    confined = on.sandbox_for(on.states["b"])
    assert confined is not None
    assert not confined.network
    bare = apply_overrides(
        FSMLoop.from_dict({**fsm.to_dict(), "sandbox": None}), RunFlags(sandbox=True)
    )
    assert bare.sandbox_for(bare.states["a"]) is not None  # bubblewrap where none is named
