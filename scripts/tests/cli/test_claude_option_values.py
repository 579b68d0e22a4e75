"""`${...}` in a state's `claude:` options is filled in, so a parameter can pick the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import llproc
from support.fake_claude import fake_claude

from little_loops.fsm.facts.outcomes import ExitCode

LOOP = """\
name: pick
parameters:
  model: {type: string, default: claude-haiku-4-5}
claude:
  append_system_prompt: "Work on ${context.model}'s budget."
states:
  ask:
    action_type: prompt
    action: Say hello
    claude:
      model: ${context.model}
      tools: [Read, "${context.model}"]
    evaluate: {type: exit_code}
    next: done
  done:
    terminal: true
initial: ask
"""


def test_a_parameter_picks_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_claude(tmp_path, monkeypatch, 0.001)
    project = tmp_path / "project"
    (project / ".loops").mkdir(parents=True)
    (project / ".loops" / "pick.yaml").write_text(LOOP)
    result = llproc.console(project, "run", "pick", "claude-sonnet-4-5")
    assert result.returncode == ExitCode.OK, result.stderr
    (argv,) = [json.loads(line) for line in calls.read_text().splitlines()]
    assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert argv[argv.index("--append-system-prompt") + 1] == "Work on claude-sonnet-4-5's budget."
    assert argv[argv.index("--tools") + 1] == "Read,claude-sonnet-4-5"
    assert "${" not in " ".join(argv)
