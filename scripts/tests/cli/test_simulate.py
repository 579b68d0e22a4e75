"""`ll-loop simulate`: the walk on stdout, exit codes by how it ended, bad scripts refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.llproc import ll_loop
from support.paths import REPO
from support.project import LoopProject

from little_loops.cli.simulate import parse_verdicts
from little_loops.fsm.facts.errors import LoopDefinitionError

FIX_TYPES = """\
name: fix-types
initial: check
states:
  check:
    action: mypy src/
    on_success: done
    on_failure: fix
  fix:
    action: /ll:manage_issue bug fix
    on_success: check
    on_failure: check
  done:
    terminal: true
max_iterations: 10
"""


def test_simulate_prints_the_walk_and_exits_0_at_a_terminal_state(
    loop_project: LoopProject,
) -> None:
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run(
        "simulate", "fix-types", "--verdicts", "check=failure,success", "--verdicts", "fix=success"
    )
    assert result.code == 0
    assert result.err == ""
    assert result.out == (
        "[1/10] check → mypy src/\n"
        "       ✗ failure (scripted)\n"
        "       → fix (on_failure)\n"
        "[1/10] fix → /ll:manage_issue bug fix\n"
        "       ✓ success (scripted)\n"
        "       → check (on_success)\n"
        "[2/10] check → mypy src/\n"
        "       ✓ success (scripted)\n"
        "       → done (on_success)\n"
        "[2/10] done\n"
        "\n"
        "Simulation ended: done (2 iterations)\n"
        "Note: this path calls Claude: 1 prompt action and 1 LLM evaluation\n"
    )


def test_default_and_max_iterations_exit_3(loop_project: LoopProject) -> None:
    loop_project.write("fix-types", FIX_TYPES.replace("max_iterations: 10", "max_iterations: 2"))
    result = loop_project.run("simulate", "fix-types", "--default", "failure")
    assert result.code == 3
    assert result.out.splitlines()[-2:] == [
        "Simulation stopped: max_iterations (2) reached in 'check' (2 iterations)",
        "Note: this path calls Claude: 2 prompt actions and 2 LLM evaluations",
    ]
    assert result.out.count("(default)") == 4


def test_no_valid_transition_exits_1(loop_project: LoopProject) -> None:
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run(
        "simulate", "fix-types", "--verdicts", "check=failure,success", "--verdicts", "fix=blocked"
    )
    assert result.code == 1
    assert result.out.splitlines()[-4:] == [
        "",
        "Simulation stopped in fix: no valid transition from 'fix' for verdict 'blocked' "
        "(1 iteration)",
        "Unused scripted verdicts: check=success",
        "Note: this path calls Claude: 1 prompt action and 1 LLM evaluation",
    ]


def test_a_used_up_script_exits_2(loop_project: LoopProject) -> None:
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run("simulate", "fix-types", "--verdicts", "check=failure")
    assert result.code == 2
    assert result.out.splitlines()[-3:] == [
        "",
        "Simulation stopped in fix: no scripted verdict left for 'fix' and no --default "
        "(1 iteration)",
        "Note: this path calls Claude: 1 prompt action and 1 LLM evaluation",
    ]


def test_json_output(loop_project: LoopProject) -> None:
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run("simulate", "fix-types", "--json", "--default", "success")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["path"] == ["check", "done"]
    assert data["terminated_by"] == "terminal"
    assert data["exit_code"] == 0
    assert data["steps"][0] == {
        "state": "check",
        "iteration": 1,
        "action": "mypy src/",
        "action_type": "shell",
        "verdict": "success",
        "verdict_from": "default",
        "target": "done",
        "reason": "on_success",
        "notes": [],
    }


def test_notes_and_multi_line_actions(loop_project: LoopProject) -> None:
    loop_project.write(
        "notes",
        """\
        name: notes
        initial: report
        states:
          report:
            action: |
              echo "${captured.x.exit_code}"
              echo second line
            on_success: done
            on_failure: later
          later:
            action: "true"
            capture: x
            next: done
          done:
            terminal: true
        """,
    )
    result = loop_project.run("simulate", "notes", "--default", "success")
    assert result.out.splitlines()[:3] == [
        '[1/50] report → echo "${captured.x.exit_code}"',
        "         echo second line",
        "       ! ${captured.x.exit_code}: nothing is captured as 'x' yet on this path; the run "
        "would fail here (undefined variable)",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--verdicts", "chek=success"],
            "ll-loop: error: --verdicts: 'chek' is not a state of loop 'fix-types' "
            "(did you mean check?)\n",
        ),
        (
            ["--verdicts", "check"],
            "ll-loop: error: --verdicts 'check': expected STATE=VERDICT[,VERDICT...], "
            "e.g. check=failure,success\n",
        ),
        (
            ["--verdicts", "check=a,,b"],
            "ll-loop: error: --verdicts: state 'check' has an empty verdict\n",
        ),
    ],
)
def test_bad_verdicts_exit_2_with_one_line(
    loop_project: LoopProject, argv: list[str], message: str
) -> None:
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run("simulate", "fix-types", *argv)
    assert result.code == 2
    assert result.out == ""
    assert result.err == message


def test_an_invalid_loop_is_not_simulated(loop_project: LoopProject) -> None:
    loop_project.write("fix-types", FIX_TYPES.replace("initial: check", "initial: chek"))
    result = loop_project.run("simulate", "fix-types")
    assert result.code == 2
    assert result.err == (
        "ll-loop: error: .loops/fix-types.yaml:2: loop 'fix-types' > initial: 'chek' is not a "
        "state (did you mean check?)\n"
    )


def test_parse_verdicts_joins_repeated_states() -> None:
    assert parse_verdicts(["a=x,y", "b=z", "a= w "]) == {"a": ["x", "y", "w"], "b": ["z"]}
    with pytest.raises(LoopDefinitionError):
        parse_verdicts(["=x"])


def test_the_example_in_docs_is_the_real_output(loop_project: LoopProject) -> None:
    docs = (REPO / "docs" / "analysis.md").read_text()
    command = "ll-loop simulate fix-types --verdicts check=failure,success --verdicts fix=success"
    block = docs.split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    loop_project.write("fix-types", FIX_TYPES)
    result = loop_project.run(*command.split()[1:])
    assert result.out == block


STUCK = """\
name: stuck-demo
initial: check
states:
  check:
    action: mypy src/
    on_success: done
    on_failure: done
    on_error: stuck
  stuck:
    terminal: true
  done:
    terminal: true
  bad:
    terminal: true
    outcome: failure
