"""`--dry-run` shows each Claude state's options and session, and the judge's backend."""

from __future__ import annotations

import pytest
from support.project import LoopProject

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.writer import dump_fsm_yaml

LOOP = """\
    name: plan
    initial: fix
    claude:
      model: claude-sonnet-4-5
      tools: [Read, Edit]
    llm:
      backend: {backend}
    states:
      fix:
        action: Fix it
        action_type: prompt
        session: continue
        session_key: fixer
        claude:
          effort: high
          tools: null
        next: check
      check:
        action: pytest
        evaluate:
          type: llm_structured
        on_success: done
        on_failure: fix
      done:
        terminal: true
"""


@pytest.mark.parametrize(
    ("backend", "key", "line"),
    [
        ("auto", None, "judge backend claude, auto: no ANTHROPIC_API_KEY, Claude Code's login"),
        ("auto", "sk-test", "judge backend api, auto: an API key is set"),
        ("claude", "sk-test", "judge backend claude, llm.backend"),
        ("api", None, "judge backend api, llm.backend"),
    ],
)
def test_the_plan_names_the_judge_backend(
    loop_project: LoopProject,
    monkeypatch: pytest.MonkeyPatch,
    backend: str,
    key: str | None,
    line: str,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    if key is not None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    loop_project.write("plan", LOOP.format(backend=backend))
    result = loop_project.run("run", "plan", "--dry-run")
    assert result.code == 0, result.err
    assert f"llm: claude-haiku-4-5 ({line})\n" in result.out


def test_the_plan_shows_the_claude_options_a_state_runs_with(loop_project: LoopProject) -> None:
    loop_project.write("plan", LOOP.format(backend="api"))
    result = loop_project.run("run", "plan", "--dry-run", "--model", "claude-opus-4-5")
    assert (
        "  fix  [initial]\n"
        "    action (prompt): Fix it\n"
        "    agent: claude\n"
        "    claude: model=claude-opus-4-5, effort=high\n"
        "    session: continue (fixer)\n"
        "    routes: next → check\n"
    ) in result.out
    assert "  check\n    action (shell): pytest\n    evaluate:" in result.out


def test_the_options_survive_writing_the_loop_back() -> None:
    fsm = FSMLoop.from_dict(load_text(LOOP.format(backend="claude"), "plan.yaml").data)
    again = FSMLoop.from_dict(load_text(dump_fsm_yaml(fsm), "again.yaml").data)
    assert again == fsm
    assert again.states["fix"].claude == {"effort": "high", "tools": None}
    assert (again.claude, again.llm.backend) == (
        {"model": "claude-sonnet-4-5", "tools": ["Read", "Edit"]},
        "claude",
    )


CODEX_STATES = """\
    name: plan
    initial: fix
    agent: codex
    states:
      fix:
        action: Fix it
        action_type: prompt
        on_success: check
        on_failure: fix
      check:
        action: pytest
        evaluate:
          type: llm_structured
        on_success: done
        on_failure: fix
      done:
        terminal: true
"""


def test_with_auto_and_no_key_each_state_is_judged_through_its_own_agent(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    loop_project.write("plan", CODEX_STATES)
    result = loop_project.run("run", "plan", "--dry-run")
    assert result.code == 0, result.err
    # fix (on Codex) is judged through Codex; check (a shell command) through Claude Code.
    assert (
        "llm: claude-haiku-4-5 (judge backend claude, codex, auto: no ANTHROPIC_API_KEY, "
        "each state's own agent when it can judge)\n"
    ) in result.out
