"""Read Claude Code's `--output-format stream-json` transcript: the answer, its cost and tokens.

Claude Code prints one JSON line per step (the session's start, each assistant message,
each tool result) and, last, a `result` line with the answer, `total_cost_usd` and `usage`.
Streaming rather than one report at the end is what lets `idle_timeout` see a session that
has stopped making progress, and lets a person follow it in the action's `.out` file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from little_loops.fsm.runners import ActionResult

# Flags added to every Claude Code action so its answer arrives with cost and usage
# (`-p` accepts stream-json only with --verbose).
CLAUDE_JSON_FLAGS: tuple[str, ...] = ("--output-format", "stream-json", "--verbose")

# What Claude Code answers, with exit 0 and no API call, to a slash command it has no file for.
UNKNOWN_COMMAND = "Unknown command:"

# Token counters taken from Claude Code's `usage` and summed into the loop's spend.
USAGE_KEYS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def parse_report(stdout: str) -> dict[str, Any] | None:
    """Claude Code's final report: the last `result` line of a stream-json transcript, or
    the one JSON object of `--output-format json`; None when stdout holds neither."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    whole = _json_object(text)
    if whole is not None and whole.get("type") in (None, "result"):
        return whole
    for line in reversed(text.splitlines()):
        data = _json_object(line.strip())
        if data is not None and data.get("type") == "result":
            return data
    return None


def partial_session(stdout: str) -> tuple[str, dict[str, int]] | None:
    """What a stream-json session that never reported (killed, crashed) had said: the text
    of its assistant messages and the tokens they used. None when stdout is not a stream."""
    texts: list[str] = []
    usage_by_message: dict[str, dict[str, int]] = {}
    seen_stream = False
    for line in stdout.splitlines():
        data = _json_object(line.strip())
        if data is None or not isinstance(data.get("type"), str):
            continue
        seen_stream = True
        message = data.get("message")
        if data["type"] != "assistant" or not isinstance(message, dict):
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        # One message comes as several lines (a line per content block), each with the
        # message's usage so far: the last line of a message id holds its count.
        usage_by_message[str(message.get("id"))] = usage_of(message)
    if not seen_stream:
        return None
    total: dict[str, int] = {}
    for usage in usage_by_message.values():
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return "\n".join(texts), total


# Tool inputs that say best what a tool call is doing, in order of preference.
_TOOL_SUBJECTS: tuple[str, ...] = ("command", "file_path", "path", "pattern", "url", "description")
# How much of the end of a transcript `latest_step` reads: a step's line is rarely longer.
_STEP_WINDOW = 256 * 1024


def describe_step(line: str) -> str | None:
    """One line for a person about a stream-json line of Claude's: `Bash: pytest -q`,
    `Read: src/app.py`, or the first line of what it said; None for other lines."""
    data = _json_object(line.strip())
    message = data.get("message") if data is not None else None
    if data is None or data.get("type") != "assistant" or not isinstance(message, dict):
        return None
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    for block in reversed(blocks):
        if block.get("type") == "tool_use":
            name = str(block.get("name") or "tool")
            given = block.get("input")
            inputs = given if isinstance(given, dict) else {}
            subject = next(
                (str(inputs[k]) for k in _TOOL_SUBJECTS if isinstance(inputs.get(k), str)), ""
            )
            return f"{name}: {' '.join(subject.split())}" if subject.strip() else name
        if block.get("type") == "text":
            words = str(block.get("text") or "").strip().splitlines()
            if words:
                return words[0].strip()
    return None


def latest_step(path: str) -> str | None:
    """What the Claude session streaming into *path* did last (see `describe_step`), read
    from the end of the file; None when the file is missing or shows no step yet."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _STEP_WINDOW))
            tail = handle.read(_STEP_WINDOW)
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        step = describe_step(raw.decode("utf-8", errors="replace"))
        if step is not None:
            return step
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def usage_of(report: dict[str, Any]) -> dict[str, int]:
    """The integer token counters of a report's `usage`."""
    usage = report.get("usage")
    if not isinstance(usage, dict):
        return {}
    return {
        key: int(usage[key])
        for key in USAGE_KEYS
        if isinstance(usage.get(key), int | float) and not isinstance(usage.get(key), bool)
    }


def apply_report(result: ActionResult) -> ActionResult:
    """Replace the raw JSON with Claude's answer and record its cost and tokens.

    Output that is not Claude Code's JSON report (an older CLI, a crash, a fake) is left
    as it is, so evaluation still sees what was printed. Claude Code failing (non-zero
    exit, `is_error`) or not knowing a slash command becomes `error`: judging such output
    with the LLM would be paid for nothing and would send the loop round again.
    """
    report = parse_report(result.output)
    if report is None or "result" not in report and "total_cost_usd" not in report:
        partial = partial_session(result.output)
        if partial is None:
            return _flag_failure(result, result.output)
        # No report (a timeout, a stop, a crash): keep what Claude had said and used.
        text, usage = partial
        return _flag_failure(dataclasses.replace(result, output=text, usage=usage), text)
    answer = report.get("result")
    cost = report.get("total_cost_usd")
    changes: dict[str, Any] = {
        "output": answer if isinstance(answer, str) else "",
        "usage": usage_of(report),
        # The answer is whole even when the transcript outgrew the runner's tail.
        "truncated": False,
    }
    if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost):
        changes["cost_usd"] = max(0.0, float(cost))
    if report.get("is_error") is True and result.error is None:
        first = (answer if isinstance(answer, str) else "").strip().splitlines()
        changes["error"] = "claude reported an error: " + (first[0] if first else "no detail")
        if result.exit_code == 0:
            changes["exit_code"] = 1
    return _flag_failure(dataclasses.replace(result, **changes), changes["output"])


def _flag_failure(result: ActionResult, text: str) -> ActionResult:
    """Set `error` when Claude Code failed or did not know the slash command."""
    if result.error is not None:
        return result
    stripped = text.strip()
    if stripped.startswith(UNKNOWN_COMMAND) and "\n" not in stripped:
        command = stripped.removeprefix(UNKNOWN_COMMAND).strip()
        message = (
            f"claude does not know the slash command {command} (is there a "
            f".claude/commands file for it in the loop's project?)"
        )
        return dataclasses.replace(result, error=message)
    if result.exit_code != 0:
        lines = stripped.splitlines() or result.stderr.strip().splitlines()
        detail = lines[0] if lines else "no output"
        return dataclasses.replace(
            result, error=f"claude exited with status {result.exit_code}: {detail}"
        )
    return result
