"""`on_handoff: pause | spawn | terminate`: what a run does when a prompt's output hands over
(`CONTEXT_HANDOFF: NOTE`), through the console script with a fake `claude` on PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support import llproc
from support.fake_claude import shell_claude
from support.project import LoopProject

from little_loops.cli.session import spawn_continuation
from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.facts.outcomes import ExitCode

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
