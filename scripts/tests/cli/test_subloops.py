"""Sub-loops through the console script: a state with `loop:` runs a child loop in the run."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support import llproc
from support.fake_claude import shell_claude, spender_loop, spending_claude
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

CHILD = """\
name: child
max_iterations: 4
parameters:
  n: integer
  word: string
initial: count
states:
  count:
    action: 'echo ${context.n}; echo "child ${context.word}" >> side.txt'
    capture: count
    next: check
  check:
    action: '[ "${context.word}" != bad ]'
    on_success: ok
    on_failure: nope
  ok:
    terminal: true
  nope:
    terminal: true
    outcome: failure
"""

PARENT = """\
name: parent
context:
  w: hello
initial: first
states:
  first:
    loop: child
    with: {{n: 3, word: "${{context.w}}"}}
    capture: kid
    on_success: second
    on_failure: failed
  second:
    loop: child
    with: {{n: 5, word: {second}}}
    on_success: done
    on_failure: failed
  failed:
    action: >-
      echo "parent saw ${{captured.kid.final_state}} ${{captured.kid.captured.count.output}}"
      >> side.txt
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


def test_two_children_in_sequence_route_on_failure_and_pass_captures(
    loop_project: LoopProject,
) -> None:
    loop_project.write("child", CHILD)
    loop_project.write("parent", PARENT.format(second="bad"))
    result = llproc.console(loop_project.root, "run", "parent", "--json")
    # The run itself ends in a terminal state that says `outcome: failure`: exit 7.
    assert result.returncode == ExitCode.TERMINAL_FAILURE, result.stderr
    end = json.loads(result.stdout)
    assert (end["final_state"], end["terminated_by"]) == ("failed", "terminal_failure")
    assert llproc.side_effects(loop_project.root) == ["child hello", "child bad", "parent saw ok 3"]
    events = llproc.events(loop_project.root, "parent")
    verdicts = [(e["state"], e["verdict"]) for e in events if e["event"] == "evaluate"]
    assert verdicts == [
        ("check", "success"),
        ("first", "success"),
        ("check", "failure"),
        ("second", "failure"),
    ]
    child_events = [e for e in events if e.get("depth")]
    assert {(e["depth"], e["loop"]) for e in child_events} == {(1, "child")}
    ends = [e for e in events if e["event"] == "loop_complete"]
    assert [(e.get("depth"), e["final_state"]) for e in ends] == [
        (1, "ok"),
        (1, "nope"),
        (None, "failed"),
    ]
    shown = result.stderr
    assert "    ↳ loop child ended in nope (terminal_failure)\n" in shown
    assert "Loop ended in failed, a failure outcome (1 iteration, " in shown
    history = llproc.console(loop_project.root, "history", "parent").stdout.splitlines()
    assert [line.split(" ", 1)[1] for line in history[:3]] == [
        "loop_start      parent at first",
        "state_enter     first (iteration 1)",
        "loop_start          child at count",
    ]
    status = llproc.console(loop_project.root, "status", "parent").stdout
    assert "status:       failed: ended in failed (failure)\n" in status
    assert '    [1/4] check → [ "bad" != bad ]\n' in shown


