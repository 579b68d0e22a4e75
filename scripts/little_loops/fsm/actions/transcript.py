"""Claude Code's stream-json transcript as text a person reads: words, tool calls, answer."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from little_loops.fsm.facts.runfile import open_run_stream
from little_loops.fsm.facts.spend import format_cost

# How much of the end of an agent's output file `latest_step` reads: a step's line is rarely
# longer.
STEP_WINDOW = 256 * 1024
RESULT_WIDTH = 100  # a tool result is shown as its first line, cut to this many characters
# What `tool_lines` keeps of a session: its first this many lines, each cut to this width.
MAX_TOOL_LINES = 200
TOOL_LINE_WIDTH = 500


def readable(line: str) -> list[str]:
    """The lines a person reads for one line of a Claude session's `.out` file.

    Assistant text as it is, each tool call as `→ Tool {input as JSON}` on one line, each
    tool result as `← its first line … (+N lines)`, the final answer after `answer:` and
    the session's cost. A line that is not stream-json (plain output) is kept as it is;
    stream-json lines that say nothing to a person (hooks, rate limits) give no lines.
    """
    stripped = line.strip()
    data = json_object(stripped)
    if data is None or not isinstance(data.get("type"), str):
        return [line.rstrip("\r\n")] if stripped else []
    kind = data["type"]
    given = data.get("message")
    message: dict[str, Any] = given if isinstance(given, dict) else {}
    if kind == "system" and data.get("subtype") == "init":
        return [f"· session started (model {data.get('model') or '?'})"]
    if kind == "assistant":
        return [text for block in _blocks(message) for text in _assistant_block(block)]
    if kind == "user":
        return [text for block in _blocks(message) for text in _tool_result(block)]
    if kind == "result":
        return _report(data)
    return []


def tool_lines(lines: Iterable[str]) -> list[str]:
    """The tool calls of a Claude session's transcript *lines* and their results, as
    `readable` shows them (`→ Bash {...}`, `← ...`): the first MAX_TOOL_LINES, each cut to
    TOOL_LINE_WIDTH characters, then a line saying how many more there were."""
    kept: list[str] = []
    more = 0
    for line in lines:
        data = json_object(line.strip())
        if data is None or data.get("type") not in ("assistant", "user"):
            continue
        given = data.get("message")
        blocks = _blocks(given) if isinstance(given, dict) else []
        for block in blocks:
            if block.get("type") == "tool_use":
                found = _assistant_block(block)
            else:
                found = _tool_result(block)
            for text in found:
                if len(kept) < MAX_TOOL_LINES:
                    cut = len(text) > TOOL_LINE_WIDTH
                    kept.append(text[: TOOL_LINE_WIDTH - 1] + "…" if cut else text)
                else:
                    more += 1
    if more:
        kept.append(f"(and {more} more lines)")
    return kept


def failed_tools(lines: Iterable[str]) -> int:
    """How many of a Claude session's tool calls failed: the `tool_result` blocks of its
    transcript *lines* that Claude Code marked `is_error` (a command's non-zero exit, a
    refused or broken call)."""
    count = 0
    for line in lines:
        data = json_object(line.strip())
        given = data.get("message") if data is not None and data.get("type") == "user" else None
        blocks = _blocks(given) if isinstance(given, dict) else []
        count += sum(b.get("type") == "tool_result" and b.get("is_error") is True for b in blocks)
    return count


def _assistant_block(block: dict[str, Any]) -> list[str]:
    if block.get("type") == "text":
        return str(block.get("text") or "").strip().splitlines()
    if block.get("type") == "tool_use":
        given = json.dumps(block.get("input", {}), ensure_ascii=False, separators=(", ", ": "))
        return [f"→ {block.get('name') or 'tool'} {given}"]
    return []


def _tool_result(block: dict[str, Any]) -> list[str]:
    if block.get("type") != "tool_result":
        return []
    content = block.get("content")
    if isinstance(content, list):
        parts = [str(p.get("text") or "") for p in content if isinstance(p, dict)]
        content = "\n".join(parts)
    lines = [text for text in str(content or "").splitlines() if text.strip()]
    first = lines[0].strip() if lines else "(no output)"
    if len(first) > RESULT_WIDTH:
        first = first[: RESULT_WIDTH - 1] + "…"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    mark = "← error: " if block.get("is_error") is True else "← "
    return [f"{mark}{first}{more}"]


def _report(data: dict[str, Any]) -> list[str]:
    answer = data.get("result")
    lines = ["answer:", *str(answer).splitlines()] if isinstance(answer, str) else []
    cost = data.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        turns = data.get("num_turns")
        lines.append(f"cost: {format_cost(cost)}" + (f" ({turns} turns)" if turns else ""))
    if data.get("is_error") is True:
        lines.append("(claude reported an error)")
    return lines


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def json_object(text: str) -> dict[str, Any] | None:
    """*text* parsed as a JSON object, or None (not JSON, not an object, nested too deep)."""
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def latest_step(path: str, describe: Callable[[str], str | None]) -> str | None:
    """What the agent streaming into *path* did last: the last line of the file's end that
    *describe* (its kind's reader of one output line) makes something of; None when the
    file is missing or shows no step yet. For every agent's live progress line."""
    try:
        with open_run_stream(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - STEP_WINDOW))
            tail = handle.read(STEP_WINDOW)
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        step = describe(raw.decode("utf-8", errors="replace"))
        if step is not None:
            return step
    return None
