"""`prepatch_check: fail | warn | allow`: the tests a state's action added run on the code before
its patch, in a real git repository, through the console script, real bash and real pytest."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

from support.doc_blocks import all_blocks
from support.gitrepo import git, loops_project, run_env
from support.llproc import events, finish, ll_loop, start, state, wait_for

from little_loops.fsm.facts.outcomes import ExitCode

CALC = "def add(a, b):\n    return a - b\n"  # the bug the patch fixes
TESTS = "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
# The patch: the fix, and new tests (test_sum fails before it; test_weak passes either way).
FIX = "def add(a, b):\n    return a + b\n"
SUM = "\n\ndef test_sum():\n    assert add(2, 2) == 4\n"
WEAK = "\n\ndef test_weak():\n    assert add(1, 0) == 1\n"
SLOW = "\n\ndef test_slow():\n    import time\n    time.sleep(600)\n"

LOOP = """\
    name: fix
    prepatch_check: {policy}
    initial: work
    states:
      work:
        action: cp patch/calc.py calc.py && cat patch/new_tests.py >> tests/test_calc.py
        on_yes: done
        on_no: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def _project(tmp_path: Path, policy: str, new_tests: str) -> Path:
    root = loops_project(
        tmp_path,
        {
            ".loops/fix.yaml": textwrap.dedent(LOOP.format(policy=policy)),
            "calc.py": CALC,
            "tests/test_calc.py": TESTS,
            "patch/calc.py": FIX,
            "patch/new_tests.py": new_tests,
        },
    )
    (tmp_path / "tmp").mkdir()
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    """pytest is this Python's (first on PATH); forks go to a temporary folder we can see."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return run_env(PATH=path, TMPDIR=str(tmp_path / "tmp"))


def _run(tmp_path: Path, root: Path) -> tuple[int, dict[str, Any], str]:
    done = ll_loop(root, "run", "fix", "--json", env=_env(tmp_path), timeout=120)
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def _record(root: Path) -> dict[str, Any]:
    (record,) = state(root, "fix")["context"]["_prepatch_check"]
    return dict(record)


def _no_fork(tmp_path: Path, root: Path) -> None:
    """The fork is gone, and git's record of it; the checkout holds the patch, nothing else."""
    assert list((tmp_path / "tmp").iterdir()) == []
    assert len(git(root, "worktree", "list").splitlines()) == 1
    changed = sorted(line[3:] for line in git(root, "status", "--porcelain").splitlines())
    assert changed == ["calc.py", "tests/test_calc.py"]
    assert (root / "calc.py").read_text() == FIX


def test_fail_catches_a_new_test_that_passes_before_the_patch(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", SUM + WEAK)
    code, end, err = _run(tmp_path, root)
    assert code == ExitCode.TERMINAL_FAILURE, err
    assert end["final_state"] == "failed"
    (judged,) = [e for e in events(root, "fix") if e.get("type") == "prepatch_check"]
    assert judged["error"].endswith("pass without its patch: tests/test_calc.py::test_weak")
    record = _record(root)
    assert record["verdict"] == "flagged"
    assert record["base_ref"] == git(root, "rev-parse", "HEAD").strip()
    flags = {t["nodeid"]: (t["category"], t["flag"]) for t in record["tests"]}
    assert flags == {
        "tests/test_calc.py::test_sum": ("fail", "none"),
        "tests/test_calc.py::test_weak": ("pass", "hard"),
    }
    _no_fork(tmp_path, root)


def test_a_new_test_that_fails_before_the_patch_passes_the_check(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", SUM)
    code, end, err = _run(tmp_path, root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    assert _record(root)["verdict"] == "clean"
    _no_fork(tmp_path, root)


def test_warn_records_an_event_and_routes_on(tmp_path: Path) -> None:
    root = _project(tmp_path, "warn", WEAK)
    code, end, err = _run(tmp_path, root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    (flagged,) = [e for e in events(root, "fix") if e["event"] == "prepatch_check_flagged"]
    assert flagged["tests"] == ["tests/test_calc.py::test_weak"]
    assert _record(root)["verdict"] == "flagged"
    _no_fork(tmp_path, root)


def test_allow_only_records(tmp_path: Path) -> None:
    root = _project(tmp_path, "allow", WEAK)
    code, end, err = _run(tmp_path, root)
    assert code == ExitCode.OK, err
    assert not [e for e in events(root, "fix") if e["event"] == "prepatch_check_flagged"]
    assert _record(root)["verdict"] == "flagged"
    _no_fork(tmp_path, root)


def test_a_failed_action_is_not_checked(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", WEAK)
    (root / "patch" / "calc.py").unlink()
    git(root, "commit", "-qam", "no fix")
    code, end, err = _run(tmp_path, root)
    assert end["final_state"] == "failed", err
    assert _record(root)["skipped_reason"] == "the state's action did not succeed"


def test_a_project_that_is_no_git_repository_is_skipped(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", WEAK)
    (root / ".git").rename(tmp_path / "git-away")
    code, end, err = _run(tmp_path, root)
    assert code == ExitCode.OK, err
    assert _record(root)["skipped_reason"] == "not a git repository"


def test_ctrl_c_while_the_tests_run_removes_the_fork(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", SLOW)
    proc = start(root, "run", "fix", env=_env(tmp_path))
    try:
        wait_for(lambda: len(git(root, "worktree", "list").splitlines()) == 2, 60, "the fork")
        wait_for(lambda: bool(list((tmp_path / "tmp").glob("*/.prepatch-run"))), 30, "pytest")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
    finish(proc, timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED
    _no_fork(tmp_path, root)


def test_the_loops_timeout_cuts_the_tests_short_and_removes_the_fork(tmp_path: Path) -> None:
    root = _project(tmp_path, "fail", SLOW)
    loop = root / ".loops" / "fix.yaml"
    loop.write_text(loop.read_text().replace("initial: work", "initial: work\ntimeout: 8"))
    git(root, "commit", "-qam", "timeout")
    code, end, err = _run(tmp_path, root)
    assert end["terminated_by"] == "timeout", err
    _no_fork(tmp_path, root)


def test_the_docs_example_catches_a_weak_test(tmp_path: Path) -> None:
    (example,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: fix-add")]
    root = _project(tmp_path, "fail", SUM + WEAK)
    (root / ".loops" / "fix-add.yaml").write_text(example.text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the docs' loop")
    done = ll_loop(root, "run", "fix-add", "--json", env=_env(tmp_path), timeout=120)
    assert done.returncode == ExitCode.TERMINAL_FAILURE, done.stderr
    assert json.loads(done.stdout)["final_state"] == "failed"
    (record,) = state(root, "fix-add")["context"]["_prepatch_check"]
    assert [t["nodeid"] for t in record["tests"] if t["flag"] == "hard"] == [
        "tests/test_calc.py::test_weak"
    ]
    _no_fork(tmp_path, root)
