"""`ll-loop stop` right after `ll-loop resume`: the resume, still starting, stops every time."""

from __future__ import annotations

from pathlib import Path

from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode

SLOW = """\
name: slow
initial: work
max_iterations: 100000
states:
  work:
    action: sleep 0.2
    next: work
  done:
    terminal: true
"""


def test_a_stop_right_after_a_resume_stops_it_every_time(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "slow.yaml").write_text(SLOW)
    first = llproc.start(tmp_path, "run", "slow")
    events = tmp_path / ".loops" / ".running" / "slow.events.jsonl"
    llproc.wait_for(lambda: events.exists() and events.stat().st_size > 500, 20, "its first steps")
    assert llproc.ll_loop(tmp_path, "stop", "slow").returncode == 0
    llproc.finish(first, 20)
    for attempt in range(6):
        resume = llproc.start(tmp_path, "resume", "slow")
        # It may find the resume before it has written its marker ("not running"): the
        # request it leaves then is honoured by the resume all the same.
        stop = llproc.ll_loop(tmp_path, "stop", "slow", timeout=30)
        _, err = llproc.finish(resume, 30)  # a resume that ran on would outlive this
        assert resume.returncode == ExitCode.STOPPED, (attempt, stop.stderr, err)
        assert llproc.state(tmp_path, "slow")["status"] == "stopped", attempt
        assert not (tmp_path / ".loops" / ".running" / "slow.starting.json").exists()
