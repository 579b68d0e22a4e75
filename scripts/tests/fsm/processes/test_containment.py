"""containment: real bash children that start grandchildren, and ending all of it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.processes.containment import CONTAINMENT, Contained, ProcessGroups
from little_loops.fsm.processes.launch import ProgramPaths
from little_loops.fsm.processes.pids import pid_alive

PIPE = subprocess.PIPE


def bash(script: str) -> Contained:
    """Start `bash -c SCRIPT` with stdout on a pipe: it prints the pids to watch."""
    return CONTAINMENT.start(["bash", "-c", script], streams=(subprocess.DEVNULL, PIPE, None))


def pids_from(child: Contained, count: int) -> list[int]:
    """The first *count* lines the child prints, as pids."""
    assert child.process.stdout is not None
    return [int(child.process.stdout.readline()) for _ in range(count)]


def close(child: Contained) -> None:
    if child.process.stdout is not None:
        child.process.stdout.close()


def gone(pids: list[int], within: float) -> bool:
    """Whether every pid has ended (a zombie counts as ended) within *within* seconds."""
    deadline = time.monotonic() + within
    while any(pid_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_end_leaves_nothing_of_a_child_and_its_grandchild() -> None:
    child = bash("sleep 300 & echo $$; echo $!; wait")
    leader, grandchild = pids_from(child, 2)
    assert leader == child.pid
    assert {leader, grandchild} <= set(child.left())
    began = time.monotonic()
    code = child.end(grace=2.0)
    assert time.monotonic() - began < scaled(2.0)  # both obey SIGTERM: no grace spent
    assert code == -signal.SIGTERM
    assert child.left() == []
    assert gone([leader, grandchild], within=scaled(1.0))
    close(child)


def test_what_ignores_sigterm_is_killed_after_the_grace() -> None:
    # An ignored signal stays ignored across fork and exec: the grandchild ignores it too.
    child = bash("trap '' TERM; sleep 300 & echo $!; wait; wait")
    (grandchild,) = pids_from(child, 1)
    began = time.monotonic()
    code = child.end(grace=0.5)
    took = time.monotonic() - began
    assert 0.5 <= took < scaled(0.5 + 2.0)
    assert code == -signal.SIGKILL
    assert gone([child.pid, grandchild], within=scaled(1.0))
    close(child)


def test_a_grandchild_that_left_the_group_is_ended_too() -> None:
    # `setsid` makes the sleep lead a session of its own: a signal to the group misses it.
    child = bash("setsid sleep 300 & echo $!; wait")
    (grandchild,) = pids_from(child, 1)
    deadline = time.monotonic() + scaled(2.0)
    while os.getsid(grandchild) != grandchild:  # setsid has not run yet
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert grandchild in child.left()
    child.end(grace=1.0)
    assert gone([grandchild], within=scaled(1.0))
    close(child)


def test_a_child_in_our_session_is_ended_with_its_tree() -> None:
    child = CONTAINMENT.start(
        ["bash", "-c", "sleep 300 & echo $!; wait"],
        streams=(subprocess.DEVNULL, PIPE, None),
        session=False,
    )
    (grandchild,) = pids_from(child, 1)
    assert os.getpgid(child.pid) == os.getpgid(0)  # a Ctrl-C at the terminal reaches it
    child.end(grace=1.0)
    assert gone([child.pid, grandchild], within=scaled(1.0))
    close(child)


def test_a_child_that_ends_by_itself_leaves_nothing_and_its_status() -> None:
    child = CONTAINMENT.start(["bash", "-c", "exit 3"])
    assert child.process.wait(timeout=scaled(5.0)) == 3
    assert child.left() == []
    assert child.reap() == 3
    child.signal(signal.SIGKILL)  # reaped: no longer signalled (its pid may be reused)


def test_a_program_that_is_not_there_raises_as_popen_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        CONTAINMENT.start([str(tmp_path / "missing")])
    with pytest.raises(ValueError, match="null"):
        CONTAINMENT.start(["bash", "-c", "echo \0"])


def test_a_program_is_started_from_where_the_program_paths_found_it(tmp_path: Path) -> None:
    fake = tmp_path / "true"
    fake.write_text("#!/bin/sh\necho fake\n")
    fake.chmod(0o755)
    programs = ProgramPaths()
    programs.remember("true", os.environ.get("PATH"), str(fake))
    child = ProcessGroups().start(
        ["true"], streams=(subprocess.DEVNULL, PIPE, None), programs=programs
    )
    assert child.process.communicate(timeout=scaled(5.0))[0] == b"fake\n"
    assert child.reap() == 0


def _recorded(script: str) -> subprocess.Popen[bytes]:
    """A process started as if by another ll-loop (this test's child, not containment's)."""
    return subprocess.Popen(
        ["bash", "-c", script], stdout=PIPE, start_new_session=True, stdin=subprocess.DEVNULL
    )


def test_recorded_processes_are_ended_with_their_groups() -> None:
    proc = _recorded("trap '' TERM; sleep 300 & echo $!; wait; wait")
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    began = time.monotonic()
    CONTAINMENT.end_recorded([proc.pid], grace=0.3)
    assert time.monotonic() - began < scaled(0.3 + 2.0)
    assert proc.wait(timeout=scaled(2.0)) == -signal.SIGKILL
    assert gone([grandchild], within=scaled(1.0))
    proc.stdout.close()


def test_a_recorded_pid_is_signalled_with_its_children_first() -> None:
    # The leader never ends by itself (a bare `wait` would return, and bash exit 0, as soon
    # as its child was killed, before the leader's own SIGKILL came).
    proc = _recorded("sleep 300 & echo $!; while :; do sleep 0.2; done")
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    CONTAINMENT.signal_recorded(proc.pid, signal.SIGKILL, children=True)
    assert proc.wait(timeout=scaled(2.0)) == -signal.SIGKILL
    assert gone([grandchild], within=scaled(1.0))
    proc.wait()
    CONTAINMENT.signal_recorded(proc.pid, signal.SIGTERM)  # gone already: no error
    proc.stdout.close()


def test_containment_is_the_only_place_that_starts_or_signals_processes() -> None:
    package = Path(__file__).parents[3] / "little_loops"
    allowed = {package / "fsm" / "processes"}
    found = [
        f"{path.relative_to(package)}:{n}"
        for path in sorted(package.rglob("*.py"))
        if path.parent not in allowed
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if any(word in line for word in ("Popen(", "os.killpg(", "os.kill(", "subprocess.run("))
    ]
    assert found == []


def test_an_exited_child_is_not_reaped_so_its_group_is_ended_with_it() -> None:
    child = CONTAINMENT.start(
        ["bash", "-c", "sleep 319 & echo $!"], streams=(subprocess.DEVNULL, subprocess.PIPE, None)
    )
    assert child.process.stdout is not None
    sleeper = int(child.process.stdout.readline())
    deadline = time.monotonic() + scaled(10)
    while not child.exited() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert child.exited()
        assert child.process.returncode is None  # a zombie still: the group id stays its own
        assert os.getpgid(sleeper) == child.pid
        assert child.end(1.0) == 0
        assert not pid_alive(sleeper)
    finally:
        if pid_alive(sleeper):
            os.kill(sleeper, signal.SIGKILL)


def test_ending_leader_first_lets_it_end_its_own_work_then_ends_what_it_left(
    tmp_path: Path,
) -> None:
    """A fan-out's child run is told first (SIGTERM to its group alone) and ends its own
    action, which is still alive when it looks; what it left in a session of its own is
    SIGKILLed after, though by then it is no longer below it."""
    said = tmp_path / "said"
    script = (
        "setsid sleep 317 & s=$!; "
        f"trap 'if kill -0 $s; then echo alive; else echo gone; fi > \"{said}\"; exit 0' TERM; "
        "echo $s; while :; do sleep 0.05; done"  # said once the trap is set
    )
    child = CONTAINMENT.start(
        ["bash", "-c", script], streams=(subprocess.DEVNULL, subprocess.PIPE, None)
    )
    assert child.process.stdout is not None
    sleeper = int(child.process.stdout.readline())
    deadline = time.monotonic() + scaled(10)
    while os.getsid(sleeper) != sleeper:  # `setsid` has made its session (before: in ours)
        assert time.monotonic() < deadline, "setsid never made the sleeper's session"
        time.sleep(0.01)
    assert child.end_leader_first(scaled(10)) == 0
    assert said.read_text() == "alive\n"  # told first: its own work was still there
    assert gone([sleeper], within=scaled(2.0))
    child.process.stdout.close()
