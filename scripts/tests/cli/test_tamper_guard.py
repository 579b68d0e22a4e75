"""`tamper_guard: fail | revert | allow`: a state whose action changed test files, in a real
git repository, through the console script and real bash."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support.gitrepo import git, make_repo, run_env
from support.llproc import events, ll_loop

from little_loops.fsm.facts.outcomes import ExitCode

ORIGINAL = "def test_sum():\n    assert 1 + 1 == 2\n"

FIX = """\
    name: fix
    tamper_guard: {policy}
    initial: work
    states:
      work:
        action: 'echo "def test_sum(): pass" > tests/test_sum.py; echo code >> app.py'
        on_success: done
        on_failure: tampered
      tampered:
        terminal: true
        outcome: failure
      done:
        terminal: true
"""


def _repo(tmp_path: Path, policy: str, action: str | None = None) -> Path:
    root = tmp_path / "project"
    text = textwrap.dedent(FIX.format(policy=policy))
    if action is not None:
        text = text.replace(
            "'echo \"def test_sum(): pass\" > tests/test_sum.py; echo code >> app.py'", action
        )
    make_repo(root, {".loops/fix.yaml": text, "tests/test_sum.py": ORIGINAL, "app.py": ""})
    return root


def _run(root: Path) -> tuple[int, dict[str, object], str]:
    done = ll_loop(root, "run", "fix", "--json", env=run_env())
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def _guard_error(root: Path) -> str:
    (judged,) = [e for e in events(root, "fix") if e.get("type") == "tamper_guard"]
    return str(judged["error"])


def test_fail_routes_a_tampering_action_to_the_failure_terminal(tmp_path: Path) -> None:
    root = _repo(tmp_path, "fail")
    code, end, err = _run(root)
    assert code == ExitCode.TERMINAL_FAILURE, err
    assert end["final_state"] == "tampered"
    assert "tests/test_sum.py (modified)" in _guard_error(root)
    assert (root / "tests" / "test_sum.py").read_text() != ORIGINAL  # fail does not undo


def test_revert_restores_the_test_and_routes_on(tmp_path: Path) -> None:
    root = _repo(tmp_path, "revert")
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    assert (root / "tests" / "test_sum.py").read_text() == ORIGINAL
    assert (root / "app.py").read_text() == "code\n"  # the rest of the work stays
    assert git(root, "status", "--porcelain", "tests") == ""


def test_allow_keeps_the_change_and_routes_on(tmp_path: Path) -> None:
    root = _repo(tmp_path, "allow")
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert (root / "tests" / "test_sum.py").read_text() != ORIGINAL


@pytest.mark.parametrize("policy", ["fail", "revert"])
def test_an_action_that_leaves_tests_alone_is_not_stopped(tmp_path: Path, policy: str) -> None:
    root = _repo(tmp_path, policy, action="'echo code >> app.py'")
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"


def test_an_added_test_file_is_found_under_fail(tmp_path: Path) -> None:
    root = _repo(tmp_path, "fail", action="'echo x > tests/test_new.py'")
    code, end, err = _run(root)
    assert code == ExitCode.TERMINAL_FAILURE, err
    assert "tests/test_new.py (added)" in _guard_error(root)


USER_WORK = "def test_sum():\n    assert 1 + 1 == 2  # the user's own edit, not committed\n"


@pytest.mark.parametrize("staged", [False, True], ids=["unstaged", "staged"])
def test_revert_keeps_the_users_uncommitted_edit_made_before_the_run(
    tmp_path: Path, staged: bool
) -> None:
    root = _repo(tmp_path, "revert")
    (root / "tests" / "test_sum.py").write_text(USER_WORK)
    if staged:
        git(root, "add", "tests/test_sum.py")
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    assert (root / "tests" / "test_sum.py").read_text() == USER_WORK


@pytest.mark.parametrize(
    ("action", "path"),
    [
        ("'echo x > tests/test_sum.py; git add tests/test_sum.py'", "tests/test_sum.py"),
        ("'git rm -q tests/test_sum.py'", "tests/test_sum.py"),
        ("'echo x > tests/test_mine.py'", "tests/test_mine.py"),
        ("'echo x > \"tests/test_é [x].py\"'", "tests/test_é [x].py"),
    ],
    ids=["staged-by-the-action", "git-rm", "untracked-test", "unusual-name"],
)
def test_revert_puts_back_what_was_there_however_the_action_changed_it(
    tmp_path: Path, action: str, path: str
) -> None:
    root = _repo(tmp_path, "revert", action=action)
    before = ORIGINAL if path == "tests/test_sum.py" else "def test_mine(): pass\n"
    (root / path).write_text(before)
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    assert (root / path).read_text() == before
    if path == "tests/test_sum.py":
        assert git(root, "status", "--porcelain", "tests") == ""


OUTSIDE = "a file of the user's, outside the project\n"


@pytest.mark.parametrize("staged", [False, True], ids=["users-edit", "staged-by-the-action"])
def test_revert_replaces_a_link_to_a_file_outside_never_writes_through_it(
    tmp_path: Path, staged: bool
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE)
    action = f"'ln -sf {outside} tests/test_sum.py'"
    if staged:
        action = f"'ln -sf {outside} tests/test_sum.py; git add tests/test_sum.py'"
    root = _repo(tmp_path, "revert", action=action)
    (root / "tests" / "test_sum.py").write_text(USER_WORK)  # saved before the action
    code, end, err = _run(root)
    assert outside.read_text() == OUTSIDE  # nothing went through the link
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    test = root / "tests" / "test_sum.py"
    assert not test.is_symlink()
    assert test.read_text() == USER_WORK


def test_revert_under_a_folder_made_a_link_writes_nothing_outside_and_fails(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    action = f"'rm -rf tests && ln -s {elsewhere} tests'"
    root = _repo(tmp_path, "revert", action=action)
    (root / "tests" / "test_mine.py").write_text("def test_mine(): pass\n")  # untracked
    code, end, err = _run(root)
    assert list(elsewhere.iterdir()) == []  # nothing written below the link
    assert code == ExitCode.TERMINAL_FAILURE, err
    assert end["final_state"] == "tampered"


def test_a_test_file_made_a_link_to_an_identical_copy_is_found(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(ORIGINAL)
    root = _repo(tmp_path, "fail", action=f"'ln -sf {copy} tests/test_sum.py'")
    code, end, err = _run(root)
    assert code == ExitCode.TERMINAL_FAILURE, err
    assert "tests/test_sum.py (modified)" in _guard_error(root)


def test_a_test_file_made_a_fifo_is_found_and_put_back_without_waiting_on_it(
    tmp_path: Path,
) -> None:
    """Opening a FIFO nobody writes to waits forever: the guard compares it by its kind."""
    action = "'rm tests/test_sum.py && mkfifo tests/test_sum.py'"
    root = _repo(tmp_path, "revert", action=action)
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["final_state"] == "done"
    assert (root / "tests" / "test_sum.py").read_text() == ORIGINAL


def test_a_big_untracked_test_file_is_put_back_and_not_copied_into_the_runs_log(
    tmp_path: Path,
) -> None:
    """The test files before the action are saved with the run (a resume judges with
    them): a file's bytes go to git's object store, the log holds only its blob id."""
    root = _repo(tmp_path, "revert", action="'echo x > tests/data.bin'")
    data = bytes(range(256)) * (16 * 1024)  # 4 MiB, not committed
    (root / "tests" / "data.bin").write_bytes(data)
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert (root / "tests" / "data.bin").read_bytes() == data
    log = root / ".loops" / ".running" / "fix.events.jsonl"
    assert log.stat().st_size < 64 * 1024


SPIN = """\
    name: fix
    tamper_guard: revert
    initial: work
    states:
      work:
        action: 'n=$(cat .n 2>/dev/null || echo 0); echo $((n+1)) > .n; [ $n -ge 3 ]'
        on_success: done
        on_failure: work
      done:
        terminal: true
