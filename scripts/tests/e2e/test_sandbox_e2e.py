"""The library's fix-tests loop run to `done` inside the bubblewrap sandbox (`--sandbox`) with the
real Claude Code and the real Codex CLI against their scripted APIs, exactly as outside."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks, normalise
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.fake_openai import FakeOpenAI
from support.programs import needs_bwrap

pytestmark = [
    pytest.mark.e2e,
    needs_bwrap,
]

BIN = Path(sys.executable).parent  # pytest of the test venv
CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    return {**env, "PATH": f"{os.environ['PATH']}{os.pathsep}{BIN}"}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in CALC.items():
        (root / name).write_text(text)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.ll_loop(
        root, "run", "library:fix-tests", "python -m pytest -q", *args, timeout=300, env=_env()
    )


def _steps(root: Path) -> list[dict[str, object]]:
    history = llproc.ll_loop(root, "history", "fix-tests", "--json", env=_env())
    return [e for e in json.loads(history.stdout) if e["event"] == "action_start"]


def _routes(root: Path) -> list[tuple[str, str]]:
    history = llproc.ll_loop(root, "history", "fix-tests", "--json", env=_env())
    return [(e["from"], e["to"]) for e in json.loads(history.stdout) if e["event"] == "route"]


def _sandboxed_to_done(root: Path, agent: str, result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "Loop completed: done" in result.stderr
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert _routes(root) == [("test", "fix"), ("fix", "test"), ("test", "done")]
    steps = _steps(root)
    assert [s["state"] for s in steps] == ["test", "fix", "test"]
    assert all(s["sandbox"] == {"backend": "bwrap", "network": True} for s in steps)
    assert steps[1].get("agent", "claude") == agent


@pytest.mark.usefixtures("claude_code_env")
def test_fix_tests_with_claude_code_inside_the_sandbox(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    root = _project(tmp_path)
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    path = root / "calc.py"
    agent.reply_tool({"file_path": str(path)}, name="Read")
    edit = {"file_path": str(path), "old_string": "a - b", "new_string": "a + b"}
    agent.reply_tool(edit, name="Edit")
    agent.reply_text("add() subtracted; it adds now.")
    result = _run(root, "--sandbox")
    _sandboxed_to_done(root, "claude", result)
    # What it printed is the sample docs/library.md shows for the run outside a sandbox.
    command = "$ ll-loop run library:fix-tests 'python -m pytest -q'\n"
    (block,) = [b for b in all_blocks() if b.starts("docs/library.md", command)]

    def same(text: str) -> str:
        return normalise(re.sub(r"\$\d+\.\d+", "$<COST>", text))

    assert same(block.text.split("\n", 1)[1]) == same(result.stderr)
    # Its session was written under the sandbox's own view of $HOME/.claude: the real one.
    assert list((Path(os.environ["HOME"]) / ".claude" / "projects").rglob("*.jsonl"))
    logs = llproc.ll_loop(root, "logs", "fix-tests", "fix", env=_env())
    assert [line.split(" ")[1] for line in logs.stdout.splitlines() if line.startswith("→ ")] == [
        "Read",
        "Edit",
    ]


def test_fix_tests_with_codex_inside_the_sandbox(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    root = _project(tmp_path)
    fake_openai.reply_shell("sed -i 's/a - b/a + b/' calc.py && cat calc.py")
    fake_openai.reply_text("add() subtracted; it adds now.")
    # A model whose price is known: the library loop's budget refuses an uncounted Codex.
    result = _run(root, "--sandbox", "--set", "agent=codex", "--model", "gpt-5-codex")
    _sandboxed_to_done(root, "codex", result)
    first, second = fake_openai.requests[:2]
    assert "assert -1 == 5" in first.user_texts[-1]  # the failing output reached Codex
    assert "return a + b" in second.function_outputs[0]  # its shell tool ran, inside
    sessions = Path(os.environ["CODEX_HOME"]) / "sessions"
    assert list(sessions.rglob("*.jsonl"))  # written through the sandbox to the real $CODEX_HOME


@pytest.mark.skipif(os.geteuid() != 0, reason="Claude Code refuses the flag only as root")
@pytest.mark.usefixtures("claude_code_env")
def test_as_root_claude_code_runs_in_the_sandbox_without_is_sandbox(
    fake_anthropic: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bubblewrap is a sandbox Claude Code is told of (CLAUDE_CODE_BUBBLEWRAP=1): as root it
    runs --dangerously-skip-permissions there, while outside the run is refused up front."""
    monkeypatch.delenv("IS_SANDBOX", raising=False)
    root = _project(tmp_path)
    refused = _run(root)
    assert refused.returncode == 2
    assert "as root" in refused.stderr
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    path = root / "calc.py"
    agent.reply_tool({"file_path": str(path)}, name="Read")
    edit = {"file_path": str(path), "old_string": "a - b", "new_string": "a + b"}
    agent.reply_tool(edit, name="Edit")
    agent.reply_text("add() subtracted; it adds now.")
    _sandboxed_to_done(root, "claude", _run(root, "--sandbox"))
