"""`ll-loop new`: a loop file from a skeleton or a shipped loop, in the nearest `.loops/`."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.forkserver import ll_loop

from little_loops.cli.scaffold import SCHEMA_HINT
from little_loops.fsm.definition.model.fanout import fan_out_of
from little_loops.fsm.definition.reading.loader import load_file
from little_loops.fsm.facts.layout import LOOPS_GITIGNORE
from little_loops.fsm.paradigms.registry import compile_paradigm
from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.loops import MODELINE_PREFIX, library_loop_path, library_loops


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with an empty `.loops/`, and `src/pkg/` two levels below it."""
    (tmp_path / ".loops").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return tmp_path


def test_list_shows_each_shipped_loop_with_its_first_comment_line(tmp_path: Path) -> None:
    result = ll_loop(tmp_path, "new", "--list")
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == library_loops()
    assert {"hello", "count-down", "invariants-demo", "whitespace-fix"} <= set(library_loops())
    hello = next(line for line in lines if line.startswith("hello "))
    assert hello.split(None, 1)[1] == library_loop_path("hello").read_text().splitlines()[1][2:]
    assert not (tmp_path / ".loops").exists()  # listing writes nothing


@pytest.mark.parametrize("example", library_loops())
def test_from_copies_a_shipped_loop_that_validates_and_runs(tmp_path: Path, example: str) -> None:
    result = ll_loop(tmp_path, "new", "mine", "--from", example)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert f"created .loops/mine.yaml (a copy of the shipped loop {example})" in result.stdout
    # No .loops/ anywhere up: made here, with the .gitignore `init` writes.
    assert (tmp_path / ".loops" / ".gitignore").read_text() == LOOPS_GITIGNORE
    copy = (tmp_path / ".loops" / "mine.yaml").read_text().splitlines()
    source = library_loop_path(example).read_text().splitlines()
    # The shipped loop's schema line points into the package: the copy says how to find it.
    assert source[0].startswith(MODELINE_PREFIX)
    assert copy[0] == SCHEMA_HINT
    assert "name: mine" in copy
    assert [line for line in copy[1:] if line != "name: mine"] == [
        line for line in source[1:] if line != f"name: {example}"
    ]
    assert load_and_validate(tmp_path / ".loops" / "mine.yaml").name == "mine"
    assert ll_loop(tmp_path, "validate", "--strict", "mine").returncode == 0
    fsm = compile_paradigm(load_file(tmp_path / ".loops" / "mine.yaml").data)
    if any(state.is_prompt() or fan_out_of(state) for state in fsm.states.values()):
        # It calls an agent (a prompt state, or a fan-out of them): e2e/test_library_e2e.py,
        # loops/test_best_of.py and loops/test_fix_each.py run it; here its plan must come out.
        plan = ll_loop(tmp_path, "run", "mine", "--dry-run")
        assert plan.returncode == 0, plan.stderr
        assert plan.stdout.startswith("loop: mine")
        return
    run = ll_loop(tmp_path, "run", "mine", "--quiet")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / ".loops" / ".running" / "mine.state.json").is_file()


def test_new_refuses_to_overwrite_a_loop_file(project: Path) -> None:
    mine = project / ".loops" / "mine.yaml"
    mine.write_text("name: mine\n")
    (project / ".loops" / "other.yml").write_text("name: other\n")
    for argv in (["mine"], ["mine", "--from", "hello"], ["other"]):
        result = ll_loop(project, "new", *argv)
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1
        assert "exists already; new overwrites nothing" in result.stderr
    assert mine.read_text() == "name: mine\n"
    assert not (project / ".loops" / "other.yaml").exists()


@pytest.mark.parametrize("name", ["two words", ".hidden", "a/b", "é", "x" * 201])
def test_new_refuses_a_name_that_is_no_loop_name(project: Path, name: str) -> None:
    result = ll_loop(project, "new", name)
    assert result.returncode == 2
    assert result.stderr.startswith(f"ll-loop: error: cannot name a loop {name!r}: expected")
    assert result.stderr.count("\n") == 1
    assert sorted(p.name for p in (project / ".loops").iterdir()) == []


def test_new_refuses_a_name_whose_file_would_look_compiled(project: Path) -> None:
    result = ll_loop(project, "new", "ok.fsm")
    assert result.returncode == 2
    assert result.stderr == (
        "ll-loop: error: cannot name a loop 'ok.fsm': a name ending in '.fsm' makes a file"
        " that looks like `compile` output\n"
    )
    assert not (project / ".loops" / "ok.fsm.yaml").exists()


def test_the_skeleton_validates_strictly_and_runs_without_claude(project: Path) -> None:
    result = ll_loop(project, "new", "fresh")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    path = project / ".loops" / "fresh.yaml"
    text = path.read_text()
    assert "$schema=" not in text  # a path of this machine would be wrong on the next
    assert SCHEMA_HINT in text.splitlines()
    assert sum(line.startswith("#") for line in text.splitlines()) >= 5  # commented
    fsm = load_and_validate(path)
    assert fsm.name == "fresh"
    assert not any(state.is_prompt() for state in fsm.states.values())
    check = ll_loop(project, "validate", "--strict", "fresh")
    assert (check.returncode, check.stdout) == (0, ".loops/fresh.yaml: ok\n")
    run = ll_loop(project, "run", "fresh", "--quiet")
    assert run.returncode == 0, run.stderr
    assert "Loop completed: done" in run.stderr
    again = ll_loop(project, "new", "fresh")
    assert again.returncode == 1
    assert path.read_text() == text


@pytest.mark.parametrize("name", ["1e3", "true", "007"])
def test_a_name_yaml_reads_as_no_string_is_written_quoted(project: Path, name: str) -> None:
    for argv in ([name], [f"{name}.c", "--from", "hello"]):
        assert ll_loop(project, "new", *argv).returncode == 0
    assert ll_loop(project, "validate", "--strict", name, f"{name}.c").returncode == 0
    assert load_and_validate(project / ".loops" / f"{name}.yaml").name == name


def test_new_writes_in_the_loops_of_a_parent_folder(project: Path) -> None:
    below = project / "src" / "pkg"
    result = ll_loop(below, "new", "up", "--from", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"ll-loop: using {project / '.loops'}\n"
    assert (project / ".loops" / "up.yaml").is_file()
    assert not (below / ".loops").exists()
    assert not (project / ".loops" / ".gitignore").exists()  # an existing .loops/ is kept
    run = ll_loop(below, "run", "up", "--quiet")
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "ll-loop: error: new needs the NAME of the loop to write (or --list)\n"),
        (["x", "--list"], "ll-loop: error: new --list takes no NAME and no --from\n"),
        (["x", "--from", "helo"], "invalid choice: 'helo'"),
    ],
)
def test_new_usage_errors(project: Path, argv: list[str], message: str) -> None:
    result = ll_loop(project, "new", *argv)
    assert result.returncode == 2
    assert message in result.stderr
    assert list((project / ".loops").iterdir()) == []
