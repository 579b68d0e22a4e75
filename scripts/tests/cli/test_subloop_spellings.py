"""Sub-loops as little-loops writes them, through the console script and real bash:
`loop: oracles/x` (folder names), `loop: ${...}`, `context_passthrough`, the child's captures
under the state's name, and `timeout:` / `on_timeout:` on a sub-loop state."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

ORACLE = """\
name: judge
parameters:
  item: {type: string, default: none}
initial: look
states:
  look:
    action: 'echo "verdict-for-${context.item}"; echo "judge ${context.item}" >> side.txt'
    capture: verdict
    next: done
  done:
    terminal: true
"""

PARENT = """\
name: parent
context:
  item: apple
initial: ask
states:
  ask:
    loop: oracles/judge
    context_passthrough: true
    on_success: report
    on_failure: failed
  report:
    action: >-
      echo "parent read ${captured.ask.verdict.output} (${captured.ask.terminated_by})"
      >> side.txt
    next: done
  failed:
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


def test_a_folder_named_child_shares_context_and_gives_its_captures_back(
    loop_project: LoopProject,
) -> None:
    (loop_project.loops / "oracles").mkdir()
    loop_project.write("oracles/judge", ORACLE)
    loop_project.write("parent", PARENT)
    checked = llproc.console(loop_project.root, "validate", "parent")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = llproc.console(loop_project.root, "run", "parent", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.side_effects(loop_project.root) == [
        "judge apple",
        "parent read verdict-for-apple (terminal)",
    ]


SIBLING = """\
name: outer
initial: go
states:
  go:
    loop: oracles/inner
    on_success: done
  done:
    terminal: true
"""


def test_a_child_in_a_folder_names_its_siblings_from_the_project(
    loop_project: LoopProject,
) -> None:
    (loop_project.loops / "oracles").mkdir()
    inner = ORACLE.replace("name: judge", "name: inner").replace("none", "pear")
    loop_project.write("oracles/inner", inner)
    loop_project.write("oracles/outer", SIBLING)  # .loops/oracles/outer names oracles/inner
    top = SIBLING.replace("outer", "top").replace("oracles/inner", "oracles/outer")
    loop_project.write("top", top)
    result = llproc.console(loop_project.root, "run", "top")
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.side_effects(loop_project.root) == ["judge pear"]


DYNAMIC = """\
name: router
initial: pick
states:
  pick:
    action: echo "oracles/judge"
    capture: chosen
    next: run_it
  run_it:
    loop: "${captured.chosen.output}"
    with:
      item: kiwi
    on_success: done
    on_error: broken
  broken:
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


def test_a_loop_named_at_run_time_is_found_then(loop_project: LoopProject) -> None:
    (loop_project.loops / "oracles").mkdir()
    loop_project.write("oracles/judge", ORACLE)
    loop_project.write("router", DYNAMIC)
    checked = llproc.console(loop_project.root, "validate", "router")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "named at run time" in checked.stdout + checked.stderr
    result = llproc.console(loop_project.root, "run", "router", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.side_effects(loop_project.root) == ["judge kiwi"]


def test_a_loop_named_at_run_time_that_is_no_loop_is_the_verdict_error(
    loop_project: LoopProject,
) -> None:
    loop_project.write("router", DYNAMIC.replace('echo "oracles/judge"', "echo nowhere"))
    result = llproc.console(loop_project.root, "run", "router", "--json")
    assert result.returncode == ExitCode.TERMINAL_FAILURE, result.stderr
    assert json.loads(result.stdout)["final_state"] == "broken"
    assert "loop: ${captured.chosen.output} is 'nowhere': no loop named 'nowhere'" in (
        result.stderr
    )


SLOW = """\
name: slow
initial: work
states:
  work:
    action: 'echo started >> side.txt; sleep {marker} & echo $! > sleeper.pid; wait'
    next: done
  done:
    terminal: true
"""

TIMED = """\
name: timed
initial: call
states:
  call:
    loop: slow
    timeout: {seconds}
    on_success: done
    on_failure: gave_up
    {on_timeout}
  salvage:
    action: echo salvage >> side.txt
    next: done
  gave_up:
    action: echo gave-up >> side.txt
    next: done
  done:
    terminal: true
"""


def _sleeper_gone(root: os.PathLike[str]) -> bool:
    pid = int((Path(root) / "sleeper.pid").read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_sub_loop_timeout_stops_the_child_and_routes_on_timeout(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    seconds = f"{scaled(1):.2f}"
    loop_project.write("timed", TIMED.format(seconds=seconds, on_timeout="on_timeout: salvage"))
    started = time.monotonic()
    result = llproc.console(loop_project.root, "run", "timed", "--json", timeout=30)
    assert result.returncode == ExitCode.OK, result.stderr
    assert time.monotonic() - started < 25  # not the sleeper's 30 seconds
    assert llproc.side_effects(loop_project.root) == ["started", "salvage"]
    llproc.wait_for(lambda: _sleeper_gone(loop_project.root), timeout=10, what="sleeper ended")
    assert llproc.sleepers(marker) == []


def test_a_sub_loop_timeout_without_on_timeout_is_a_failure(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    loop_project.write("timed", TIMED.format(seconds=f"{scaled(1):.2f}", on_timeout=""))
    result = llproc.console(loop_project.root, "run", "timed", "--json", timeout=30)
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.side_effects(loop_project.root) == ["started", "gave-up"]
    assert llproc.sleepers(marker) == []
