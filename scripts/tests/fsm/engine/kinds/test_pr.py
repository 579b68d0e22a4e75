"""The `pr:` state with real `ll-loop`, real git and the real gh against the GitHub stand-in:
push, open, wait for checks, hand failures on, fix, merge when green and never before; the
wait survives kill -9 and resume, `stop` ends it, `max_wait` ends a check that never comes."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.fake_github import Check, FakeGitHub
from support.gitrepo import GIT_ENV
from support.programs import needs_gh
from support.slowdown import scaled

from little_loops.cli.watch.board import board_rows
from little_loops.cli.watch.detail import load_view
from little_loops.cli.watch.run_screen import render_view
from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = needs_gh

SHIP = """\
name: ship
initial: fix
states:
  fix:
    action: |
      printf '%s\\n===\\n' "${{prev.output}}" >> ../seen.txt
      echo "fix $(date +%s%N)" >> README && git commit -qam "fix"
    next: open
  open:
    pr:
      title: "Fix the readme (${{context.n}})"
      merge: squash
      interval: {interval}
      backoff_rate: 1
      max_wait: {max_wait}
    on_success: done
    on_failure: fix
    on_error: broken
  done:
    terminal: true
  broken:
    terminal: true
    outcome: failure
context:
  n: "7"
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "remote.git") as served:
        yield served


@pytest.fixture
def work(tmp_path: Path, fake: FakeGitHub) -> Path:
    root = fake.checkout(tmp_path / "work")
    (root / ".loops").mkdir()
    return root


def _env(fake: FakeGitHub, work: Path) -> dict[str, str]:
    return {**os.environ, **GIT_ENV, **fake.env(work.parent / "gh-config")}


def _write(work: Path, interval: float = 0.1, max_wait: float = 600) -> None:
    (work / ".loops" / "ship.yaml").write_text(SHIP.format(interval=interval, max_wait=max_wait))


def _of(events: list[dict[str, object]], kind: str) -> list[dict[str, object]]:
    return [e for e in events if e.get("event") == kind]


def test_pending_failed_fixed_green_merged_and_the_merge_waited_for_green(
    fake: FakeGitHub, work: Path
) -> None:
    _write(work)
    fake.script_checks(
        "fix",
        [[Check("test", "pending")], [Check("test", "failed", log="ok 1\nFAILED test_readme")]],
        [[], [Check("test", "queued")], [Check("test", "passed")]],
    )

    done = llproc.ll_loop(work, "run", "ship", env=_env(fake, work), timeout=120)

    assert done.returncode == ExitCode.OK, done.stderr
    events = llproc.events(work, "ship")
    assert [e["verdict"] for e in _of(events, "checks")] == ["failure", "success"]
    assert [e.get("merged", False) for e in _of(events, "checks")] == [False, True]
    opened = _of(events, "pull_request")
    assert [(e["number"], e["created"]) for e in opened] == [(1, True), (1, False)]
    assert fake.prs[1].state == "MERGED"
    assert fake.prs[1].merge_method == "SQUASH"
    assert fake.prs[1].title == "Fix the readme (7)"
    assert "Opened by ll-loop, loop `ship`." in fake.prs[1].body
    # The merge was asked once, of green checks, on the commit the run pushed last.
    (merge,) = fake.merges()
    assert merge.checks_then == (("test", "passed"),)
    assert merge.variables["input"]["expectedHeadOid"] == opened[-1]["head"] == fake.head_oid("fix")
    # The fix state read the failed check's name, link and log tail.
    seen = (work.parent / "seen.txt").read_text().split("===\n")
    assert seen[1].splitlines() == [
        "checks failed: test",
        "--- test (https://github.localhost/octo/repo/actions/runs/7/job/1001)",
        "ok 1",
        "FAILED test_readme",
    ]
    assert "pushed fix (" in done.stderr
    assert "waiting for the checks of pull request #1: checks pending: test" in done.stderr
    assert "✓ checks: success (merged)" in done.stderr


