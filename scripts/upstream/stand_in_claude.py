#!/usr/bin/env python3
"""A scripted stand-in `claude` for `scripts/dev upstream --run`: the same answer to the same call.

Put first on PATH for both tools' `ll-loop run`, it answers each `claude -p PROMPT` (or
the prompt on stdin) without a network: `--output-format json` gets Claude Code's result
report, `stream-json` an init, one assistant turn and that report, `text` the answer. With
`--json-schema S`, `structured_output` fills S's properties (a verdict enum takes "yes" when
it has one, else its first value). The answer names the prompt's digest, so a loop that
tests the output sees the same text in both runs. Each call is appended to
$STAND_IN_CLAUDE_LOG (one JSON line: the argv) when that is set.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

VERSION = "2.1.197 (Claude Code)"
MODEL = "claude-sonnet-4-5"


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _filled(schema: Any) -> Any:
    """A value of *schema*: enums take "yes" when they have it, else their first value."""
    if not isinstance(schema, dict):
        return "stand-in"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "yes" if "yes" in schema["enum"] else schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {key: _filled(value) for key, value in props.items()}
    return {"array": [], "number": 1.0, "integer": 1, "boolean": True}.get(str(kind), "stand-in")


def main(argv: list[str]) -> int:
    if "--version" in argv or "-v" in argv:
        print(VERSION)
        return 0
    log = os.environ.get("STAND_IN_CLAUDE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(argv) + "\n")
    prompt = _option(argv, "-p") or _option(argv, "--print")
    if prompt is None:
        prompt = "" if sys.stdin.isatty() else sys.stdin.read()
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:8]
    answer = f"Done (stand-in answer to prompt {digest})."
    schema_text = _option(argv, "--json-schema")
    report: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": answer,
        "session_id": f"stand-in-{digest}",
        "total_cost_usd": 0.0,
        "num_turns": 1,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    if schema_text is not None:
        try:
            structured = _filled(json.loads(schema_text))
        except ValueError:
            structured = {}
        report["structured_output"] = structured
        report["result"] = json.dumps(structured)
    form = _option(argv, "--output-format") or "text"
    if form == "json":
        print(json.dumps(report))
    elif form == "stream-json":
        init = {"type": "system", "subtype": "init", "session_id": report["session_id"]}
        print(json.dumps({**init, "model": MODEL, "tools": []}))
        turn = {
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": report["result"]}],
        }
        print(
            json.dumps({"type": "assistant", "message": turn, "session_id": report["session_id"]})
        )
        print(json.dumps(report))
    else:
        print(report["result"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
