"""docs/agents/README.md and claude.md: the install column is each agent's own hint, and the
preflight line is what `ll-loop run` prints when an agent's program is missing."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from support.doc_blocks import Block, all_blocks
from support.llproc import ll_loop
from support.paths import REPO

from little_loops.fsm.actions.registry import AGENTS

INDEX = "docs/agents/README.md"


def _block(doc: str, prefix: str) -> Block:
    return next(b for b in all_blocks() if b.doc == doc and b.text.startswith(prefix))


def _install_column() -> dict[str, str]:
    rows = {}
    for line in (REPO / INDEX).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = re.match(r"`(\w+)`", cells[0]) if len(cells) == 7 else None
        if found is not None:
            rows[found.group(1)] = cells[2].strip("`")
    return rows


def test_the_table_lists_every_agent_with_the_install_command_its_kind_gives() -> None:
    rows = _install_column()
    assert set(rows) == set(AGENTS)
    for name, spec in AGENTS.items():
        assert spec.install_hint.endswith(": " + rows[name]), name


def test_claude_page_installs_as_the_claude_kind_says() -> None:
    install = _block("docs/agents/claude.md", "npm install -g").text.splitlines()[0]
    assert AGENTS["claude"].install_hint.endswith(": " + install.split("#")[0].strip())


def test_the_preflight_line_is_what_a_run_prints(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fix.yaml").write_text(
        "name: fix\ninitial: fix\nagent: codex\nstates:\n"
        "  fix:\n    action: Fix it\n    action_type: prompt\n    evaluate: {type: exit_code}\n"
        "    next: done\n  done:\n    terminal: true\n"
    )
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("bash", "git"):  # what a run needs besides the agent; no codex here
        found = shutil.which(tool)
        assert found is not None
        (bare / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bare)}
    run = ll_loop(tmp_path, "run", "fix", env=env)
    assert run.returncode == 2
    assert run.stderr.strip() == _block(INDEX, "ll-loop: error: state 'fix'").text.strip()
    assert not (tmp_path / ".loops" / ".running").exists() or not any(
        (tmp_path / ".loops" / ".running").rglob("*.jsonl")
    )
