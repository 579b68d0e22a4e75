"""`ll-loop compile`, run through main_loop as a user would."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.paths import DATA

from little_loops.cli import main_loop
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.paradigms.registry import compile_paradigm

if TYPE_CHECKING:
    from support.project import LoopProject

PARADIGM_DATA = DATA / "paradigms"

GOAL = """\
paradigm: goal
goal: "No type errors in src/"
tools:
  - /ll:check_code types
  - /ll:manage_issue bug fix
max_iterations: 20
"""
GREET = "paradigm: goal\nname: greet\ngoal: say hi\ntools: ['true']\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], Path]:
    """Run in an empty project folder; the factory writes `.loops/<name>.yaml`."""
    monkeypatch.chdir(tmp_path)

    def write(name: str, text: str) -> Path:
        path = tmp_path / ".loops" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write


def test_without_o_the_fsm_goes_to_stdout_and_no_file_is_written(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    assert main_loop(["compile", str(source)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith(
        f"# Compiled by `ll-loop compile` from {source} (paradigm: goal).\n"
        "# Edit the source file and compile again rather than editing this one.\n"
        "name: goal-no-type-errors\n"
        "initial: evaluate\n"
    )
    assert compile_paradigm(load_text(captured.out).data) == compile_paradigm(
        load_file(source).data
    )
    assert sorted(p.name for p in source.parent.iterdir()) == ["types.yaml"]


def test_compiling_by_name_never_shadows_the_source(loop_project: LoopProject) -> None:
    """`compile NAME` once wrote `.loops/NAME.fsm.yaml`, which a NAME then meant: after the
    next edit of NAME.yaml, `run NAME` was refused as stale."""
    source = loop_project.write("goal", GREET)
    compiled = loop_project.run("compile", "goal")
    assert (compiled.code, compiled.err) == (0, "")
    assert "name: greet\n" in compiled.out
    assert sorted(p.name for p in loop_project.loops.glob("*.yaml")) == ["goal.yaml"]
    os.utime(source, (2_000_000_000, 2_000_000_000))  # the next edit
    assert loop_project.run("run", "goal", "--quiet").code == 0


def test_writing_a_compiled_file_beside_its_source_says_it_now_comes_first(
    loop_project: LoopProject,
) -> None:
    loop_project.write("goal", GREET)
    result = loop_project.run("compile", "goal", "-o", ".loops/goal.fsm.yaml")
    assert (result.code, result.out) == (0, "")
    assert result.err == (
        "wrote .loops/goal.fsm.yaml\n"
        "ll-loop: note: a loop name now means .loops/goal.fsm.yaml, not .loops/goal.yaml; after"
        " editing .loops/goal.yaml, compile it again (or delete .loops/goal.fsm.yaml)\n"
    )


def test_loop_name_resolves_to_loops_folder(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    project("types", GOAL)
    assert main_loop(["compile", "types", "-o", "out.yaml"]) == 0
    assert capsys.readouterr().err == "wrote out.yaml\n"
    assert load_file("out.yaml").data["name"] == "goal-no-type-errors"


def test_dash_output_prints_yaml_to_stdout_only(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    assert main_loop(["compile", str(source), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert compile_paradigm(load_text(captured.out).data) == compile_paradigm(
        load_file(source).data
    )
    assert sorted(p.name for p in source.parent.iterdir()) == ["types.yaml"]


@pytest.mark.parametrize("name", ["goal", "convergence", "invariants", "imperative", "fsm"])
def test_compiled_file_loads_to_an_equal_fsm(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / f"{name}.yaml"
    shutil.copy(PARADIGM_DATA / f"{name}.yaml", source)
    out = tmp_path / f"{name}.fsm.yaml"
    assert main_loop(["compile", str(source), "-o", str(out)]) == 0
    compiled = load_file(out)
    assert compile_paradigm(compiled.data) == compile_paradigm(load_file(source).data)


def test_overwrites_an_existing_output_atomically(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    out = source.with_name("types.fsm.yaml")
    out.write_text("stale\n", encoding="utf-8")
    assert main_loop(["compile", str(source), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") != "stale\n"
    assert sorted(p.name for p in source.parent.iterdir()) == ["types.fsm.yaml", "types.yaml"]
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_refuses_to_overwrite_the_input(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    assert main_loop(["compile", str(source), "-o", str(source)]) == 2
    assert capsys.readouterr().err == (
        f"ll-loop: error: refusing to overwrite the input file {source}; choose another -o\n"
    )
    assert source.read_text(encoding="utf-8") == GOAL


def test_definition_error_exits_2_with_one_line(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("bad", "paradigm: convergence\nname: x\ncheck: c\nusing: u\n")
    out = source.with_name("bad.fsm.yaml")
    assert main_loop(["compile", str(source), "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        "ll-loop: error: paradigm 'convergence': missing required field 'toward'\n",
    )
    assert not out.exists()


def test_unknown_paradigm_exits_2(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("bad", "paradigm: convergance\n")
    assert main_loop(["compile", str(source)]) == 2
    assert capsys.readouterr().err == (
        "ll-loop: error: unknown paradigm 'convergance' (did you mean convergence?);"
        " known: goal, convergence, invariants, imperative, ralph, fsm\n"
    )


def test_missing_input_exits_2(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_loop(["compile", "nope.yaml"]) == 2
    assert capsys.readouterr().err == "ll-loop: error: nope.yaml: no such file\n"


def test_unwritable_output_exits_1(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    assert main_loop(["compile", str(source), "-o", "missing/dir/out.yaml"]) == 1
    assert capsys.readouterr().err == (
        "ll-loop: error: cannot write missing/dir/out.yaml: No such file or directory\n"
    )


def test_an_output_that_is_not_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    # A FIFO nobody reads blocked the write for ever; a socket was replaced by a file.
    import socket

    from support import llproc

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "greet.yaml").write_text(GREET)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        for output, why in (
            ("fifo", "a FIFO nobody reads (start its reader first)"),
            ("folder", "is a directory, not a file"),
            ("sock", "is a socket, not a file"),
        ):
            done = llproc.console(tmp_path, "compile", "greet", "-o", output)
            assert (done.returncode, done.stderr) == (
                1,
                f"ll-loop: error: cannot write {output}: {why}\n",
            )
    assert (tmp_path / "sock").is_socket()


def test_a_fifo_with_a_reader_and_dev_null_are_written_to(
    project: Callable[[str, str], Path], tmp_path: Path
) -> None:
    source = project("types", GOAL)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (the FSM fits in the pipe's buffer)
    try:
        assert main_loop(["compile", str(source), "-o", str(fifo)]) == 0
        assert os.read(reader, 65536).startswith(b"# Compiled by `ll-loop compile`")
    finally:
        os.close(reader)
    assert main_loop(["compile", str(source), "-o", os.devnull]) == 0


def test_name_compiles_the_source_not_its_compiled_output(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project("types", GOAL)
    out = ".loops/types.fsm.yaml"
    assert main_loop(["compile", "types", "-o", out]) == 0
    assert main_loop(["compile", "types", "-o", out]) == 0
    assert capsys.readouterr().err.count(f"wrote {out}\n") == 2
    assert sorted(p.name for p in source.parent.iterdir()) == ["types.fsm.yaml", "types.yaml"]


def test_unknown_name_exits_2(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    project("types", GOAL)
    assert main_loop(["compile", "typse"]) == 2
    assert capsys.readouterr().err == (
        "ll-loop: error: no loop named 'typse' (did you mean types?); looked for"
        " .loops/typse.fsm.yaml, .loops/typse.yaml, .loops/typse.yml; available: types\n"
    )


def test_invalid_fsm_file_exits_2_naming_the_key(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = project(
        "raw",
        "name: raw\ninitial: a\nstates:\n  a: {action: 'true', on_sucess: b}\n"
        "  b: {terminal: true}\n",
    )
    assert main_loop(["compile", str(source), "-o", "-"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"ll-loop: error: {source}:4: loop 'raw' > states > a > on_sucess: unknown key"
        " (did you mean on_success?)\n"
    )


def test_validate_compiles_a_paradigm_file(
    project: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    project("types", GOAL)
    project("bad", "paradigm: imperative\nname: b\nsteps: [make]\n")
    assert main_loop(["validate", "types"]) == 0
    assert main_loop(["validate", "bad"]) == 2
    out = capsys.readouterr().out
    assert (
        ".loops/bad.yaml: error: loop 'b': missing required field 'until' (paradigm imperative)"
        in out
    )


def test_paradigm_errors_point_at_the_bad_field(loop_project: LoopProject) -> None:
    loop_project.write(
        "inv",
        """\
        paradigm: invariants
        name: inv
        constraints:
          - name: a
            check: "true"
            fix: [1]
        """,
    )
    result = loop_project.run("validate", "inv")
    assert result.code == 2
    assert result.out == (
        ".loops/inv.yaml:6: error: loop 'inv' > constraints > 0 > fix: "
        "expected a string, got list (paradigm invariants)\n"
    )


def test_a_stale_compiled_file_is_refused_by_name_and_noted_by_path(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "goal",
        """\
        paradigm: goal
        name: greet
        goal: say hi
        tools: ["true"]
        """,
    )
    assert loop_project.run("compile", "goal", "-o", ".loops/goal.fsm.yaml").code == 0
    compiled = loop_project.loops / "goal.fsm.yaml"
    source = loop_project.loops / "goal.yaml"
    fresh = loop_project.run("validate", "goal")
    assert fresh.out == ".loops/goal.fsm.yaml: ok\n"
    os.utime(compiled, (1_000_000, 1_000_000))  # the source is now newer than its compile
    refusal = (
        ".loops/goal.fsm.yaml is older than .loops/goal.yaml, which was edited after it was "
        "compiled; re-compile it with 'll-loop compile .loops/goal.yaml -o "
        ".loops/goal.fsm.yaml' or delete .loops/goal.fsm.yaml"
    )
    for argv in (("run", "goal"), ("graph", "goal"), ("simulate", "goal")):
        refused = loop_project.run(*argv)
        assert (refused.code, refused.out, refused.err) == (2, "", f"ll-loop: error: {refusal}\n")
    stale = loop_project.run("validate", "goal")
    assert (stale.code, stale.out) == (2, f"goal: error: {refusal}\n")
    # A path is the user's explicit choice: it runs, with a note.
    note = (
        ".loops/goal.fsm.yaml is older than .loops/goal.yaml: it runs as compiled before "
        "that edit; refresh it with 'll-loop compile .loops/goal.yaml -o .loops/goal.fsm.yaml'"
        " (or delete it)"
    )
    by_path = loop_project.run("validate", ".loops/goal.fsm.yaml")
    assert by_path.out == (
        f".loops/goal.fsm.yaml: warning: {note}\n.loops/goal.fsm.yaml: ok (1 warning)\n"
    )
    assert loop_project.run("validate", "--strict", ".loops/goal.fsm.yaml").code == 2
    run = loop_project.run("run", ".loops/goal.fsm.yaml", "--quiet")
    assert run.code == 0
    assert run.err.startswith(f"ll-loop: note: {note}\n")
    # The command the refusal names fixes it.
    assert loop_project.run("compile", ".loops/goal.yaml", "-o", ".loops/goal.fsm.yaml").code == 0
    assert loop_project.run("run", "goal", "--quiet").code == 0
    assert source.exists()


def test_with_stdout_closed_compile_says_so_in_one_line(
    project: Callable[[str, str], Path],
) -> None:
    import subprocess
    import sys

    source = project("types", GOAL)
    result = subprocess.run(
        [sys.executable, "-m", "little_loops.cli", "compile", str(source)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),  # `ll-loop compile x >&-`
    )
    assert (result.returncode, result.stderr) == (
        2,
        "ll-loop: error: standard output is closed: write the FSM with -o FILE\n",
    )
