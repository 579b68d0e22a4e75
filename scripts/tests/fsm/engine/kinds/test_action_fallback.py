"""A prompt state with a list of agents, run by the real `ll-loop` with agents that are real
bash scripts (`agents:`): a usage limit or a missing program sends the same step to the next
agent; every agent limited waits (the `rate_limit:` ladder) and goes on with the first free."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

# An agent that says its quota is out for its first LIMITED calls (counted in a file), then
# does the work: appends its name to done.txt.
AGENT = """\
#!/usr/bin/env bash
n=$(( $(cat .calls-{name} 2>/dev/null || echo 0) + 1 )); echo "$n" > .calls-{name}
if [ "$n" -le {limited} ]; then echo "{name}: usage limit reached, try later"; exit 1; fi
echo "{name}" >> done.txt; echo "cost: \\$0.25"
"""

LOOP = """\
name: fb
initial: work
max_iterations: 3
agent: [{agents}]
rate_limit: {{ladder: [1], max_wait: 120}}
agents:
  first:
    command: ./first.sh
    limit_pattern: "usage limit reached"
    cost_pattern: 'cost: \\$([0-9.]+)'
  second:
    command: ./second.sh
    limit_pattern: "usage limit reached"
    cost_pattern: 'cost: \\$([0-9.]+)'
  missing:
    command: no-such-agent-of-ll-loop --fast
states:
  work:
    action_type: prompt
    action: "Fix the bug"
    evaluate: {{type: exit_code}}
    on_success: again
    on_failure: failed
    on_error: failed
  again:
    action_type: prompt
    action: "Fix the next bug"
    evaluate: {{type: exit_code}}
    on_success: done
    on_failure: failed
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def _project(project: LoopProject, agents: str, **limited: int) -> None:
    for name in ("first", "second"):
        script = project.root / f"{name}.sh"
        script.write_text(AGENT.format(name=name, limited=limited.get(name, 0)))
        script.chmod(0o755)
    project.write("fb", textwrap.dedent(LOOP.format(agents=agents)))


