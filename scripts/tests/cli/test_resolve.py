from __future__ import annotations

from pathlib import Path

import pytest
from support.project import LoopProject

from little_loops.cli.resolve import available_loops, resolve_loop_path
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError


@pytest.fixture
def loops(tmp_path: Path) -> Path:
    folder = tmp_path / ".loops"
    folder.mkdir()
    for name in ("fix-types.yaml", "lint.yml", "conv.yaml", "conv.fsm.yaml", ".hidden.yaml"):
        (folder / name).write_text("name: x\n")
    (folder / "notes.txt").write_text("")
    (folder / ".running").mkdir()
    return folder


def test_available_loops(loops: Path) -> None:
    assert available_loops(loops) == ["conv", "fix-types", "lint"]
    assert available_loops(loops / "missing") == []


def test_an_existing_path_is_used_as_is(loops: Path) -> None:
    assert resolve_loop_path(str(loops / "lint.yml"), loops) == loops / "lint.yml"


def test_a_name_prefers_the_compiled_fsm_then_yaml_then_yml(loops: Path) -> None:
    assert resolve_loop_path("conv", loops) == loops / "conv.fsm.yaml"
    assert resolve_loop_path("fix-types", loops) == loops / "fix-types.yaml"
    assert resolve_loop_path("lint", loops) == loops / "lint.yml"


def test_an_unknown_name_says_where_it_looked_and_what_exists(loops: Path) -> None:
    with pytest.raises(LoopDefinitionError) as info:
        resolve_loop_path("fix-type", loops)
    assert str(info.value) == (
        f"no loop named 'fix-type' (did you mean fix-types?); looked for "
        f"{loops}/fix-type.fsm.yaml, "
        f"{loops}/fix-type.yaml, {loops}/fix-type.yml; available: conv, fix-types, lint"
    )


def test_an_unknown_name_without_loops(tmp_path: Path) -> None:
    with pytest.raises(
        LoopDefinitionError,
        match=r"; there is no .*/nowhere/ folder here or above \('ll-loop init' makes one\)$",
    ):
        resolve_loop_path("x", tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoopDefinitionError, match=r"; .*/empty/ has no loops$"):
        resolve_loop_path("x", tmp_path / "empty")


def test_a_missing_path_is_not_looked_up_as_a_name(loops: Path) -> None:
    with pytest.raises(LoopFileError) as info:
        resolve_loop_path("lint.yaml", loops)
    assert str(info.value) == "lint.yaml: no such file"
    with pytest.raises(LoopFileError, match="is a directory, not a loop file"):
        resolve_loop_path(f"{loops}/", loops)


def test_a_loop_file_name_too_long_for_its_compiled_twin_still_lists_and_runs(
    loop_project: LoopProject,
) -> None:
    name = "a" * 250  # NAME.fsm.yaml would be 259 bytes: past the file system's 255
    (loop_project.loops / f"{name}.yaml").write_text(
        "name: long\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    )
    listed = loop_project.run("list")
    assert listed.code == 0, listed.err
    assert name in listed.out
    assert loop_project.run("run", name).code == 0
