"""`--dry-run`: the stall breakers, the judge line only with a judge, the agent CLIs needed."""

from __future__ import annotations

import pytest
from support.fake_claude import shell_claude
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

SHELL = """\
    name: shell
    initial: check
    stall:
      same_result: 3
      no_change_passes: 2
    states:
      check:
        action: pytest
        stall:
          max_visits: 5
          on_stall: done
        on_success: done
        on_failure: check
      done:
        terminal: true
"""
PROMPT = """\
    name: prompt
    initial: check
    states:
      check:
        action: pytest
        on_success: done
        on_failure: fix
      fix:
        action: Fix the failing test
        action_type: prompt
        next: check
      done:
        terminal: true
"""


def test_the_plan_shows_the_loops_and_each_states_stall_breakers(
    loop_project: LoopProject,
) -> None:
    loop_project.write("shell", SHELL)
    result = loop_project.run("run", "shell", "--dry-run")
    assert result.code == ExitCode.OK, result.err
    lines = result.out.splitlines()
    assert "stall: same_result 3, no_change_passes 2; no on_stall: the run ends" in lines
    at = lines.index("  check  [initial]")
    assert "    stall: max_visits 5; on_stall → done" in lines[at:]


def test_a_loop_with_no_judge_has_no_llm_line(loop_project: LoopProject) -> None:
    for name, text in (("shell", SHELL), ("prompt", PROMPT)):  # the prompt goes on by next:
        loop_project.write(name, text)
        result = loop_project.run("run", name, "--dry-run")
        assert result.code == ExitCode.OK, result.err
        assert not any(line.startswith("llm:") for line in result.out.splitlines()), name
    judged = PROMPT.replace("        next: check", "        on_success: check")
    loop_project.write("judged", judged)
    assert "\nllm: claude-haiku-4-5 (" in loop_project.run("run", "judged", "--dry-run").out


def test_the_plan_names_the_agent_cli_and_the_states_that_call_it(
    loop_project: LoopProject,
) -> None:
    loop_project.write("shell", SHELL)
    loop_project.write("prompt", PROMPT)
    assert "needs:" not in loop_project.run("run", "shell", "--dry-run").out
    assert "\nneeds: claude (fix)\n" in loop_project.run("run", "prompt", "--dry-run").out


def test_a_dry_run_says_what_would_stop_the_run_but_does_not_fail(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_project.write("prompt", PROMPT)
    empty = loop_project.root / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = loop_project.run("run", "prompt", "--dry-run")
    assert result.code == ExitCode.OK
    assert result.err == (
        "ll-loop: note: a run would stop before its first step: state 'fix' runs a Claude "
        "Code prompt, but claude is not on PATH; install Claude Code: npm install -g "
        "@anthropic-ai/claude-code\n"
    )
    shell_claude(loop_project.root, monkeypatch, "exit 0")
    result = loop_project.run("run", "prompt", "--dry-run")
    assert (result.code, result.err) == (ExitCode.OK, "")


AGENTS = """\
    name: chooser
    initial: fix
    parameters:
      agent: {type: string, default: mine}
    agent: ${context.agent}
    agents:
      mine: {command: ./agent}
    claude:
      model: claude-opus-4-5
    states:
      fix:
        action: Fix the failing test
        action_type: prompt
        next: review
      review:
        action: /review
        agent: [mine, claude]
        claude: {effort: high}
        next: done
      done:
        terminal: true
"""


def test_the_plan_shows_each_prompt_states_agents_and_their_options(
    loop_project: LoopProject,
) -> None:
    loop_project.write("chooser", AGENTS)
    result = loop_project.run("run", "chooser", "--dry-run")
    assert result.code == ExitCode.OK, result.err
    assert (
        "  fix  [initial]\n"
        "    action (prompt): Fix the failing test\n"
        "    agent: mine\n"
        "    routes: next → review\n"
    ) in result.out
    assert (
        "  review\n"
        "    action (prompt): /review\n"
        "    agent: mine, claude (fallback: the next when one is limited or not ready)\n"
        "    claude: model=claude-opus-4-5, effort=high\n"
    ) in result.out
    assert "needs: mine (fix, review)\nneeds: claude (review)\n" in result.out
    # The run's own value picks the agent.
    chosen = loop_project.run("run", "chooser", "claude", "--dry-run")
    assert "    agent: claude\n    claude: model=claude-opus-4-5\n" in chosen.out


def test_the_plan_shows_the_loop_metadata(loop_project: LoopProject) -> None:
    loop_project.write(
        "meta",
        "name: meta\ndescription: |\n  Checks the build.\n  More.\ncategory: gate\n"
        "labels: [ci]\nvisibility: example\nrequired_inputs: [input]\n"
        "commands:\n  - {cmd: ll-loop run meta x, comment: run it}\n"
        "initial: a\nstates:\n  a:\n    description: does a\n    action: 'echo ${context.input}'\n"
        "    next: done\n  done:\n    terminal: true\n",
    )
    plan = loop_project.run("run", "meta", "--dry-run")
    lines = plan.out.splitlines()
    assert lines[1:7] == [
        "about: Checks the build.",
        "category: gate",
        "labels: ci",
        "visibility: example",
        "required inputs: input",
        "command: ll-loop run meta x  # run it",
    ]
    assert "    about: does a" in lines


PULL_REQUEST = """\
name: ship
initial: open
states:
  open:
    pr:
      title: Fix the readme
      merge: squash
      interval: 20
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_the_plan_shows_what_a_pr_state_does_and_no_evaluator(
    loop_project: LoopProject,
) -> None:
    loop_project.write("ship", PULL_REQUEST)
    result = loop_project.run("run", "ship", "--dry-run")
    assert result.code == ExitCode.OK, result.err
    lines = result.out.splitlines()
    at = lines.index("  open  [initial]")
    assert lines[at + 1] == (
        "    pull request: push to origin and open or update one (gh): 'Fix the readme'; all "
        "checks must pass, looked at every 20.0s (x1.5, at most 5m 0s) for up to 2h 0m 0s; "
        "merged (squash) when green"
    )
    assert lines[at + 2] == "    routes: success → done, failure → done"