def _run(root: Path) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    done = llproc.console(root, "run", "fb", "--json", timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    return json.loads(done.stdout), done.stderr, llproc.events(root, "fb")


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def test_a_usage_limit_runs_the_same_step_on_the_next_agent(loop_project: LoopProject) -> None:
    _project(loop_project, "first, second", first=99)
    outcome, stderr, events = _run(loop_project.root)

    assert outcome["final_state"] == "done"
    # The switch is no step of its own: each state entered once, in one pass.
    assert [e["state"] for e in _of(events, "state_enter")] == ["work", "again"]
    assert outcome["iterations"] == 1
    assert (loop_project.root / "done.txt").read_text() == "second\nsecond\n"
    # The first step tried first, then second; the next skipped first (still limited).
    assert [e["agent"] for e in _of(events, "action_start")] == ["first", "second", "second"]
    switches = _of(events, "agent_switch")
    assert [(s["state"], s["from"], s["to"], s["reason"]) for s in switches] == [
        ("work", "first", "second", "usage_limit"),
        ("again", "first", "second", "limited"),
    ]
    assert "↪ first's usage limit: on with second" in stderr
    assert "↪ first still limited: on with second" in stderr
    assert [s["reason"] for s in outcome["agent_switches"]] == ["usage_limit", "limited"]
    assert set(outcome["limited_agents"]) == {"first"}
    assert _of(events, "rate_limit_wait") == []  # one agent was free: no wait
    # The report: cost per agent and the switches.
    report = llproc.console(loop_project.root, "report", "fb", "--json")
    data = json.loads(report.stdout)
    assert data["agents"]["second"]["cost_usd"] == 0.5
    assert data["agents"]["first"]["actions"] == 1
    assert len(data["agent_switches"]) == 2
    text = llproc.console(loop_project.root, "report", "fb").stdout
    assert "AGENT" in text
    assert "switch in work: first's usage limit: on with second" in text
    # `logs` shows the agent that did the step, its output as the plain text it printed.
    logs = llproc.console(loop_project.root, "logs", "fb", "work")
    assert logs.returncode == ExitCode.OK, logs.stderr
    assert "(state work, second call)" in logs.stdout.splitlines()[0]
    assert logs.stdout.splitlines()[1:] == ["cost: $0.25"]


def test_a_missing_agent_is_skipped_for_the_rest_of_the_run(loop_project: LoopProject) -> None:
    _project(loop_project, "missing, first")
    outcome, stderr, events = _run(loop_project.root)

    assert outcome["final_state"] == "done"
    assert [e["agent"] for e in _of(events, "action_start")] == ["missing", "first", "first"]
    assert [s["reason"] for s in _of(events, "agent_switch")] == ["not_installed"] * 2
    assert "↪ missing is not installed: on with first" in stderr
    assert outcome["limited_agents"]["missing"]["until"] is None


def test_every_agent_limited_waits_then_goes_on_with_the_first_free(
    loop_project: LoopProject,
) -> None:
    _project(loop_project, "first, second", first=1, second=99)
    outcome, stderr, events = _run(loop_project.root)

    assert outcome["final_state"] == "done"
    assert [e["state"] for e in _of(events, "state_enter")] == ["work", "again"]
    starts = [e["agent"] for e in _of(events, "action_start")]
    # work: first and second limited → wait (the ladder's 1s) → first is free again.
    assert starts[:3] == ["first", "second", "first"]
    (wait,) = _of(events, "rate_limit_wait")
    assert wait["agent"] == "every agent"
    assert wait["limit"] == "usage_limit"
    assert "⏳ waiting for every agent's usage limit" in stderr
    assert outcome["waited_ms"]["rate_limit"] >= 500
    assert (loop_project.root / "done.txt").read_text().startswith("first\n")


def test_the_wait_for_every_agent_stops_at_once_and_a_resume_remembers_who_is_limited(
    loop_project: LoopProject,
) -> None:
    root = loop_project.root
    _project(loop_project, "first, second", first=1, second=99)
    # A ladder long enough that only `stop` can end the wait; the resume waits it out afresh.
    loop_file = root / ".loops" / "fb.yaml"
    loop_file.write_text(loop_file.read_text().replace("ladder: [1]", f"ladder: [{scaled(3)}]"))
    log = root / ".loops" / ".running" / "fb.events.jsonl"
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ll-loop"), "run", "fb"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        llproc.wait_for(
            lambda: log.exists() and '"rate_limit_wait"' in log.read_text(),
            timeout=60,
            what="the wait for every agent",
        )
        status = json.loads(llproc.console(root, "status", "fb", "--json").stdout)
        assert set(status["limited_agents"]) == {"first", "second"}
        assert [s["to"] for s in status["agent_switches"]] == ["second"]
        text = llproc.console(root, "status", "fb").stdout
        (line,) = [line for line in text.splitlines() if line.startswith("waiting:")]
        assert line.split(None, 1)[1].startswith("for every agent's usage limit in state work")
        llproc.console(root, "stop", "fb")
        assert proc.wait(timeout=scaled(10)) == ExitCode.STOPPED
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    done = llproc.console(root, "resume", "fb", "--json", timeout=120)

    assert done.returncode == ExitCode.OK, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["final_state"] == "done"
    events = _of(llproc.events(root, "fb"), "action_start")
    # Resumed: the same wait finished, then first (free again) did both steps; neither
    # agent ran again before the wait had ended.
    assert [e["agent"] for e in events] == ["first", "second", "first", "first"]
    assert (root / ".calls-second").read_text() == "1\n"
    assert [s["to"] for s in outcome["agent_switches"]] == ["second"]


def test_the_fallback_doc_s_example_runs(loop_project: LoopProject, tmp_path: Path) -> None:
    from support.doc_blocks import all_blocks

    (example,) = [
        b for b in all_blocks() if b.doc.endswith("fallback.md") and b.text.startswith("name:")
    ]
    root = loop_project.root
    (root / "tools").mkdir()
    agent = root / "tools" / "my-agent"
    agent.write_text('#!/usr/bin/env bash\necho "did: $1" >> did.txt\n')
    agent.chmod(0o755)
    loop_project.write("fix-all-night", example.text)
    # No `claude` on PATH: the first agent of the list is not installed, the second does it.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}
    done = llproc.ll_loop(root, "run", "fix-all-night", "--json", env=env, timeout=60)

    assert done.returncode == ExitCode.OK, done.stderr
    assert json.loads(done.stdout)["final_state"] == "done"
    assert (root / "did.txt").read_text() == "did: Fix the failing test in tests/\n"
    assert "↪ claude is not installed: on with mine" in done.stderr
