"""`ll-loop run --worktree`: a run on its own branch in its own worktree, never in the user's
checkout; several at once; kill -9 then `resume` in the same worktree. Real git, real bash."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from support.doc_blocks import all_blocks
from support.forkserver import ll_loop
from support.gitrepo import git, make_repo, picture, run_env
from support.llproc import start, wait_for
from support.slowdown import scaled

from little_loops.fsm.facts.layout import output_file_name, run_files, split_run_key, stderr_file
from little_loops.fsm.facts.outcomes import ExitCode

FIX_ISSUE = """\
    name: fix-issue
    parameters:
      issue: integer
    initial: fix
    max_iterations: 10
    states:
      fix:
        action: sleep "${context.pause}"; echo "fix for issue ${context.issue}" >> fixes.txt
        commit: true
        next: check
      check:
        action: test "$(wc -l < fixes.txt)" -ge 2
        commit: true
        on_success: done
        on_failure: fix
      done:
        terminal: true
    context:
      pause: "0"
"""

HOLD = """\
    name: hold
    initial: hold
    states:
      hold:
        action: sleep 30
        next: done
      done:
        terminal: true
"""

NOTHING = """\
    name: nothing
    initial: look
    states:
      look:
        action: ls > /dev/null
        next: done
      done:
        terminal: true
"""

SLOW = """\
    name: slow
    initial: first
    states:
      first:
        action: echo one >> work.txt
        commit: true
        next: wait
      wait:
        action: test -n "$FAST" || sleep 30
        next: second
      second:
        action: echo two >> work.txt
        commit: true
        next: done
      done:
        terminal: true
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project under git with its loops committed, and an uncommitted change of the user's."""
    root = tmp_path / "project"
    loops = {
        f".loops/{name}.yaml": textwrap.dedent(text)
        for name, text in (
            ("fix-issue", FIX_ISSUE),
            ("nothing", NOTHING),
            ("slow", SLOW),
            ("hold", HOLD),
        )
    }
    make_repo(root, {"notes.txt": "the user's notes\n", **loops})
    (root / "notes.txt").write_text("the user's notes\nand an edit not committed yet\n")
    (root / "mine.txt").write_text("a file git does not know yet\n")
    return root


def _text(path: Path) -> str:
    """The text of *path* ("" while it is not there)."""
    return path.read_text() if path.exists() else ""


def _state(root: Path, key: str) -> dict[str, object]:
    path = run_files(key, root / ".loops").state
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _key(stderr: str, loop: str) -> str:
    match = re.search(rf"run ({re.escape(loop)}@[a-z0-9]{{4}}) in worktree", stderr)
    assert match, stderr
    return match.group(1)


def _commits(root: Path, branch: str, base: str) -> list[str]:
    return git(root, "log", "--format=%s", f"{base}..{branch}").splitlines()[::-1]


