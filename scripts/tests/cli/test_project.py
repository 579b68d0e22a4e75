"""Any folder of a project: `.loops/` found in a parent, `init`, `schema`, runs ignored by git."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from support.llproc import console

from little_loops.fsm.validate.json_schema import SCHEMA_FILE

WHERE = """\
name: where
initial: look
states:
  look:
    action: pwd > where.txt
    next: done
  done:
    terminal: true
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with `.loops/where.yaml`, and `src/pkg/` two levels below it."""
    root = tmp_path / "root"
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "where.yaml").write_text(WHERE)
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def test_every_command_finds_the_loops_of_a_parent_folder(project: Path) -> None:
    below = project / "src" / "pkg"
    note = f"ll-loop: using {project / '.loops'}\n"
    run = console(below, "run", "where", "--quiet")
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith(note)
    assert (project / "where.txt").read_text() == f"{project}\n"  # run in the project root
    assert not (below / "where.txt").exists()
    assert not (below / ".loops").exists()
    status = console(below, "status", "where")
    assert (status.returncode, status.stderr) == (0, note)
    assert "status:    completed: ended in done (success)" in status.stdout
    as_json = console(below, "status", "where", "--json")
    assert json.loads(as_json.stdout)["status"] == "completed"  # the note is not on stdout
    history = console(below, "history", "where")
    assert history.returncode == 0
    assert "loop_complete" in history.stdout
    listed = console(below, "list")
    assert listed.returncode == 0
    assert "where  fsm       completed" in listed.stdout
    valid = console(below, "validate", "where")
    assert (valid.returncode, valid.stdout) == (0, f"{project / '.loops' / 'where.yaml'}: ok\n")
    here = console(project, "status", "where")  # in the root itself: no note
    assert (here.returncode, here.stderr) == (0, "")


def test_without_loops_up_to_the_root_the_error_stays_one_line(tmp_path: Path) -> None:
    assert not [p for p in (tmp_path, *tmp_path.parents) if (p / ".loops").exists()]
    result = console(tmp_path, "run", "where")
    assert result.returncode == 2
    assert result.stderr == (
        "ll-loop: error: no loop named 'where'; looked for .loops/where.fsm.yaml, "
        ".loops/where.yaml, .loops/where.yml; there is no .loops/ folder here or above"
        " ('ll-loop init' makes one)\n"
    )


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_init_then_run_leaves_git_clean_but_for_what_the_loop_wrote(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    init = console(tmp_path, "init")
    assert init.returncode == 0, init.stderr
    assert "created .loops/.gitignore\ncreated .loops/example.yaml\n" in init.stdout
    assert "ll-loop run example" in init.stdout
    assert "ll-loop validate example" in init.stdout
    ignored = (tmp_path / ".loops" / ".gitignore").read_text().splitlines()
    assert ignored[-3:] == [".running/", ".history/", ".worktrees/"]
    example = (tmp_path / ".loops" / "example.yaml").read_text()
    # It is committed: nothing in it is a path of this machine (the schema's is not).
    assert example.startswith("# An example loop written by `ll-loop init`")
    assert "$schema=" not in example
    assert str(SCHEMA_FILE.parent) not in example
    assert "`ll-loop schema`" in example
    assert console(tmp_path, "validate", "--strict", "example").returncode == 0
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    run = console(tmp_path, "run", "example", "--quiet")
    assert run.returncode == 0, run.stderr
    assert git(tmp_path, "status", "--porcelain") == "?? hello.txt\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_run_without_init_is_ignored_by_git_too(project: Path) -> None:
    git(project, "init", "-q")
    (project / ".gitignore").write_text("*.log\n")
    assert console(project, "run", "where", "--quiet").returncode == 0
    assert git(project, "status", "--porcelain", "-uall") == (
        "?? .gitignore\n?? .loops/where.yaml\n?? where.txt\n"
    )
    assert (project / ".gitignore").read_text() == "*.log\n"  # the user's file is untouched
    assert not (project / ".loops" / ".gitignore").exists()


def test_init_adds_only_what_is_missing_and_refuses_when_nothing_is(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / ".gitignore").write_text("mine\n")
    first = console(tmp_path, "init")
    assert first.returncode == 0
    assert "created .loops/example.yaml\nkept .loops/.gitignore as it was\n" in first.stdout
    assert (tmp_path / ".loops" / ".gitignore").read_text() == "mine\n"
    (tmp_path / ".loops" / "example.yaml").write_text("name: mine\n")
    again = console(tmp_path, "init")
    assert (again.returncode, again.stdout) == (1, "")
    assert again.stderr == (
        "ll-loop: error: .loops/ is set up already: .loops/.gitignore and "
        ".loops/example.yaml exist, and init overwrites nothing\n"
    )
    assert (tmp_path / ".loops" / "example.yaml").read_text() == "name: mine\n"


def test_schema_prints_the_installed_schema_path_or_its_content(tmp_path: Path) -> None:
    path = console(tmp_path, "schema")
    assert (path.returncode, path.stdout) == (0, f"{SCHEMA_FILE}\n")
    assert Path(path.stdout.strip()).is_file()
    content = console(tmp_path, "schema", "--content")
    assert content.returncode == 0
    assert json.loads(content.stdout) == json.loads(SCHEMA_FILE.read_text())


NAMELESS = """\
paradigm: goal
goal: say hi
tools: ["true"]
"""


@pytest.mark.parametrize("given", ["fix-it", ".loops/fix-it.yaml"])
def test_a_nameless_loop_is_found_by_its_file_name_or_path(project: Path, given: str) -> None:
    (project / ".loops" / "fix-it.yaml").write_text(textwrap.dedent(NAMELESS))
    assert console(project, "run", "fix-it", "--quiet").returncode == 0
    # Runs go by the file's name (the paradigm's name for it is goal-say-hi).
    assert (project / ".loops" / ".running" / "fix-it.state.json").is_file()
    status = console(project, "status", given)
    assert status.returncode == 0, status.stderr
    assert "loop:         fix-it\nstatus:       completed" in status.stdout
    history = console(project, "history", given, "--tail", "1")
    assert history.returncode == 0
    assert "Loop completed: done" in history.stdout
    stop = console(project, "stop", given)
    assert stop.stderr == "ll-loop: loop 'fix-it' is not running (last status: completed)\n"
    listed = console(project, "list", "--json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert (rows["fix-it"]["loop"], rows["fix-it"]["status"]) == ("fix-it", "completed")


RETRY = """\
name: fix-types
initial: a
max_iterations: 2
states:
  a:
    action: echo a >> log.txt; false
    on_success: done
    on_failure: a
  done:
    terminal: true
"""


def test_resume_in_another_folder_finds_the_file_the_run_came_from(project: Path) -> None:
    (project / ".loops" / "fix.yaml").write_text(RETRY)  # its name is not its file name
    assert console(project, "run", "fix", "--quiet").returncode == 3
    resumed = console(project / "src" / "pkg", "resume", "fix", "-n", "3", "--quiet")
    assert resumed.returncode == 3, resumed.stderr
    assert (project / "log.txt").read_text() == "a\na\na\n"
