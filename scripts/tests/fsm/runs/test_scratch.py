"""`${context.run_dir}`: each run's own folder, made before the first step, kept on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.runs.scratch import make_run_dir, run_dir_path, with_run_dir

LOOP = """\
name: scratch
initial: look
states:
  look:
    action: |
      test -d "${context.run_dir}" || exit 1
      echo "folder=${context.run_dir}"
      date +%N > "${context.run_dir}stamp"
    next: done
  done:
    terminal: true
"""


def test_each_run_gets_its_own_folder_before_the_first_step(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "scratch.yaml").write_text(LOOP)
    assert ll_loop(tmp_path, "validate", "scratch").returncode == 0
    folders = []
    for _ in range(2):
        ran = ll_loop(tmp_path, "run", "scratch", "--verbose")
        assert ran.returncode == 0, ran.stderr
        line = next(row for row in ran.stderr.splitlines() if "folder=" in row)
        folder = Path(line.split("folder=", 1)[1].strip())
        assert (folder / "stamp").is_file()
        assert folder.parent == (tmp_path / ".loops" / ".running" / "runs").resolve()
        folders.append(folder)
    assert folders[0] != folders[1]


def test_the_folder_is_kept_in_the_context_so_a_resume_goes_on_there(tmp_path: Path) -> None:
    reads = StateConfig(action="ls ${context.run_dir}", next="b")
    fsm = FSMLoop("x", "a", {"a": reads, "b": StateConfig(terminal=True)})
    given = with_run_dir(fsm, tmp_path, "ab12")
    folder = given.context["run_dir"]
    assert folder == f"{run_dir_path(tmp_path, 'x', 'ab12').resolve()}/"
    # A resumed run's context already has it: kept, and the folder made again.
    again = with_run_dir(given, tmp_path, "zz99")
    assert again.context["run_dir"] == folder
    make_run_dir(again, tmp_path)
    assert Path(folder).is_dir()
    json.dumps(again.context)  # saved with the run's state as it is


def test_a_run_dir_given_by_the_user_wins(tmp_path: Path) -> None:
    fsm = FSMLoop("x", "a", {"a": StateConfig(terminal=True)}, context={"run_dir": "mine/"})
    assert with_run_dir(fsm, tmp_path, "ab12").context["run_dir"] == "mine/"


def test_a_sub_loop_shares_its_parents_folder(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "kid.yaml").write_text(
        "name: kid\ninitial: a\nstates:\n  a:\n"
        '    action: \'echo "kid=${context.run_dir}"; test -d "${context.run_dir}"\'\n'
        "    next: done\n  done:\n    terminal: true\n"
    )
    (tmp_path / ".loops" / "parent.yaml").write_text(
        "name: parent\ninitial: a\nstates:\n  a:\n"
        "    action: 'echo \"parent=${context.run_dir}\"'\n    next: b\n"
        "  b:\n    loop: kid\n    on_success: done\n  done:\n    terminal: true\n"
    )
    ran = ll_loop(tmp_path, "run", "parent", "--verbose")
    assert ran.returncode == 0, ran.stderr
    seen = [row.strip() for row in ran.stderr.splitlines() if "=/" in row and "echo" not in row]
    parent, kid = (row.split("=", 1)[1] for row in seen)
    assert parent == kid
    assert "/runs/parent@" in parent


def test_a_loop_that_never_reads_run_dir_gets_no_folder(tmp_path: Path) -> None:
    from little_loops.fsm.definition.model.typed import FSMLoop
    from little_loops.fsm.runs.scratch import needs_run_dir, with_run_dir

    plain = FSMLoop.from_dict(
        {
            "name": "p",
            "initial": "a",
            "states": {"a": {"action": "true", "next": "b"}, "b": {"terminal": True}},
        }
    )
    assert not needs_run_dir(plain, plain.to_dict())
    assert "run_dir" not in with_run_dir(plain, tmp_path, "r1").context
    reads = FSMLoop.from_dict(
        {
            "name": "q",
            "initial": "a",
            "states": {
                "a": {"action": "ls ${context.run_dir}", "next": "b"},
                "b": {"terminal": True},
            },
        }
    )
    assert with_run_dir(reads, tmp_path, "r1").context["run_dir"].endswith("/q@r1/")


def test_a_planted_runs_link_is_refused_and_nothing_is_made_outside(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".loops" / ".running").mkdir(parents=True)
    outside.mkdir()
    (project / ".loops" / "scratch.yaml").write_text(LOOP)
    (project / ".loops" / ".running" / "runs").symlink_to(outside)
    ran = ll_loop(project, "run", "scratch")
    assert ran.returncode != 0
    assert ran.stderr.splitlines() == [
        "ll-loop: error: .loops/.running/runs: is a symbolic link, not a file ll-loop wrote;"
        " ll-loop does not follow or use such paths among its run files (remove it)"
    ]
    assert list(outside.iterdir()) == []
    saved = project / ".loops" / ".running" / "scratch.state.json"
    assert not saved.exists() or str(outside) not in saved.read_text()


def test_a_run_folder_made_a_link_before_a_resume_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "scratch.yaml").write_text(
        "name: scratch\ninitial: ask\nstates:\n  ask:\n    action_type: approval\n"
        "    action: 'go on in ${context.run_dir}?'\n    on_success: look\n    on_failure: done\n"
        + LOOP.split("states:\n", 1)[1]
    )
    first = ll_loop(tmp_path, "run", "scratch")
    assert first.returncode == 9, first.stderr  # waits on its question (AWAITING_APPROVAL)
    folder = Path(json.loads((tmp_path / ".loops/.running/scratch.state.json").read_text())[
        "context"]["run_dir"])  # fmt: skip
    folder.rmdir()
    folder.symlink_to(outside)
    assert ll_loop(tmp_path, "approve", "scratch").returncode == 0
    again = ll_loop(tmp_path, "resume", "scratch")
    assert again.returncode != 0
    assert "is a symbolic link" in again.stderr
    assert len(again.stderr.splitlines()) == 1, again.stderr
    assert list(outside.iterdir()) == []


def test_two_compat_runs_started_in_the_same_second_never_share_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is claimed as its path is chosen: two runs starting at once (two
    `--worktree` runs of one loop) each got the same `.loops/runs/<loop>-<time>/`."""
    from datetime import datetime

    from little_loops.fsm.runs import scratch

    class _Frozen(datetime):
        @classmethod
        def now(cls, tz: object = None) -> _Frozen:
            return cls(2026, 12, 7, 0, 33, 11)

    monkeypatch.setattr(scratch, "datetime", _Frozen)
    first = scratch.their_run_dir_path(tmp_path, "fix", "ab12")
    second = scratch.their_run_dir_path(tmp_path, "fix", "cd34")
    assert first == tmp_path / "runs" / "fix-20261207T003311"
    assert second == tmp_path / "runs" / "fix-20261207T003311-cd34"
    assert first.is_dir()