def test_a_worktree_run_commits_on_its_branch_and_leaves_the_checkout_alone(repo: Path) -> None:
    before = picture(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    done = ll_loop(repo, "run", "fix-issue", "7", "--worktree", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    key = _key(done.stderr, "fix-issue")
    (sample,) = [b for b in all_blocks() if b.starts("docs/worktrees.md", "$ ll-loop run fix-")]
    command, _, shown = sample.text.partition("\n")
    assert command == "$ ll-loop run fix-issue 7 --worktree"  # what this test ran
    run_id = split_run_key(key)[1]
    assert done.stderr.startswith(shown.replace("k3x9", str(run_id)))  # docs/worktrees.md
    run_id = split_run_key(key)[1]
    branch = f"ll/fix-issue/{run_id}"
    tree = repo / ".loops" / ".worktrees" / key
    assert picture(repo) == before  # byte for byte, the user's uncommitted edit included
    subjects = _commits(repo, branch, base)
    assert len(subjects) == 2, subjects  # one per pass that changed the tree
    assert all(re.fullmatch(r"ll-loop fix-issue: fix \(pass \d+\)", s) for s in subjects)
    assert (tree / "fixes.txt").read_text() == "fix for issue 7\nfix for issue 7\n"
    assert not (repo / "fixes.txt").exists()
    state = _state(repo, key)
    assert state["status"] == "completed"
    assert state["run_id"] == run_id
    assert state["worktree"] == {
        "path": str(tree.resolve()),
        "workdir": str(tree.resolve()),
        "branch": branch,
        "base": base,
    }
    status = ll_loop(repo, "status", key, env=run_env())
    assert status.returncode == ExitCode.OK
    assert re.search(rf"^loop: +{re.escape(key)}$", status.stdout, re.M), status.stdout
    shown = f".loops/.worktrees/{key} (branch {branch})"
    assert re.search(rf"^worktree: +{re.escape(shown)}$", status.stdout, re.M), status.stdout
    history = ll_loop(repo, "history", key, env=run_env())
    first = history.stdout.splitlines()[0]
    assert first.endswith(f"loop_start      {key} at fix (branch {branch})"), first
    shas = git(repo, "log", "--format=%h", f"{base}..{branch}").split()
    assert all(sha in history.stdout for sha in shas), history.stdout
    listed = ll_loop(repo, "list", "--running", env=run_env())
    assert key not in listed.stdout  # it ended: `list --running` shows the runs going on
    # Crashed (status running, its process gone): going on, listed with its branch.
    state_file = run_files(key, repo / ".loops").state
    state_file.write_text(json.dumps({**state, "status": "running", "pid": 2**22 + 1}))
    listed = ll_loop(repo, "list", "--running", env=run_env())
    assert re.search(
        rf"^{re.escape(key)} +crashed +done .* {re.escape(branch)}$", listed.stdout, re.M
    ), listed.stdout


def test_a_worktree_run_that_changed_nothing_leaves_no_worktree_or_branch(repo: Path) -> None:
    before = picture(repo)
    done = ll_loop(repo, "run", "nothing", "--worktree", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    key = _key(done.stderr, "nothing")
    assert not (repo / ".loops" / ".worktrees" / key).exists()
    assert git(repo, "branch", "--list", "ll/*") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert picture(repo) == before
    assert ll_loop(repo, "status", key, env=run_env()).returncode == ExitCode.OK  # still shown
    again = ll_loop(repo, "run", "nothing", "--worktree", env=run_env())
    assert again.returncode == ExitCode.OK, again.stderr
    assert not run_files(key, repo / ".loops").state.exists()  # forgotten: its tree is gone
    archived = json.loads(ll_loop(repo, "runs", "nothing", "--json", env=run_env()).stdout)
    assert [run["id"] for run in archived][0] == split_run_key(key)[1]  # the archive has it


def test_three_runs_of_one_loop_at_once_each_on_its_own_branch(repo: Path) -> None:
    before = picture(repo)
    keys = []
    pause = f"pause={scaled(2):.2f}"  # long enough to start the three (longer when slower)
    for issue in ("101", "102", "103"):
        started = ll_loop(
            repo,
            "run", "fix-issue", issue, "--set", pause, "--worktree", "--background", "--json",
            env=run_env(),
        )  # fmt: skip
        assert started.returncode == ExitCode.OK, started.stderr
        keys.append(json.loads(started.stdout)["loop"])
    assert len(set(keys)) == 3
    assert all(k.startswith("fix-issue@") for k in keys)
    for key in keys:
        wait_for(lambda key=key: _state(repo, key).get("status") == "completed", 30, key)
    spans = []
    for key, issue in zip(keys, ("101", "102", "103"), strict=True):
        tree = repo / ".loops" / ".worktrees" / key
        assert (tree / "fixes.txt").read_text() == f"fix for issue {issue}\n" * 2
        status = ll_loop(repo, "status", key, env=run_env())
        assert re.search(r"^status: +completed: ended in done \(success\)$", status.stdout, re.M), (
            status.stdout
        )
        events = run_files(key, repo / ".loops").events.read_text().splitlines()
        parsed = [json.loads(line) for line in events]
        assert all(issue in e.get("action", issue) for e in parsed if e["event"] == "action_start"
                   and e["state"] == "fix")  # fmt: skip
        spans.append((parsed[0]["ts"], parsed[-1]["ts"]))
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all ran at once
    latest = ll_loop(repo, "status", "fix-issue", env=run_env())  # NAME: its latest run
    assert re.search(r"^other runs: +2 more \(ll-loop list --running; name one as NAME@ID\)$",
                     latest.stdout, re.M), latest.stdout  # fmt: skip
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/ll/").split()
    assert sorted(branches) == sorted(f"ll/fix-issue/{split_run_key(k)[1]}" for k in keys)
    assert picture(repo) == before


def test_stop_with_several_runs_going_asks_for_an_id_or_all(repo: Path) -> None:
    keys = []
    for _ in range(2):
        started = ll_loop(
            repo, "run", "slow", "--worktree", "--background", "--json", env=run_env()
        )
        assert started.returncode == ExitCode.OK, started.stderr
        keys.append(json.loads(started.stdout)["loop"])
    for key in keys:
        wait_for(lambda key=key: _state(repo, key).get("current_state") == "wait", 15, key)
    refused = ll_loop(repo, "stop", "slow", env=run_env())
    assert refused.returncode == ExitCode.FAILED
    (sample,) = [
        b for b in all_blocks() if b.starts("docs/cli.md", "ll-loop: error: loop 'slow' has")
    ]
    shown = sample.text.replace("slow@k3x9", keys[0]).replace("slow@m2p7", keys[1])
    assert refused.stderr == shown  # the sample in docs/cli.md, with these runs' ids
    assert all(_state(repo, key)["status"] == "running" for key in keys)
    stopped = ll_loop(repo, "stop", "slow", "--all", env=run_env())
    assert stopped.returncode == ExitCode.OK, stopped.stderr
    assert all(_state(repo, key)["status"] == "stopped" for key in keys)
    resumed = ll_loop(repo, "resume", "slow", env=run_env(FAST="1"))
    assert resumed.returncode == ExitCode.FAILED
    assert "has 2 runs going" in resumed.stderr
    assert "ll-loop resume slow@" in resumed.stderr


def test_kill_9_mid_run_then_resume_goes_on_in_the_same_worktree(repo: Path) -> None:
    before = picture(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    proc = start(repo, "run", "slow", "--worktree")
    found: list[str] = []

    def waiting() -> bool:
        found[:] = [p.name for p in (repo / ".loops" / ".running").glob("slow@*.state.json")]
        return (
            bool(found)
            and _state(repo, found[0][: -len(".state.json")]).get("current_state") == "wait"
        )

    wait_for(waiting, 15, "the run to reach its wait state")
    key = found[0][: -len(".state.json")]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    tree = repo / ".loops" / ".worktrees" / key
    assert (tree / "work.txt").read_text() == "one\n"  # the crash left the worktree
    resumed = ll_loop(repo, "resume", "slow", env=run_env(FAST="1"))
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert (tree / "work.txt").read_text() == "one\ntwo\n"
    branch = f"ll/slow/{split_run_key(key)[1]}"
    first = next(line for line in resumed.stderr.splitlines() if "resuming" in line)
    assert first.startswith(f"ll-loop: resuming loop '{key}' at state 'wait' (iteration 1, ")
    assert first.endswith(f" in worktree .loops/.worktrees/{key} (branch {branch})")
    subjects = _commits(repo, branch, base)
    assert [s.split(":")[1].split(" (")[0] for s in subjects] == [" first", " second"]
    assert _state(repo, key)["status"] == "completed"
    assert picture(repo) == before


def test_a_checkpointing_loop_outside_a_worktree_is_refused_before_it_runs(repo: Path) -> None:
    before = picture(repo)
    refused = ll_loop(repo, "run", "fix-issue", "7", env=run_env())
    assert refused.returncode == ExitCode.USAGE
    assert refused.stderr == (
        "ll-loop: error: loop 'fix-issue' uses commit: (state 'fix'); checkpoints need a"
        " worktree: run it with --worktree or set worktree: true\n"
    )
    assert picture(repo) == before
    assert not (repo / ".loops" / ".running").exists() or not list(
        (repo / ".loops" / ".running").glob("*.state.json")
    )


def test_worktree_outside_git_and_a_taken_run_id_are_one_line(repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / ".loops").mkdir(parents=True)
    (plain / ".loops" / "nothing.yaml").write_text(textwrap.dedent(NOTHING))
    outside = ll_loop(plain, "run", "nothing", "--worktree", env=run_env())
    assert outside.returncode != ExitCode.OK
    assert outside.stderr.startswith("ll-loop: error: ")
    assert outside.stderr.count("\n") == 1
    assert "git" in outside.stderr
    first = ll_loop(repo, "run", "fix-issue", "7", "--worktree", "--run-id", "ab12", env=run_env())
    assert first.returncode == ExitCode.OK, first.stderr
    again = ll_loop(repo, "run", "fix-issue", "8", "--worktree", "--run-id", "ab12", env=run_env())
    assert again.returncode == ExitCode.USAGE
    assert again.stderr == (
        "ll-loop: error: loop 'fix-issue' already has a run or a worktree with id 'ab12'"
        " (see ll-loop list --running and ll-loop worktree list)\n"
    )


def test_a_state_file_cannot_send_resume_to_another_folder(repo: Path, tmp_path: Path) -> None:
    proc = start(repo, "run", "slow", "--worktree", "--run-id", "cd34")
    wait_for(lambda: _state(repo, "slow@cd34").get("current_state") == "wait", 15, "the wait")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = run_files("slow@cd34", repo / ".loops").state
    data = json.loads(path.read_text())
    data["worktree"]["workdir"] = str(elsewhere)  # a folder outside the run's worktree
    path.write_text(json.dumps(data))
    refused = ll_loop(repo, "resume", "slow@cd34", env=run_env(FAST="1"))
    assert refused.returncode == ExitCode.FAILED
    assert refused.stderr.startswith("ll-loop: error: the state file of run slow@cd34 names a")
    assert refused.stderr.count("\n") == 1
    assert list(elsewhere.iterdir()) == []  # nothing ran there


def test_a_worktree_run_resumes_in_the_background_beside_a_run_holding_the_project(
    repo: Path,
) -> None:
    started = ll_loop(repo, "run", "slow", "--worktree", "--background", "--run-id", "ef56")
    assert started.returncode == ExitCode.OK, started.stderr
    wait_for(lambda: _state(repo, "slow@ef56").get("current_state") == "wait", 15, "the wait")
    assert ll_loop(repo, "stop", "slow@ef56", env=run_env()).returncode == ExitCode.OK
    holding = ll_loop(repo, "run", "hold", "--background", env=run_env())  # scope: the project
    assert holding.returncode == ExitCode.OK, holding.stderr
    try:
        resumed = ll_loop(repo, "resume", "slow@ef56", "--background", env=run_env(FAST="1"))
        assert resumed.returncode == ExitCode.OK, resumed.stderr  # another tree: no overlap
        wait_for(lambda: _state(repo, "slow@ef56").get("status") == "completed", 15, "the end")
    finally:
        ll_loop(repo, "stop", "hold", env=run_env())


def test_a_run_stopped_at_a_limit_keeps_its_worktree_to_go_on_in(repo: Path) -> None:
    (repo / ".loops" / "spin.yaml").write_text(
        "name: spin\ninitial: look\nmax_iterations: 1\nstates:\n"
        "  look:\n    action: ls > /dev/null\n    on_success: look\n    on_failure: done\n"
        "  done:\n    terminal: true\n"
    )
    first = ll_loop(repo, "run", "spin", "--worktree", "--run-id", "gh78", env=run_env())
    assert first.returncode == ExitCode.MAX_ITERATIONS, first.stderr
    assert (repo / ".loops" / ".worktrees" / "spin@gh78").is_dir()  # kept, though unchanged
    again = ll_loop(repo, "resume", "spin@gh78", "-n", "2", env=run_env())
    assert again.returncode == ExitCode.MAX_ITERATIONS, again.stderr
    assert "ll-loop: resuming loop 'spin@gh78' at state 'look'" in again.stderr


def test_a_run_inside_a_live_runs_worktree_is_refused_but_its_own_actions_may(
    repo: Path,
) -> None:
    ll = Path(sys.executable).parent / "ll-loop"
    (repo / ".loops" / "inner.yaml").write_text(
        "name: inner\ninitial: mark\nstates:\n  mark:\n    action: echo in > inner.txt\n"
        "    next: done\n  done:\n    terminal: true\n"
    )
    (repo / ".loops" / "outer.yaml").write_text(
        "name: outer\ninitial: call\nstates:\n"
        f"  call:\n    action: env {ll} run inner && sleep 30\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    git(repo, "add", ".loops/inner.yaml", ".loops/outer.yaml")
    git(repo, "commit", "-qm", "two loops")
    started = ll_loop(repo, "run", "outer", "--worktree", "--background", "--run-id", "ij90")
    assert started.returncode == ExitCode.OK, started.stderr
    tree = repo / ".loops" / ".worktrees" / "outer@ij90"
    running = run_files("outer@ij90", repo / ".loops").running_dir
    err = stderr_file(running / output_file_name("outer@ij90", "call"))
    # The nested run has ended (its action made inner.txt a moment before it said so).
    wait_for(lambda: "Loop completed" in _text(err), 15, "the run's own nested run")
    assert (tree / "inner.txt").exists()
    said = err.read_text()  # the nested run's own lines, without the note
    assert "this folder is the worktree" not in said
    try:
        refused = ll_loop(tree, "run", "inner", env=run_env())
        assert refused.returncode == ExitCode.FAILED
        assert refused.stderr == (
            "ll-loop: note: this folder is the worktree of run outer@ij90; run ll-loop in"
            f" {repo.resolve()} to see its runs\n"
            "ll-loop: error: this folder is the worktree of run outer@ij90, which is running"
            f" (pid {_state(repo, 'outer@ij90')['pid']}); wait for it to end, or stop it with"
            " 'll-loop stop outer@ij90' from the main checkout\n"
        )
    finally:
        ll_loop(repo, "stop", "outer@ij90", env=run_env())
