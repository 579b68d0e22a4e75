"""Approval gates through the console script: ask, stop or wait, approve/reject, go on."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

# The note comes back through a shell action: hostile text must arrive as data.
GATE = """\
    name: ship
    initial: prep
    context:
      target: "prod; rm -rf ~"
    states:
      prep:
        action: echo ready
        next: ask
      ask:
        action_type: approval
        action: "Deploy to ${context.target}?"
        on_success: deploy
        on_failure: rolled_back
      deploy:
        action: 'printf %s "${result.note}" > deployed.txt'
        next: done
      rolled_back:
        action: 'printf %s "${result.note}" > rejected.txt'
        next: done
      done:
        terminal: true
"""
HOSTILE_NOTE = "ok $(touch pwned) `touch pwned2` \"'; \x1b[31mred"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "ship.yaml").write_text(textwrap.dedent(GATE))
    return tmp_path


def test_a_run_stops_at_the_question_and_goes_on_after_approve(project: Path) -> None:
    first = llproc.console(project, "run", "ship")
    assert first.returncode == ExitCode.AWAITING_APPROVAL == 9, first.stderr
    assert "│ Deploy to prod; rm -rf ~?" in first.stderr
    assert "answer: ll-loop approve ship [--note TEXT]" in first.stderr
    assert "or:     ll-loop reject ship [--note TEXT]" in first.stderr
    assert first.stderr.splitlines()[-1].startswith("Loop awaiting approval in ask (1 iteration")
    status = llproc.console(project, "status", "ship")
    assert "status:    awaiting_approval" in status.stdout
    assert "question:  Deploy to prod; rm -rf ~?" in status.stdout
    # Another process answers.
    approved = llproc.console(project, "approve", "ship", "--note", HOSTILE_NOTE)
    assert approved.returncode == ExitCode.OK, approved.stderr
    assert approved.stderr == (
        "approved state 'ask' of loop 'ship'; continue with: ll-loop resume ship\n"
    )
    resumed = llproc.console(project, "resume", "ship", "--json")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert json.loads(resumed.stdout)["final_state"] == "done"
    assert (project / "deployed.txt").read_text() == HOSTILE_NOTE
    assert not (project / "pwned").exists()
    assert not (project / "pwned2").exists()
    assert "\x1b" not in resumed.stderr  # the note is shown escaped
    assert "approved (success): ok $(touch pwned)" in resumed.stderr


def test_reject_routes_the_reject_branch(project: Path) -> None:
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    rejected = llproc.console(project, "reject", "ship", "--note", "not today")
    assert rejected.returncode == ExitCode.OK, rejected.stderr
    resumed = llproc.console(project, "resume", "ship")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert (project / "rejected.txt").read_text() == "not today"
    assert not (project / "deployed.txt").exists()
    answers = [e for e in llproc.events(project, "ship") if e["event"] == "approval"]
    assert [(e["verdict"], e["note"]) for e in answers] == [("failure", "not today")]


def test_a_resume_with_no_answer_yet_stops_again(project: Path) -> None:
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    again = llproc.console(project, "resume", "ship")
    assert again.returncode == ExitCode.AWAITING_APPROVAL, again.stderr


def test_approve_of_a_loop_not_awaiting_approval_is_a_one_line_error(project: Path) -> None:
    done = project / ".loops" / "plain.yaml"
    done.write_text("name: plain\ninitial: a\nstates:\n  a:\n    terminal: true\n")
    assert llproc.console(project, "run", "plain").returncode == ExitCode.OK
    result = llproc.console(project, "approve", "plain")
    assert (result.returncode, result.stderr) == (
        ExitCode.FAILED,
        "ll-loop: error: loop 'plain' is not awaiting approval (status: completed)\n",
    )
    missing = llproc.console(project, "reject", "ship")
    assert missing.returncode == ExitCode.FAILED
    assert missing.stderr.startswith("ll-loop: error: loop 'ship' has no saved run")


def test_a_background_run_waits_and_goes_on_when_approved(project: Path) -> None:
    started = llproc.console(project, "run", "ship", "--background", "--wait-approval")
    assert started.returncode == ExitCode.OK, started.stderr
    llproc.wait_for(
        lambda: (llproc.state(project, "ship").get("approval") or {}).get("state") == "ask",
        timeout=15,
        what="the question",
    )
    status = llproc.console(project, "status", "ship")
    assert "status:    running (pid" in status.stdout
    assert "question:  Deploy to prod; rm -rf ~?" in status.stdout
    approved = llproc.console(project, "approve", "ship", "--note", "go")
    assert "the run waiting for it goes on" in approved.stderr
    llproc.wait_for(
        lambda: llproc.state(project, "ship").get("status") == "completed",
        timeout=15,
        what="the run to finish",
    )
    assert (project / "deployed.txt").read_text() == "go"


def test_a_foreground_wait_is_ended_at_once_by_stop(project: Path) -> None:
    run = llproc.start(project, "run", "ship", "--wait-approval")
    try:
        llproc.wait_for(
            lambda: llproc.state(project, "ship").get("approval") is not None,
            timeout=15,
            what="the question",
        )
        stopped = llproc.console(project, "stop", "ship")
        assert stopped.returncode == ExitCode.OK, stopped.stderr
        assert run.wait(timeout=scaled(10)) == ExitCode.STOPPED
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGKILL)
            run.wait()
    # The question is still pending: answered now, the resume (which kept --wait-approval)
    # takes the answer.
    assert llproc.console(project, "reject", "ship").returncode == ExitCode.OK
    resumed = llproc.console(project, "resume", "ship")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert (project / "rejected.txt").exists()


TIMED = """\
    name: timed
    initial: ask
    states:
      ask:
        action_type: approval
        action: Go on?
        timeout: {seconds}
        on_timeout: too_late
        on_success: done
        on_failure: done
      too_late:
        action: echo late > late.txt
        next: done
      done:
        terminal: true
