"""docs/agents/custom.md's worked example, run for real: its script, its loop, its output."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.doc_blocks import Block, all_blocks
from support.llproc import ll_loop

DOC = "docs/agents/custom.md"
BLOCKS = [block for block in all_blocks() if block.doc == DOC]


def _block(prefix: str) -> Block:
    return next(block for block in BLOCKS if block.text.startswith(prefix))


def _timeless(text: str) -> str:
    """*text* with its durations (`25ms`, `1.2s`) taken out: they differ from run to run."""
    return re.sub(r"\b[0-9.]+m?s\b", "T", text)


def test_the_worked_example_runs_as_the_page_shows(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / "tools").mkdir()
    agent = tmp_path / "tools" / "my-agent"
    agent.write_text(_block("#!/bin/bash\n# tools/my-agent").text)
    agent.chmod(0o755)
    (tmp_path / ".loops" / "fix-calc.yaml").write_text(_block("name: fix-calc").text)
    (tmp_path / "calc.txt").write_text("return a - b\n")
    session = _block("$ ll-loop run fix-calc").text
    run = ll_loop(tmp_path, "run", "fix-calc", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    shown = session.split("\n", 1)[1]
    assert _timeless(run.stdout + run.stderr) == _timeless(shown)
    assert (tmp_path / "calc.txt").read_text() == "return a + b\n"
    status = ll_loop(tmp_path, "status", "fix-calc", "--json")
    assert json.loads(status.stdout)["cost_usd"] == 0.02


def test_the_declaration_example_is_a_valid_project_agents_file(tmp_path: Path) -> None:
    """The `agents:` block, as `.loops/agents.yaml`, gives a loop of the project its agent."""
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "agents.yaml").write_text(_block("agents:\n  mine:").text)
    loop = _block("name: fix-calc").text
    loop = loop[: loop.index("agents:")] + loop[loop.index("states:") :]  # the agent: mine stays
    (tmp_path / ".loops" / "fix-calc.yaml").write_text(loop)
    run = ll_loop(tmp_path, "validate", "fix-calc")
    assert (run.returncode, run.stdout) == (0, ".loops/fix-calc.yaml: ok\n"), run.stderr
