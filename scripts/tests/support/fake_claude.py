"""A fake `claude` on PATH for tests: a scripted JSON report, or a stream-json transcript."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

# The report `claude -p --output-format json` prints at the end of a session.
REPORT: dict[str, Any] = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "Fixed the bug",
    "total_cost_usd": 0.0125,
    "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 300},
}


def install_claude(root: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    """Write *script* as an executable `root/bin/claude`, first on PATH; its path."""
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / "claude"
    path.write_text(script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return path


def shell_claude(root: Path, monkeypatch: pytest.MonkeyPatch, body: str, shell: str = "sh") -> Path:
    """A `claude` on PATH that runs the shell *body* (`/bin/<shell>`) with claude's argv."""
    return install_claude(root, monkeypatch, f"#!/bin/{shell}\n{body}\n")


def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cost: float) -> Path:
    """A `claude` on PATH that prints the JSON shape of `--output-format json` and logs argv.

    Returns the log: one JSON list of arguments per call.
    """
    log = tmp_path / "claude-calls.jsonl"
    report = {**REPORT, "total_cost_usd": cost}
    install_claude(
        tmp_path,
        monkeypatch,
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"print(json.dumps({report!r}))\n",
    )
    return log


def stream_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """A `claude` on PATH whose shell *body* prints a stream-json transcript."""
    shell_claude(tmp_path, monkeypatch, body)


def json_line(data: dict[str, Any]) -> str:
    """A shell line that prints *data* as one JSON line."""
    return "echo '" + json.dumps(data) + "'\n"


def said(text: str, message_id: str = "m1", output_tokens: int = 10) -> str:
    """A shell line that prints one assistant message of a stream-json transcript."""
    usage = {"input_tokens": 100, "output_tokens": output_tokens}
    message = {"id": message_id, "content": [{"type": "text", "text": text}], "usage": usage}
    return json_line({"type": "assistant", "message": message})


# What the spending `claude` reports for each call: $0.04.
SPENT_PER_CALL = '{"type": "result", "result": "working on it", "total_cost_usd": 0.04}'


def spending_claude(root: Path, monkeypatch: pytest.MonkeyPatch, then: str = "") -> Path:
    """A `claude` on PATH that reports $0.04 a call (SPENT_PER_CALL), then runs shell *then*."""
    return shell_claude(root, monkeypatch, f"echo '{SPENT_PER_CALL}'{then}", shell="bash")


def spender_loop(budget: float | None = None) -> str:
    """Loop `spender`: calls Claude again and again, until a budget (its own *budget*, as
    `max_cost_usd`, or one from outside) ends it."""
    limit = "" if budget is None else f"max_cost_usd: {budget}\n"
    return f"""\
name: spender
{limit}initial: fix
states:
  fix:
    action: /fix it
    evaluate:
      type: exit_code
    on_success: fix
    on_failure: fix
  done:
    terminal: true
"""
