"""`on_handoff: pause | spawn | terminate`: what a run does when a prompt's output hands over
(`CONTEXT_HANDOFF: NOTE`), through the console script with a fake `claude` on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support import llproc
from support.fake_claude import shell_claude
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.cli.session import spawn_continuation
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import pid_alive

# The first call hands off; a later one writes the prompt it got and ends well.
HANDING_OFF = (
    'if [ -e handed ]; then printf "%s" "${@: -1}" > prompt.txt; exit 0; fi\n'
    'touch handed; echo "CONTEXT_HANDOFF: finish the parser"'
)

WORK = """\
name: work
on_handoff: {mode}
initial: code
states:
  code:
    action: /do-work
    next: done
  done:
    action: echo finished >> side.txt
    terminal: true
"""


@pytest.fixture
def handing_off(loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch) -> LoopProject:
    shell_claude(loop_project.root, monkeypatch, HANDING_OFF, shell="bash")
    return loop_project


def test_pause_stops_resumable(handing_off: LoopProject) -> None:
    handing_off.write("work", WORK.format(mode="pause"))
    first = llproc.console(handing_off.root, "run", "work")
    assert first.returncode == ExitCode.HANDOFF, first.stderr
    assert llproc.state(handing_off.root, "work")["status"] == "awaiting_continuation"
    assert not (handing_off.root / "prompt.txt").exists()  # nothing went on by itself
    second = llproc.console(handing_off.root, "resume", "work")
    assert second.returncode == ExitCode.OK, second.stderr
    assert (
        (handing_off.root / "prompt.txt")
        .read_text()
        .startswith("Continue from this handoff note: finish the parser")
    )


def test_spawn_goes_on_in_a_new_process_with_the_note(handing_off: LoopProject) -> None:
    handing_off.write("work", WORK.format(mode="spawn"))
    first = llproc.console(handing_off.root, "run", "work", "--json")
    assert first.returncode == ExitCode.HANDOFF, first.stderr
    assert json.loads(first.stdout)["terminated_by"] == "handoff"
    assert "context handoff: continuing in the background (pid " in first.stderr
    llproc.wait_for(
        lambda: llproc.state(handing_off.root, "work").get("status") == "completed",
        timeout=30,
        what="the continuation run",
    )
    assert (
        (handing_off.root / "prompt.txt")
        .read_text()
        .startswith("Continue from this handoff note: finish the parser\n\n/do-work")
    )
    assert llproc.side_effects(handing_off.root) == ["finished"]


def test_terminate_ends_the_run_for_good(handing_off: LoopProject) -> None:
    handing_off.write("work", WORK.format(mode="terminate"))
    first = llproc.console(handing_off.root, "run", "work", "--json")
    assert first.returncode == ExitCode.HANDOFF, first.stderr
    end = json.loads(first.stdout)
    assert (end["terminated_by"], end["handoff"]) == ("handoff_ended", "finish the parser")
    assert "Loop ended at a context handoff in code (on_handoff: terminate)" in first.stderr
    assert llproc.state(handing_off.root, "work")["status"] == "failed"
    again = llproc.console(handing_off.root, "resume", "work")
    assert again.returncode != 0
    assert len(again.stderr.strip().splitlines()) == 1, again.stderr
    assert llproc.side_effects(handing_off.root) == []


def test_an_unknown_mode_is_refused_in_one_line(loop_project: LoopProject) -> None:
    loop_project.write("work", WORK.format(mode="later"))
    checked = llproc.console(loop_project.root, "validate", "work")
    assert checked.returncode == ExitCode.USAGE
    assert "on_handoff" in checked.stdout + checked.stderr


def test_spawn_does_not_chain_forever_on_an_agent_that_only_hands_off(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each continuation resumes the same state at the same iteration, so max_iterations
    # never ended a chain whose every session hands off again: it ran (and spent) forever.
    shell_claude(
        loop_project.root,
        monkeypatch,
        'echo call >> calls.txt; echo "CONTEXT_HANDOFF: keep going"',
        shell="bash",
    )
    loop_project.write(
        "work", WORK.format(mode="spawn").replace("initial:", "max_iterations: 2\ninitial:")
    )
    first = llproc.console(loop_project.root, "run", "work")
    assert first.returncode == ExitCode.HANDOFF, first.stderr
    log = loop_project.root / ".loops" / ".running" / "work.log"
    refused = (
        "ll-loop: context handoff: not continuing by itself: the run handed off 2 times in a "
        "row without leaving its state (max_iterations 2); continue with: ll-loop resume work"
    )
    llproc.wait_for(
        lambda: log.exists() and refused in log.read_text(),
        timeout=30,
        what="the chain to end",
    )
    llproc.wait_for(
        lambda: llproc.state(loop_project.root, "work").get("status") == "awaiting_continuation",
        timeout=10,
        what="the last continuation to save its state",
    )
    assert (loop_project.root / "calls.txt").read_text().splitlines() == ["call", "call"]
    assert llproc.side_effects(loop_project.root) == []  # the work was not skipped either


def test_an_unreadable_log_is_no_continuation_on_a_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # How many handoffs came in a row is read from the log; one that cannot be read starts
    # no continuation (one line), rather than a traceback or a chain with no count.
    running = tmp_path / ".loops" / ".running"
    running.mkdir(parents=True)
    (running / "work.events.jsonl").write_bytes(b"\xff\xfe not an event\n")
    fsm = FSMLoop.from_dict(yaml.safe_load(WORK.format(mode="spawn")))
    spawn_continuation("work", fsm, tmp_path / ".loops", None)
    err = capsys.readouterr().err
    assert err.startswith("ll-loop: could not continue after the handoff: ")
    assert "corrupt event line" in err
    assert err.count("\n") == 1
    assert not (running / "work.log").exists()  # nothing was started


# Holds a process of the chain at one point until the test opens the gate (a file): the
# `ll-loop resume` a handoff starts before it has run any of ll-loop ("resume"), or the
# process that ended the run at the handoff before it starts the next ("handing-off").
# Each says where it waits in a file of its own; a gate never opened lets go after 60 s.
GATE = """\
import os, time
from pathlib import Path
where, folder = os.environ.get("LL_TEST_GATE", ""), Path(os.environ.get("LL_TEST_GATE_DIR", "."))
args = open("/proc/self/cmdline", "rb").read().split(b"\\0")

