"""`mcp_tool` states run by the real `ll-loop` against a fake `mcp-call` on PATH: its exit
status and its envelope both count, and an answer it cannot read takes the state's routes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode

LOOP = """\
    name: tool
    initial: call
    states:
      call:
        action_type: mcp_tool
        action: shop/find
        params: {q: apple}
        route:
          success: good
          tool_error: bad
          not_found: bad
          timeout: bad
          error: broken
      good:
        terminal: true
      bad:
        terminal: true
      broken:
        terminal: true
"""

DEEP = "import sys; sys.stdout.write('[' * 200000 + ']' * 200000)"


@pytest.mark.parametrize(
    ("script", "verdict", "ends"),
    [
        ('echo \'{"content": [], "isError": false}\'', "success", "good"),
        ('echo \'{"content": [], "isError": false}\'; kill -SEGV $$', "error", "broken"),
        ('echo \'{"content": [], "isError": false}\'; exit 1', "tool_error", "bad"),
        ("echo '{\"content\": []}'; exit 3", "tool_error", "bad"),
        (f'python3 -c "{DEEP}"', "tool_error", "bad"),
        ("echo '{\"isError\": NaN}'", "tool_error", "bad"),
        ("echo '{\"isError\": null}'", "tool_error", "bad"),
        ("echo '[1]'", "tool_error", "bad"),
    ],
    ids=["ok", "sigsegv", "exit-1", "exit-3", "deep-json", "nan", "null", "not-an-object"],
)
def test_the_verdict_follows_the_exit_status_and_the_envelope(
    tmp_path: Path, script: str, verdict: str, ends: str
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "tool.yaml").write_text(textwrap.dedent(LOOP))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mcp-call"
    fake.write_text(f"#!/bin/bash\n{script}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = llproc.ll_loop(tmp_path, "run", "tool", env=env, timeout=60)
    assert "Traceback" not in done.stderr
    assert "internal error" not in done.stderr
    state = llproc.state(tmp_path, "tool")
    assert state["current_state"] == ends, done.stderr
    judged = [e for e in llproc.events(tmp_path, "tool") if e.get("event") == "evaluate"]
    assert [e.get("verdict") for e in judged] == [verdict]
    # a terminal reached on `error` ends the run as a failure
    assert done.returncode == (ExitCode.TERMINAL_FAILURE if verdict == "error" else ExitCode.OK)
