"""The ralph paradigm with the real Claude Code CLI: the scripted model makes its promise in
the second pass while a gate still fails, the gate's output reaches the third prompt, and the
loop ends after the third pass with the gate passing."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

RALPH = """\
    paradigm: ralph
    name: ship
    prompt: Make the project ready to ship.
    promise: SHIPPED-4417
    gates:
      - 'test -f ready || { echo "missing: GATE-$((6*7))"; exit 1; }'
    max_iterations: 5
"""


def test_the_promise_counts_once_the_gate_passes(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".loops").mkdir(parents=True)
    (project / ".loops" / "ship.yaml").write_text(textwrap.dedent(RALPH))
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_text("I looked around; more to do.")  # pass 1: no promise
    agent.reply_text("All done.\nSHIPPED-4417")  # pass 2: a promise, but the gate fails
    # Pass 3: the model creates the file with Claude Code's Write tool, then promises.
    agent.reply_tool({"file_path": str(project / "ready"), "content": "yes\n"}, name="Write")
    agent.reply_text("Created ready.\nSHIPPED-4417")

    result = llproc.console(project, "run", "ship", "--json", timeout=180)

    assert result.returncode == 0, result.stderr
    assert (project / "ready").read_text() == "yes\n"
    prompts = [r for r in agent.requests if not r.tool_results]
    assert len(prompts) == 3  # one session per pass (the third also sent the tool result)
    assert "SHIPPED-4417" in prompts[0].user_text  # told how to signal completion
    assert "GATE-42" not in prompts[1].user_text
    assert "missing: GATE-42" in prompts[2].user_text  # the gate's output, fed back
    assert "gate_1 gave 'failure' (exit 1)" in prompts[2].user_text
    history = llproc.console(project, "history", "ship", "--json").stdout
    routes = [(e["from"], e["to"]) for e in json.loads(history) if e["event"] == "route"]
    assert routes == [
        ("work", "work"),
        ("work", "gate_1"),
        ("gate_1", "work"),
        ("work", "gate_1"),
        ("gate_1", "done"),
    ]