"""


def test_an_unanswered_wait_takes_on_timeout(project: Path) -> None:
    (project / ".loops" / "timed.yaml").write_text(textwrap.dedent(TIMED.format(seconds=0.3)))
    result = llproc.console(project, "run", "timed", "--wait-approval")
    assert result.returncode == ExitCode.OK, result.stderr
    assert (project / "late.txt").exists()
    assert "no answer in time (timeout)" in result.stderr


def test_the_deadline_counts_from_the_question_across_a_resume(project: Path) -> None:
    (project / ".loops" / "timed.yaml").write_text(textwrap.dedent(TIMED.format(seconds=1)))
    first = llproc.console(project, "run", "timed")
    assert first.returncode == ExitCode.AWAITING_APPROVAL, first.stderr
    asked = llproc.state(project, "timed")["approval"]["deadline"]
    time.sleep(max(0.0, asked - time.time()) + 0.1)  # until the deadline has passed
    resumed = llproc.console(project, "resume", "timed")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert (project / "late.txt").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            (
                "    on_success: deploy\n",
                "    on_success: deploy\n    evaluate:\n      type: exit_code\n",
            ),
            "loop 'ship' > states > ask > evaluate: not used by an approval state",
        ),
        (
            ("    on_success: deploy\n", "    on_success: deploy\n    timeout: 5\n"),
            "loop 'ship' > states > ask > timeout: an approval timeout needs on_timeout",
        ),
        (
            ("    next: done\n", "    next: done\n    on_timeout: done\n"),
            "loop 'ship' > states > deploy > on_timeout: only used by an approval state",
        ),
        (
            ("action_type: approval", "action_type: aproval"),
            "loop 'ship' > states > ask > action_type: expected one of",
        ),
    ],
)
def test_validate_checks_approval_states(
    project: Path, change: tuple[str, str], message: str
) -> None:
    path = project / ".loops" / "ship.yaml"
    path.write_text(path.read_text().replace(*change, 1))
    result = llproc.console(project, "validate", "ship")
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert message in result.stdout + result.stderr


def test_resuming_at_an_unanswered_question_is_not_one_more_visit(project: Path) -> None:
    path = project / ".loops" / "ship.yaml"
    path.write_text(path.read_text().replace("states:\n", "stall:\n  max_visits: 1\nstates:\n", 1))
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    for _ in range(2):
        again = llproc.console(project, "resume", "ship")
        assert again.returncode == ExitCode.AWAITING_APPROVAL, again.stderr


def test_a_planted_link_at_the_answer_leaves_the_question_open(
    project: Path, tmp_path: Path
) -> None:
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    target = tmp_path / "elsewhere.json"
    target.write_text('{"verdict": "success"}')
    (project / ".loops" / ".running" / "ship.approval.json").symlink_to(target)
    again = llproc.console(project, "resume", "ship")
    assert again.returncode == ExitCode.AWAITING_APPROVAL, again.stderr  # not failed
    assert "Traceback" not in again.stderr
    assert not (project / "deployed.txt").exists()  # the planted "answer" was not taken
    # approve replaces the link with its own file (atomically), never writing through it.
    assert llproc.console(project, "approve", "ship", "--note", "go").returncode == 0
    assert target.read_text() == '{"verdict": "success"}'
    assert llproc.console(project, "resume", "ship").returncode == ExitCode.OK
    assert (project / "deployed.txt").read_text() == "go"


def _answer(project: Path, command: str, note: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "ll-loop"), command, "ship", "--note", note],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_of_many_answers_at_once_exactly_one_counts_and_the_run_follows_it(
    project: Path,
) -> None:
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    commands = ["approve" if n % 2 else "reject" for n in range(12)]
    procs = [_answer(project, command, f"answer {n}") for n, command in enumerate(commands)]
    results = [(proc.wait(timeout=scaled(60)), *proc.communicate()) for proc in procs]
    won = [n for n, (code, _, _) in enumerate(results) if code == ExitCode.OK]
    assert len(won) == 1, results
    first = won[0]
    said = "approved" if commands[first] == "approve" else "rejected"
    for n, (code, out, err) in enumerate(results):
        if n == first:
            continue
        assert (code, out) == (ExitCode.FAILED, ""), err
        assert len(err.splitlines()) == 1, err
        assert err.startswith(f"ll-loop: error: state 'ask' of loop 'ship' was already {said} at ")
        assert f"(note: answer {first}); the first answer counts" in err
    resumed = llproc.console(project, "resume", "ship")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    kept = "deployed.txt" if commands[first] == "approve" else "rejected.txt"
    assert (project / kept).read_text() == f"answer {first}"
    assert {p.name for p in project.glob("*.txt")} == {kept}


def test_a_second_answer_before_resume_does_not_replace_the_first(project: Path) -> None:
    assert llproc.console(project, "run", "ship").returncode == ExitCode.AWAITING_APPROVAL
    assert llproc.console(project, "approve", "ship", "--note", "yes").returncode == ExitCode.OK
    again = llproc.console(project, "reject", "ship", "--note", "no")
    assert again.returncode == ExitCode.FAILED
    assert "was already approved at " in again.stderr
    assert f" by {pwd.getpwuid(os.getuid()).pw_name} (note: yes)" in again.stderr
    resumed = llproc.console(project, "resume", "ship")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert (project / "deployed.txt").read_text() == "yes"
    assert not (project / "rejected.txt").exists()


def test_an_answer_after_a_waiting_run_took_the_first_is_refused(project: Path) -> None:
    run = llproc.start(project, "run", "ship", "--wait-approval")
    try:
        llproc.wait_for(
            lambda: llproc.state(project, "ship").get("approval") is not None,
            timeout=15,
            what="the question",
        )
        assert llproc.console(project, "reject", "ship").returncode == ExitCode.OK
        # Until the run saves that it moved on, the question looks pending: still refused.
        late = llproc.console(project, "approve", "ship")
        assert run.wait(timeout=scaled(20)) == ExitCode.OK
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGKILL)
            run.wait()
    assert late.returncode == ExitCode.FAILED
    assert (project / "rejected.txt").exists()
    assert not (project / "deployed.txt").exists()