def test_kill_9_during_the_wait_then_resume_goes_on_to_the_same_end(
    fake: FakeGitHub, work: Path
) -> None:
    _write(work, interval=round(scaled(0.5), 2))
    fake.script_checks("fix", [[Check("test", "pending")]])
    env = _env(fake, work)
    proc = llproc.start(work, "run", "ship", env=env)
    try:
        llproc.wait_for(
            lambda: (llproc.state(work, "ship").get("attempt") or {}).get("wait") is not None,
            timeout=60,
            what="the checks wait",
        )
        status = llproc.ll_loop(work, "status", "ship", env=env)
        assert "for the checks of state open's pull request" in status.stdout + status.stderr
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=scaled(5)) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = llproc.state(work, "ship")
    assert saved["pr"]["number"] == 1
    assert not fake.merges()
    fake.script_checks("fix", [[Check("test", "passed")]])

    done = llproc.ll_loop(work, "resume", "ship", env=env, timeout=60)

    assert done.returncode == ExitCode.OK, done.stderr
    events = llproc.events(work, "ship")
    # The resumed run looked again at the same pull request: it did not open another.
    assert len(_of(events, "pull_request")) == 1
    assert fake.operations().count("PullRequestCreate") == 1
    assert fake.prs[1].state == "MERGED"
    assert [m.checks_then for m in fake.merges()] == [(("test", "passed"),)]


def test_stop_ends_the_wait_and_resume_goes_on(fake: FakeGitHub, work: Path) -> None:
    _write(work, interval=30)
    fake.script_checks("fix", [[Check("test", "pending")]])
    env = _env(fake, work)
    proc = llproc.start(work, "run", "ship", env=env)
    try:
        llproc.wait_for(
            lambda: bool(_of(_events(work), "checks_wait")), timeout=60, what="the checks wait"
        )
        stop = llproc.ll_loop(work, "stop", "ship", env=env)
        assert stop.returncode == 0, stop.stderr
        code = proc.wait(timeout=scaled(10))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert code == ExitCode.STOPPED
    assert llproc.state(work, "ship")["status"] == "stopped"
    assert not fake.merges()
    fake.script_checks("fix", [[Check("test", "failed")]])
    (work / ".loops" / "ship.yaml").write_text(
        SHIP.format(interval=0.1, max_wait=600).replace("on_failure: fix", "on_failure: broken")
    )

    done = llproc.ll_loop(work, "resume", "ship", env=env, timeout=60)

    assert done.returncode == ExitCode.TERMINAL_FAILURE, done.stderr
    assert not fake.merges()


def test_watch_shows_the_run_waiting_for_its_checks(fake: FakeGitHub, work: Path) -> None:
    _write(work, interval=30)
    fake.script_checks("fix", [[Check("test", "pending")]])
    env = _env(fake, work)
    proc = llproc.start(work, "run", "ship", env=env)
    loops = work / ".loops"
    try:
        llproc.wait_for(
            lambda: bool(_of(_events(work), "checks_wait")), timeout=60, what="the checks wait"
        )
        # watch's list: the run's line says what it waits for.
        (row,) = board_rows(loops)
        cells = row.cells()
        assert cells[2:4] == ("running", "open")
        assert cells[-1].startswith("for the checks of state open's pull request (")
        # watch's run screen says it too.
        screen = render_view(load_view(row.key, loops), row.key).plain
        assert "\nwaiting for the checks of state open's pull request (" in screen
        stop = llproc.ll_loop(work, "stop", "ship", env=env)
        assert stop.returncode == 0, stop.stderr
        assert proc.wait(timeout=scaled(10)) == ExitCode.STOPPED
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_check_that_never_reports_ends_at_max_wait(fake: FakeGitHub, work: Path) -> None:
    _write(work, interval=0.2, max_wait=1)
    fake.script_checks("fix", [[]])

    done = llproc.ll_loop(work, "run", "ship", env=_env(fake, work), timeout=60)

    assert done.returncode == ExitCode.TERMINAL_FAILURE, done.stderr
    events = llproc.events(work, "ship")
    waits = _of(events, "checks_wait")
    assert sum(float(w["seconds"]) for w in waits) == pytest.approx(1.0)  # type: ignore[arg-type]
    (verdict,) = _of(events, "checks")
    assert verdict["verdict"] == "timeout"
    assert str(verdict["reason"]).startswith("the checks were not in within pr.max_wait (1s)")
    assert not fake.merges()