def hold(name):
    (folder / f"held-{name}-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (folder / "open").exists() and time.monotonic() < deadline:
        time.sleep(0.02)

if where == "resume" and b"little_loops.cli" in args and b"resume" in args:
    hold("resume")
elif where == "handing-off" and b"run" in args:
    import little_loops.cli.session as session
    counted = session.handoffs_in_a_row

    def held(*given, **named):
        hold("handing-off")
        return counted(*given, **named)

    session.handoffs_in_a_row = held
"""


def _gated(root: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> Path:
    """The gate at *where* for every Python this test starts; its folder."""
    folder = root / "gate"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(GATE)
    monkeypatch.setenv("PYTHONPATH", f"{folder}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("LL_TEST_GATE", where)
    monkeypatch.setenv("LL_TEST_GATE_DIR", str(folder))
    return folder


def _held(folder: Path, name: str) -> int:
    """The pid of the process held at *name* (waits for it)."""
    llproc.wait_for(lambda: any(folder.glob(f"held-{name}-*")), timeout=30, what=name)
    return int(next(folder.glob(f"held-{name}-*")).name.rsplit("-", 1)[1])


@pytest.mark.parametrize("where", ["handing-off", "resume"])
def test_a_stop_between_two_processes_of_a_spawn_chain_ends_the_chain(
    handing_off: LoopProject, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # A stop that came after the run ended at the handoff, before the next process had said
    # which run it resumes, said "not running" and exited 1 (and the chain went on, or not,
    # by luck). It stops the chain: the next process never starts, or never goes on.
    handing_off.write("work", WORK.format(mode="spawn"))
    root = handing_off.root
    gate = _gated(root, monkeypatch, where)
    first = subprocess.Popen(
        [str(Path(sys.executable).parent / "ll-loop"), "run", "work"],
        cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        held = _held(gate, where)
        if where == "resume":  # the first process has ended, having started the next
            _, err = first.communicate(timeout=scaled(30))
            assert first.returncode == ExitCode.HANDOFF, err
            assert f"continuing in the background (pid {held})" in err
        assert llproc.state(root, "work")["status"] == "awaiting_continuation"
        stop = llproc.console(root, "stop", "work")
        assert stop.returncode == ExitCode.OK, stop.stderr
        assert "stopped at a context handoff (its on_handoff: spawn chain goes no further)" in (
            stop.stderr
        )
        assert "not running" not in stop.stderr
        assert not pid_alive(held, None)
    finally:
        (gate / "open").touch()
        first.wait(timeout=scaled(30))
    assert first.stderr is not None
    if where == "handing-off":  # it started no next process
        assert "continuing in the background" not in first.stderr.read()
    assert not (root / "prompt.txt").exists()  # no second session of the agent
    assert llproc.side_effects(root) == []  # nor any step after it
    assert llproc.state(root, "work")["status"] in ("awaiting_continuation", "stopped")
    assert not (root / ".loops" / ".running" / "work.starting.json").exists()
    monkeypatch.delenv("LL_TEST_GATE")
    again = llproc.console(root, "resume", "work")  # the run goes on when asked, with the note
    assert again.returncode == ExitCode.OK, again.stderr
    assert (root / "prompt.txt").read_text().startswith("Continue from this handoff note: ")


@pytest.mark.parametrize("planted", ["state", "marker", "handed-to"])
def test_a_pid_planted_in_a_run_file_is_never_signalled_by_stop(
    handing_off: LoopProject, marker: str, planted: str
) -> None:
    # The process that ended a run at a handoff, a resume's marker, the resume it was
    # handed to: stop signals each only when it is an ll-loop process, never one a hand-made
    # file names (here a `sleep`, with its true start time).
    from little_loops.fsm.processes.pids import process_start_ticks

    handing_off.write("work", WORK.format(mode="pause"))
    root = handing_off.root
    assert llproc.console(root, "run", "work").returncode == ExitCode.HANDOFF
    victim = subprocess.Popen(["sleep", marker])
    try:
        running = root / ".loops" / ".running"
        ticks = process_start_ticks(victim.pid)
        if planted == "state":
            state = json.loads((running / "work.state.json").read_text())
            state.update(pid=victim.pid, pid_start=ticks)
            (running / "work.state.json").write_text(json.dumps(state))
        else:
            named = {"pid": victim.pid, "pid_start": ticks}
            if planted == "handed-to":
                named = {"pid": 999999, "pid_start": 1, "handed_to": [victim.pid, ticks]}
            (running / "work.starting.json").write_text(
                json.dumps({**named, "command": "resume", "worktree": {}})
            )
        stop = llproc.console(root, "stop", "work")
        assert stop.returncode == ExitCode.FAILED, stop.stderr
        assert "is not running (last status: awaiting_continuation)" in stop.stderr
        assert victim.poll() is None  # not signalled
    finally:
        victim.kill()
        victim.wait()
