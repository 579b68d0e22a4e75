"""A run on its way up: its marker, a stop request kept for it, a dead start-up rolled back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.llproc import wait_for

from little_loops.fsm.facts.layout import LAUNCHER_ENV, run_files
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.start_marker import (
    RESUME,
    RUN,
    Starting,
    StartMarker,
    first_event_written,
    forget_dead_starts,
    read_marker,
    request_stop,
    take_stop_request,
)


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_a_marker_says_who_starts_the_run_and_goes_with_it(tmp_path: Path) -> None:
    claim = Starting("fix", tmp_path, RUN)
    marker = read_marker("fix", tmp_path)
    assert marker is not None
    assert (marker.pid, marker.command, marker.worktree) == (os.getpid(), RUN, {})
    assert marker.alive
    assert claim.close() == []
    assert read_marker("fix", tmp_path) is None


def test_a_stop_request_is_for_the_resumes_there_were(tmp_path: Path) -> None:
    assert take_stop_request("fix", tmp_path) is False  # none
    (tmp_path / ".running").mkdir()  # the run's saved state is there
    # Left only when some `ll-loop resume` runs on this machine (none of this test's).
    left = request_stop("fix", tmp_path)
    assert run_files("fix", tmp_path).stop_request.exists() is left
    assert take_stop_request("fix", tmp_path) is False  # this process is no resume
    me = [os.getpid(), process_start_ticks(os.getpid())]
    for pids, mine in (([me], True), ([[os.getpid(), 1]], False), ([[1, None]], False)):
        run_files("fix", tmp_path).stop_request.write_text(json.dumps({"pids": pids}))
        assert take_stop_request("fix", tmp_path) is mine
        assert not run_files("fix", tmp_path).stop_request.exists()  # taken either way


def test_a_request_names_the_starts_in_this_project_and_what_they_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    for folder in (project / ".loops", elsewhere):
        folder.mkdir(parents=True)
    stub = {**os.environ, "PYTHONPATH": str(_stub(tmp_path))}
    starts = {
        name: subprocess.Popen(
            [sys.executable, "-m", "little_loops.cli", "run", "x"],  # an `ll-loop run`
            cwd=cwd,
            stdin=subprocess.PIPE,
            env=stub,
        )
        for name, cwd in (("here", project), ("there", elsewhere))
    }
    try:
        assert request_stop("fix", project / ".loops") is True
        data = json.loads(run_files("fix", project / ".loops").stop_request.read_text())
        named = [pid for pid, _ in data["pids"]]
        assert starts["here"].pid in named
        assert starts["there"].pid not in named  # it runs in another project
        # A background run of the one named (it says so in its environment) is named too.
        ticks = process_start_ticks(starts["here"].pid)
        monkeypatch.setenv(LAUNCHER_ENV, f"{starts['here'].pid}:{ticks}")
        assert take_stop_request("fix", project / ".loops") is True
    finally:
        for proc in starts.values():
            proc.kill()
            proc.wait()


def test_a_request_names_the_starts_of_a_project_whose_loops_folder_is_a_link(
    tmp_path: Path,
) -> None:
    """`.loops` a symbolic link to a folder elsewhere: the project is where the link is,
    not where it points (else no start is named, and a stop before the marker is missed)."""
    project, store = tmp_path / "project", tmp_path / "store"
    project.mkdir()
    (store / "loops").mkdir(parents=True)
    (project / ".loops").symlink_to(store / "loops")
    start = subprocess.Popen(
        [sys.executable, "-m", "little_loops.cli", "run", "x"],
        cwd=project,
        stdin=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(_stub(tmp_path))},
    )
    cmdline = Path(f"/proc/{start.pid}/cmdline")
    try:
        wait_for(lambda: b"little_loops.cli" in cmdline.read_bytes(), 10, "the start's exec")
        assert request_stop("fix", project / ".loops") is True
        data = json.loads(run_files("fix", project / ".loops").stop_request.read_text())
        assert start.pid in [pid for pid, _ in data["pids"]]
    finally:
        start.kill()
        start.wait()


def _stub(tmp_path: Path) -> Path:
    """A `little_loops.cli` that waits for its stdin to end: a start that never gets far."""
    folder = tmp_path / "stub"
    (folder / "little_loops" / "cli").mkdir(parents=True)
    (folder / "little_loops" / "__init__.py").write_text("")
    (folder / "little_loops" / "cli" / "__init__.py").write_text("")
    (folder / "little_loops" / "cli" / "__main__.py").write_text("import sys\nsys.stdin.read()\n")
    return folder


def test_a_run_keeps_a_sigterm_until_under_way_then_it_acts_as_before(tmp_path: Path) -> None:
    caught: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        claim = Starting("fix", tmp_path, RUN)
        os.kill(os.getpid(), signal.SIGTERM)  # `ll-loop stop` finding the marker: kept
        assert (claim.stop_pending(), caught) == (True, [])
        claim.under_way()
        os.kill(os.getpid(), signal.SIGTERM)  # after the run: as before it
        assert caught == [signal.SIGTERM]
        claim.close()
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_plain_run_leaves_the_marker_of_another_start_of_its_key(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        theirs = StartMarker(other.pid, process_start_ticks(other.pid), RUN)
        run_files("fix", tmp_path).running_dir.mkdir(parents=True)
        run_files("fix", tmp_path).starting.write_text(theirs.to_json())
        Starting("fix", tmp_path, RUN).close()  # the scope claim decides between them
        assert read_marker("fix", tmp_path) == theirs
    finally:
        other.kill()
        other.wait()


def test_a_resume_keeps_a_sigterm_for_its_run_until_it_closes(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    claim = Starting("fix", tmp_path, RESUME)
    assert claim.stop_pending() is False
    os.kill(os.getpid(), signal.SIGTERM)  # `ll-loop stop` finding the marker
    assert claim.stop_pending() is True
    claim.close()
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_start_up_that_died_before_its_first_event_is_rolled_back(tmp_path: Path) -> None:
    files = run_files("fix@ab12", tmp_path)
    files.running_dir.mkdir()
    files.starting.write_text(StartMarker(dead_pid(), None, RUN).to_json())
    files.options.write_text("{}")
    live = run_files("fix@cd34", tmp_path)
    live.starting.write_text(StartMarker(os.getpid(), None, RUN).to_json())
    started = run_files("fix@ef56", tmp_path)
    started.starting.write_text(StartMarker(dead_pid(), None, RUN).to_json())
    started.events.write_text('{"event": "loop_start"}\n')
    assert first_event_written("fix@ef56", tmp_path)
    assert forget_dead_starts(tmp_path, "fix") == [
        "run fix@ab12 was killed while starting, before its first step"
    ]
    assert not files.starting.exists()
    assert not files.options.exists()
    assert live.starting.exists()  # its process still starts it
    assert not started.starting.exists()  # it got going: its files are its record
    assert started.events.exists()


def test_a_marker_save_cut_short_by_a_kill_leaves_no_temp_file(tmp_path: Path) -> None:
    from little_loops.fsm.facts.layout import temp_file

    path = run_files("fix", tmp_path).starting
    claim = Starting("fix", tmp_path, RESUME)
    killed = temp_file(path, dead_pid())  # what a process killed inside write_atomic left
    killed.write_text("{")
    writing = temp_file(path, os.getpid())  # a save in progress (this process is alive)
    writing.write_text("{")
    claim.close()
    assert not killed.exists()
    assert writing.exists()


def test_a_marker_with_a_number_too_big_for_a_pid_is_no_marker(tmp_path: Path) -> None:
    # JSON's 1e400 is float('inf'): int() of it raised OverflowError, which `ll-loop resume`
    # showed as a traceback.
    base = {"pid": os.getpid(), "pid_start": None, "command": RESUME, "worktree": {}}
    for hostile in ({"pid": 1e400}, {"pid_start": -1e400}, {"handed_to": [1e400, None]}):
        (tmp_path / ".running").mkdir(exist_ok=True)
        run_files("fix", tmp_path).starting.write_text(json.dumps({**base, **hostile}))
        assert read_marker("fix", tmp_path) is None