def test_a_forge_that_cannot_be_reached_takes_on_error(fake: FakeGitHub, work: Path) -> None:
    _write(work)
    env = _env(fake, work)
    fake.script_checks("fix", [[Check("test", "pending")]])
    proc = llproc.start(work, "run", "ship", env=env)
    try:
        llproc.wait_for(
            lambda: bool(_of(_events(work), "checks_wait")), timeout=60, what="the checks wait"
        )
        fake.down = True
        _, err = llproc.finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == ExitCode.TERMINAL_FAILURE, err
    (verdict,) = _of(llproc.events(work, "ship"), "checks")
    assert verdict["verdict"] == "error"
    assert str(verdict["reason"]).startswith("`gh pr view` failed: ")
    assert llproc.state(work, "ship")["current_state"] == "broken"


def test_gh_missing_or_logged_out_is_one_line_and_exit_2_before_anything_runs(
    fake: FakeGitHub, work: Path, tmp_path: Path
) -> None:
    _write(work)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "bash"):
        (bin_dir / program).symlink_to(f"/usr/bin/{program}")
    no_gh = {**_env(fake, work), "PATH": str(bin_dir)}
    missing = llproc.ll_loop(work, "run", "ship", env=no_gh)
    fake.logged_in = False
    logged_out = llproc.ll_loop(work, "run", "ship", env=_env(fake, work))

    for done in (missing, logged_out):
        assert done.returncode == ExitCode.USAGE, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "state 'open' opens a pull request, but gh is not on PATH; install" in missing.stderr
    assert (
        "state 'open' opens a pull request, but gh is not logged in to github.localhost ("
        in logged_out.stderr
    )
    assert not (work / ".loops" / ".running" / "ship.state.json").exists()
    assert fake.head_oid("fix") == ""  # nothing was pushed


def _events(work: Path) -> list[dict[str, object]]:
    try:
        return llproc.events(work, "ship")
    except (OSError, ValueError):
        return []


def test_a_body_of_ones_own_still_carries_the_runs_summary_under_it(
    fake: FakeGitHub, work: Path
) -> None:
    (work / ".loops" / "ship.yaml").write_text(
        "name: ship\ninitial: open\ncontext:\n  n: '7'\nstates:\n"
        "  open:\n    pr:\n      title: t\n      body: 'Closes #${context.n}.'\n"
        "      interval: 0.1\n      merge: squash\n    on_success: done\n"
        "    on_failure: done\n    on_error: done\n  done:\n    terminal: true\n"
    )
    fake.script_checks("fix", [[Check("test", "passed")]])

    done = llproc.ll_loop(work, "run", "ship", env=_env(fake, work), timeout=120)

    assert done.returncode == ExitCode.OK, done.stderr
    assert fake.prs[1].state == "MERGED"
    written, carried = fake.prs[1].body.split("\n\n---\n\n")
    assert written == "Closes #7."
    assert carried.startswith("Opened by ll-loop, loop `ship`.\n")
    assert "- passes: 1\n" in carried
    assert "- cost: $0.00\n" in carried
    assert "- states of this pass: open\n" in carried


def test_a_check_that_reports_late_is_never_merged_past(fake: FakeGitHub, work: Path) -> None:
    """Green at the first look may be only the checks that reported so far: the merge
    waits for the same checks green again, and a late failing check stops it."""
    _write(work)
    fake.script_checks(
        "fix",
        [
            [Check("lint", "passed")],
            [Check("lint", "passed"), Check("test", "failed", log="FAILED late")],
        ],
        [[Check("lint", "passed"), Check("test", "passed")]],
    )

    done = llproc.ll_loop(work, "run", "ship", env=_env(fake, work), timeout=120)

    assert done.returncode == ExitCode.OK, done.stderr
    events = llproc.events(work, "ship")
    assert [e["verdict"] for e in _of(events, "checks")] == ["failure", "success"]
    (merge,) = fake.merges()
    assert merge.checks_then == (("lint", "passed"), ("test", "passed"))
    assert merge.variables["input"]["expectedHeadOid"] == fake.head_oid("fix")