max_iterations: 3
"""


def test_a_terminal_reached_on_the_verdict_error_ends_the_simulation_as_the_run_would(
    loop_project: LoopProject,
) -> None:
    loop_project.write("stuck-demo", STUCK)
    result = loop_project.run("simulate", "stuck-demo", "--verdicts", "check=error")
    assert result.code == 7  # ExitCode.TERMINAL_FAILURE: what `ll-loop run` exits with
    assert result.out.splitlines()[-1] == (
        "Simulation ended in stuck, a failure: reached from state 'check' on the verdict error"
        " (1 iteration)"
    )
    fine = loop_project.run("simulate", "stuck-demo", "--verdicts", "check=failure", "--json")
    assert fine.code == 0
    assert json.loads(fine.out)["terminated_by"] == "terminal"


def test_an_outcome_failure_terminal_ends_the_simulation_as_a_failure(
    loop_project: LoopProject,
) -> None:
    loop_project.write("stuck-demo", STUCK.replace("on_failure: done", "on_failure: bad"))
    result = loop_project.run("simulate", "stuck-demo", "--verdicts", "check=failure", "--json")
    assert result.code == 7
    assert json.loads(result.out)["terminated_by"] == "terminal_failure"


SCENARIO_LOOP = """\
name: scenario
initial: build
states:
  build:
    action: make
    next: check
  check:
    action: make test
    on_success: done
    on_failure: fix
    on_error: broken
  fix:
    action: make fix
    on_success: check
    on_failure: check
  broken:
    terminal: true
    outcome: failure
  done:
    terminal: true
max_iterations: 5
"""


@pytest.mark.parametrize(
    ("scenario", "walk", "code"),
    [
        ("all-pass", ["build", "check", "done"], 0),
        ("first-fail", ["build", "check", "done"], 0),  # the first action is build's (next:)
        ("alternating", ["build", "check", "done"], 0),  # build fails, check passes
        ("all-error", ["build", "check", "broken"], 7),
        ("all-fail", ["build", "check", *["fix", "check"] * 3, "fix"], 3),
    ],
)
def test_scenario_gives_each_action_its_verdict_in_a_real_process(
    tmp_path: Path, scenario: str, walk: list[str], code: int
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "scenario.yaml").write_text(SCENARIO_LOOP.replace("5", "4"))
    result = ll_loop(tmp_path, "simulate", "scenario", "--scenario", scenario, "--json")
    assert result.stderr == ""
    assert [step["state"] for step in json.loads(result.stdout)["steps"]] == walk
    assert result.returncode == code


def test_scripted_verdicts_win_over_the_scenario(loop_project: LoopProject) -> None:
    loop_project.write("scenario", SCENARIO_LOOP)
    result = loop_project.run(
        "simulate", "scenario", "--scenario", "all-pass", "--verdicts", "check=failure"
    )
    assert "✗ failure (scripted)" in result.out
    assert "✓ success (scenario all-pass)" in result.out
    assert result.code == 0


def test_an_unknown_scenario_is_a_usage_error(loop_project: LoopProject) -> None:
    loop_project.write("scenario", SCENARIO_LOOP)
    result = loop_project.run("simulate", "scenario", "--scenario", "all-good")
    assert result.code == 2
    assert "invalid choice: 'all-good'" in result.err


def test_a_next_state_whose_action_fails_takes_its_error_route(tmp_path: Path) -> None:
    """As little-loops' simulate: the scenario fails build's action (exit 1), and a `next:`
    state with an error route goes there; without one it goes on."""
    (tmp_path / ".loops").mkdir()
    loop = SCENARIO_LOOP.replace("    next: check\n", "    next: check\n    on_error: broken\n")
    (tmp_path / ".loops" / "scenario.yaml").write_text(loop)
    walks = {}
    for scenario in ("first-fail", "all-pass"):
        result = ll_loop(tmp_path, "simulate", "scenario", "--scenario", scenario, "--json")
        walks[scenario] = [step["state"] for step in json.loads(result.stdout)["steps"]]
    assert walks == {"first-fail": ["build", "broken"], "all-pass": ["build", "check", "done"]}