"""


def test_the_test_files_before_each_action_are_saved_in_gits_store_not_the_runs_log(
    tmp_path: Path,
) -> None:
    """1,000 test files, four guarded steps: each step's picture of the test files (their
    hashes, 170 kB here) goes to git's object store, the log holds its blob id."""
    root = tmp_path / "project"
    tests = {f"tests/test_{i}.py": f"def test_{i}(): pass\n" for i in range(1000)}
    make_repo(root, {".loops/fix.yaml": textwrap.dedent(SPIN), **tests})
    code, end, err = _run(root)
    assert code == ExitCode.OK, err
    assert end["iterations"] == 4
    log = root / ".loops" / ".running" / "fix.events.jsonl"
    assert log.stat().st_size < 64 * 1024


HANDOFF = """\
    name: fix
    tamper_guard: {policy}
    on_handoff: {on_handoff}
    agents:
      mine:
        command: ./agent.sh
        cost_pattern: 'cost: \\$([0-9.]+)'
    initial: work
    states:
      work:
        action: make the tests pass
        action_type: prompt
        agent: mine
        evaluate:
          type: exit_code
        on_success: done
        on_failure: tampered
      tampered:
        terminal: true
        outcome: failure
      done:
        terminal: true
"""
AGENT = """\
#!/bin/bash
echo "def test_sum(): pass" > tests/test_sum.py
echo "cost: $0.01"
echo "CONTEXT_HANDOFF: the tests pass now"
"""


@pytest.mark.parametrize("on_handoff", ["terminate", "pause"])
@pytest.mark.parametrize("policy", ["fail", "revert"])
def test_an_agent_that_hands_off_after_tampering_is_judged_first(
    tmp_path: Path, policy: str, on_handoff: str
) -> None:
    """A prompt's CONTEXT_HANDOFF ended (or paused) the run before the guards judged its
    action: the changed test was kept, and the run ended as a handoff."""
    root = tmp_path / "project"
    loop = textwrap.dedent(HANDOFF.format(policy=policy, on_handoff=on_handoff))
    make_repo(root, {".loops/fix.yaml": loop, "tests/test_sum.py": ORIGINAL, "agent.sh": AGENT})
    (root / "agent.sh").chmod(0o755)
    code, end, err = _run(root)
    if policy == "fail":
        assert code == ExitCode.TERMINAL_FAILURE, err
        assert end["final_state"] == "tampered"
    else:
        assert str(end["terminated_by"]).startswith("handoff"), err
    assert (root / "tests" / "test_sum.py").read_text() == (
        ORIGINAL if policy == "revert" else "def test_sum(): pass\n"
    )
    (judged,) = [e for e in events(root, "fix") if e.get("event") == "guards"]
    assert judged["tamper_guard"]["findings"] == [{"path": "tests/test_sum.py", "kind": "modified"}]


def test_the_guards_verdict_is_written_before_it_routes_and_history_shows_it(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path, "fail")
    code, _, err = _run(root)
    assert code == ExitCode.TERMINAL_FAILURE, err
    kinds = [e["event"] for e in events(root, "fix")]
    assert kinds.index("guards") < kinds.index("evaluate") < kinds.index("route")
    shown = ll_loop(root, "history", "fix", env=run_env()).stdout
    assert "work → tamper_guard: tests/test_sum.py (modified)" in shown
    (failed,) = [e for e in events(root, "fix") if e.get("type") == "tamper_guard"]
    assert failed["error"] == (
        "tamper_guard: the action of state 'work' changed test files: tests/test_sum.py (modified)"
    )