def test_children_succeeding_end_in_done(loop_project: LoopProject) -> None:
    loop_project.write("child", CHILD)
    loop_project.write("parent", PARENT.format(second="fine"))
    result = llproc.console(loop_project.root, "run", "parent", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert json.loads(result.stdout)["final_state"] == "done"
    assert llproc.side_effects(loop_project.root) == ["child hello", "child fine"]


@pytest.mark.parametrize(
    ("with_", "message"),
    [
        ("{n: three, word: x}", "with > n: parameter of loop 'child': expected a whole number"),
        ("{word: x}", "with: missing required parameter 'n' of loop 'child'"),
        ("{n: 1, word: x, wrod: y}", "with > wrod: unknown parameter of loop 'child'"),
    ],
)
def test_parameters_are_checked_against_the_child(
    loop_project: LoopProject, with_: str, message: str
) -> None:
    loop_project.write("child", CHILD)
    loop_project.write(
        "parent",
        f"""\
        name: parent
        initial: go
        states:
          go:
            loop: child
            with: {with_}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "validate", "parent")
    assert result.returncode != 0
    assert message in result.stderr + result.stdout


def test_an_interpolated_value_of_the_wrong_type_is_an_error_verdict(
    loop_project: LoopProject,
) -> None:
    loop_project.write("child", CHILD)
    loop_project.write(
        "parent",
        """\
        name: parent
        context: {n: many}
        initial: go
        states:
          go:
            loop: child
            with: {n: "${context.n}", word: x}
            on_success: done
            on_failure: done
            on_error: broken
          done:
            terminal: true
          broken:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "run", "parent", "--json")
    assert json.loads(result.stdout)["final_state"] == "broken"
    assert llproc.side_effects(loop_project.root) == []
    (judged,) = [e for e in llproc.events(loop_project.root, "parent") if e["event"] == "evaluate"]
    assert "expected a whole number, got 'many'" in judged["error"]


def test_recursion_is_rejected(loop_project: LoopProject) -> None:
    for name, other in (("a", "b"), ("b", "a")):
        loop_project.write(
            name,
            f"""\
            name: {name}
            initial: go
            states:
              go:
                loop: {other}
                on_success: done
                on_failure: done
              done:
                terminal: true
            """,
        )
    result = llproc.console(loop_project.root, "run", "a")
    assert result.returncode == ExitCode.USAGE
    assert "recursion: a.yaml > b.yaml > a.yaml runs itself" in result.stderr
    assert not (loop_project.root / "side.txt").exists()


def test_a_loop_with_an_action_and_a_loop_is_rejected(loop_project: LoopProject) -> None:
    loop_project.write("child", CHILD)
    loop_project.write(
        "parent",
        """\
        name: parent
        initial: go
        states:
          go:
            loop: child
            action: echo hi
            with: {n: 1, word: x}
            on_success: done
          done:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "validate", "parent")
    shown = result.stdout + result.stderr
    assert "go > action: a sub-loop state (loop:) runs the child loop" in shown


def test_the_shared_budget_stops_a_child_mid_way(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    spending_claude(loop_project.root, monkeypatch, then="; echo x >> side.txt")
    loop_project.write("spender", spender_loop())
    loop_project.write(
        "boss",
        """\
        name: boss
        initial: work
        max_cost_usd: 0.1
        states:
          work:
            loop: spender
            on_success: done
            on_failure: done
            on_error: done
          done:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "run", "boss", "--json")
    assert result.returncode == ExitCode.BUDGET, result.stderr
    end = json.loads(result.stdout)
    assert (end["terminated_by"], end["final_state"]) == ("budget", "work")
    assert end["cost_usd"] == pytest.approx(0.12)
    assert llproc.side_effects(loop_project.root) == ["x", "x", "x"]


DEEP = {
    "top": """\
name: top
initial: run
states:
  run:
    loop: middle
    with: {tag: t}
    on_success: done
  done:
    action: echo top-done >> side.txt
    terminal: true
""",
    "middle": """\
name: middle
parameters:
  tag: string
initial: before
states:
  before:
    action: echo middle-before >> side.txt
    next: run
  run:
    loop: bottom
    with: {tag: "${context.tag}"}
    on_success: done
  done:
    terminal: true
""",
    "bottom": """\
name: bottom
parameters:
  tag: string
initial: act
states:
  act:
    action: 'echo "bottom-act ${context.tag}" >> side.txt; [ -e go ] || sleep 30'
    next: after
  after:
    action: echo bottom-after >> side.txt
    next: done
  done:
    terminal: true
""",
}


def test_depth_3_runs_and_resumes_after_kill_9_in_the_grandchild(
    loop_project: LoopProject,
) -> None:
    for name, text in DEEP.items():
        loop_project.write(name, text)
    proc = llproc.start(loop_project.root, "run", "top")
    try:
        llproc.wait_for(
            lambda: "bottom-act t" in llproc.side_effects(loop_project.root),
            timeout=10,
            what="bottom",
        )
        llproc.wait_for(
            lambda: (
                (llproc.state(loop_project.root, "top").get("child") or {}).get("child") is not None
            ),
            timeout=10,
            what="the grandchild in the state file",
        )
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = llproc.state(loop_project.root, "top")
    assert saved["current_state"] == "run"
    assert (saved["child"]["loop"], saved["child"]["current_state"]) == ("middle", "run")
    assert (saved["child"]["child"]["loop"], saved["child"]["child"]["current_state"]) == (
        "bottom",
        "act",
    )
    shown = llproc.console(loop_project.root, "status", "top").stdout
    assert "run > middle: run > bottom: act\n" in shown
    (loop_project.root / "go").write_text("")
    resumed = llproc.console(loop_project.root, "resume", "top", timeout=30)
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    # The interrupted grandchild action runs again (documented); nothing before it does.
    assert llproc.side_effects(loop_project.root) == [
        "middle-before",
        "bottom-act t",
        "bottom-act t",
        "bottom-after",
        "top-done",
    ]
    events = llproc.events(loop_project.root, "top")
    assert {(e.get("depth"), e.get("loop")) for e in events if e.get("depth")} == {
        (1, "middle"),
        (2, "bottom"),
    }


SLEEPY_CHILD = """\
name: sleepy
initial: start
max_iterations: {max_iterations}
states:
  start:
    action: echo start >> side.txt
    next: nap
  nap:
    action: 'echo nap >> side.txt; [ -e go ] || sleep {seconds}'
    on_success: done
    on_failure: nap
  done:
    terminal: true
"""
SLEEPY_PARENT = """\
name: boss
initial: work
{limits}
states:
  work:
    loop: sleepy
    on_success: done
    on_error: fallback
  fallback:
    action: echo fallback >> side.txt
    terminal: true
  done:
    action: echo boss-done >> side.txt
    terminal: true
"""


def test_stop_during_a_child_stops_the_tree_and_resume_finishes(
    loop_project: LoopProject,
) -> None:
    loop_project.write("sleepy", SLEEPY_CHILD.format(max_iterations=5, seconds=30))
    loop_project.write("boss", SLEEPY_PARENT.format(limits=""))
    proc = llproc.start(loop_project.root, "run", "boss")
    try:
        llproc.wait_for(
            lambda: "nap" in llproc.side_effects(loop_project.root), timeout=10, what="the child"
        )
        stopped = llproc.console(loop_project.root, "stop", "boss")
        assert stopped.returncode == 0, stopped.stderr
        assert proc.wait(timeout=scaled(10)) == ExitCode.STOPPED
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = llproc.state(loop_project.root, "boss")
    assert (saved["status"], saved["child"]["loop"]) == ("stopped", "sleepy")
    assert saved["child"]["current_state"] == "nap"
    (loop_project.root / "go").write_text("")
    resumed = llproc.console(loop_project.root, "resume", "boss")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    # The child goes on at `nap` (its `start` does not run again); `nap` was cut short.
    assert llproc.side_effects(loop_project.root) == ["start", "nap", "nap", "boss-done"]


def test_the_parents_timeout_stops_a_child_mid_way(loop_project: LoopProject) -> None:
    loop_project.write("sleepy", SLEEPY_CHILD.format(max_iterations=5, seconds=30))
    # The child has started its `nap` within the parent's second (longer on a slower machine).
    loop_project.write("boss", SLEEPY_PARENT.format(limits=f"timeout: {scaled(1):.2f}"))
    result = llproc.console(loop_project.root, "run", "boss", "--json", timeout=20)
    assert result.returncode == ExitCode.TIMEOUT, result.stderr
    end = json.loads(result.stdout)
    assert (end["terminated_by"], end["final_state"]) == ("timeout", "work")
    assert llproc.side_effects(loop_project.root) == ["start", "nap"]


def test_a_childs_own_limit_is_the_error_verdict(loop_project: LoopProject) -> None:
    (loop_project.root / "go").write_text("")
    loop_project.write(
        "sleepy",
        SLEEPY_CHILD.format(max_iterations=2, seconds=0).replace("[ -e go ] || sleep 0", "false"),
    )
    loop_project.write("boss", SLEEPY_PARENT.format(limits=""))
    result = llproc.console(loop_project.root, "run", "boss", "--json")
    # `fallback` is terminal, reached on the verdict error: the run is a failure.
    assert result.returncode == ExitCode.TERMINAL_FAILURE, result.stderr
    assert json.loads(result.stdout)["final_state"] == "fallback"
    assert result.stderr.splitlines()[-1].startswith(
        "Loop ended in fallback, a failure: reached from state 'work' on the verdict error:"
        " loop 'sleepy' ended by max_iterations (1 iteration, "
    )
    assert llproc.side_effects(loop_project.root) == ["start", "nap", "nap", "fallback"]
    (judged,) = [
        e
        for e in llproc.events(loop_project.root, "boss")
        if e["event"] == "evaluate" and not e.get("depth")
    ]
    assert (judged["verdict"], judged["final_state"]) == ("error", "nap")


def test_a_childs_spend_rolls_up_to_its_state_and_the_run(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = '{"type": "result", "result": "done", "total_cost_usd": 0.04}'
    shell_claude(loop_project.root, monkeypatch, f"echo '{report}'", shell="bash")
    loop_project.write(
        "once",
        """\
        name: once
        initial: ask
        states:
          ask:
            action: /do it
            evaluate: {type: exit_code}
            on_success: done
          done:
            terminal: true
        """,
    )
    loop_project.write(
        "top",
        """\
        name: top
        initial: go
        states:
          go:
            loop: once
            on_success: done
          done:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "run", "top", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert json.loads(result.stdout)["cost_usd"] == pytest.approx(0.04)
    (judged,) = [
        e
        for e in llproc.events(loop_project.root, "top")
        if e["event"] == "evaluate" and not e.get("depth")
    ]
    assert judged["cost_usd"] == pytest.approx(0.04)
    shown = llproc.console(loop_project.root, "report", "top", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["states"]["go"]["cost_usd"] == pytest.approx(0.04)


def test_graph_and_simulate_show_the_sub_loops(loop_project: LoopProject) -> None:
    loop_project.write("child", CHILD)
    loop_project.write("parent", PARENT.format(second="bad"))
    graph = llproc.console(loop_project.root, "graph", "parent").stdout
    assert '    s0[["first: loop child"]]\n' in graph
    assert "subgraph" not in graph
    expanded = llproc.console(loop_project.root, "graph", "parent", "--expand").stdout
    assert '    subgraph s1_loop["loop child"]\n' in expanded
    walk = llproc.console(
        loop_project.root,
        "simulate",
        "parent",
        "--verdicts",
        "first=success",
        "--verdicts",
        "second/check=failure",
    )
    assert walk.returncode == 7, walk.stderr  # `failed` says outcome: failure, as a run ends
    # A shell action is shown as bash gets it: the values it reads, then the script.
    check = '    [1/50] second/check → LL_V_1=bad\n             [ "${LL_V_1}" != bad ]\n'
    assert check in walk.stdout
    assert "       ✗ failure (loop child ended in nope: terminal_failure)\n" in walk.stdout
    assert (
        "Simulation ended in failed, a failure: reached terminal state 'failed'"
        " (outcome: failure) (1 iteration)\n"
    ) in walk.stdout
    wrong = llproc.console(loop_project.root, "simulate", "parent", "--verdicts", "first/chek=x")
    assert wrong.returncode == ExitCode.USAGE
    assert "'chek' is not a state of loop 'child' (did you mean check?)" in wrong.stderr


def test_the_dry_run_plan_names_the_child_and_its_values(loop_project: LoopProject) -> None:
    loop_project.write("child", CHILD)
    loop_project.write("parent", PARENT.format(second="bad"))
    plan = llproc.console(loop_project.root, "run", "parent", "--dry-run").stdout
    assert "  first  [initial]\n    loop: child with n=3, word='${context.w}'\n" in plan
    assert "    capture: kid\n    routes: success → second, failure → failed\n" in plan
    assert not (loop_project.root / "side.txt").exists()


def test_ctrl_c_in_a_child_interrupts_the_tree(loop_project: LoopProject) -> None:
    loop_project.write("sleepy", SLEEPY_CHILD.format(max_iterations=5, seconds=30))
    loop_project.write("boss", SLEEPY_PARENT.format(limits=""))
    proc = llproc.start(loop_project.root, "run", "boss")
    try:
        llproc.wait_for(
            lambda: "nap" in llproc.side_effects(loop_project.root), timeout=10, what="the child"
        )
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=scaled(10)) == ExitCode.INTERRUPTED
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = llproc.state(loop_project.root, "boss")
    assert (saved["status"], saved["terminated_by"]) == ("interrupted", "interrupted")
    assert saved["child"]["current_state"] == "nap"
    ends = [e for e in llproc.events(loop_project.root, "boss") if e["event"] == "loop_complete"]
    assert [(e.get("depth"), e["terminated_by"]) for e in ends] == [
        (1, "interrupted"),
        (None, "interrupted"),
    ]


def test_an_output_handed_to_a_child_is_data(tmp_path: Path) -> None:
    # A captured output reaches the child through `with:`; a `${env...}` in that output is
    # text, never filled in, so an action's output cannot read the environment.
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "outer.yaml").write_text(
        "name: outer\ninitial: fetch\nstates:\n"
        "  fetch:\n    action: echo 'title $${env.LL_TEST_TOKEN}'\n    capture: issue\n"
        "    next: inner\n"
        "  inner:\n    loop: inner\n    with:\n      title: ${captured.issue.output}\n"
        "    on_success: done\n    on_failure: done\n    on_error: done\n"
        "  done:\n    terminal: true\n"
    )
    (loops / "inner.yaml").write_text(
        "name: inner\nparameters:\n  title: string\ninitial: show\nstates:\n"
        "  show:\n    action: printf '%s' ${context.title} > shown.txt\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    env = {**os.environ, "LL_TEST_TOKEN": "s3cret"}
    done = llproc.ll_loop(tmp_path, "run", "outer", env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "shown.txt").read_text() == "title ${env.LL_TEST_TOKEN}"
