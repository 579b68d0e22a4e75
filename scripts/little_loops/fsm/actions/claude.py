"""Read Claude Code's `--output-format stream-json` transcript: the answer, its cost and tokens.

Claude Code prints one JSON line per step (the session's start, each assistant message,
each tool result) and, last, a `result` line with the answer, `total_cost_usd` and `usage`.
Streaming rather than one report at the end is what lets `idle_timeout` see a session that
has stopped making progress, and lets a person follow it in the action's `.out` file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from little_loops.fsm.actions.agent_kind import exit_failed
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.transcript import failed_tools, json_object, tool_lines
from little_loops.fsm.facts.pricing import USAGE_KEYS, estimate_cost
from little_loops.fsm.facts.runfile import open_run_stream
from little_loops.fsm.facts.spend import reported_cost
from little_loops.fsm.values.value_checks import is_finite

# Flags added to every Claude Code action so its answer arrives with cost and usage
# (`-p` accepts stream-json only with --verbose).
CLAUDE_JSON_FLAGS: tuple[str, ...] = ("--output-format", "stream-json", "--verbose")

# What Claude Code answers, with exit 0 and no API call, to a slash command it has no file for.
UNKNOWN_COMMAND = "Unknown command:"
# What Claude Code 2.1.x prints on stderr (exit 1, no API call) for `--resume ID` of a session
# it has no file for (another machine, a cleaned-up ~/.claude): the action runs fresh instead.
NO_SESSION = "No conversation found with session ID"


def lost_session(result: ActionResult) -> bool:
    """True when Claude Code could not resume the session it was asked to (see NO_SESSION)."""
    return result.exit_code != 0 and (NO_SESSION in result.stderr or NO_SESSION in result.output)


def session_of(data: dict[str, Any]) -> str | None:
    """The `session_id` of a stream-json line or report, when it has a usable one."""
    value = data.get("session_id")
    return value if isinstance(value, str) and value.strip() else None


def parse_report(stdout: str) -> dict[str, Any] | None:
    """Claude Code's final report: the last `result` line of a stream-json transcript, or
    the one JSON object of `--output-format json`; None when stdout holds neither. Lines
    that are not JSON (a warning printed first, a tail cut mid-line) are passed over."""
    text = stdout.strip()
    whole = json_object(text)
    if whole is not None and whole.get("type") in (None, "result"):
        return whole
    for line in reversed(text.splitlines()):
        data = json_object(line.strip())
        if data is not None and data.get("type") == "result":
            return data
    return None


def report_from_file(path: str) -> dict[str, Any] | None:
    """The `result` line at the end of a transcript file: for an answer or a transcript
    longer than the runner keeps in memory. None when the last line is not a report."""
    try:
        with open_run_stream(path) as handle:
            end = handle.seek(0, os.SEEK_END)
            start = end
            # Find where the last non-empty line starts, reading backwards in blocks.
            while start > 0 and end - start <= _MAX_REPORT_LINE:
                step = min(_BLOCK, start)
                handle.seek(start - step)
                block = handle.read(step)
                if start == end:
                    block = block.rstrip(b"\r\n")
                    end = start - step + len(block)
                newline = block.rfind(b"\n")
                if newline >= 0:
                    start = start - step + newline + 1
                    break
                start -= step
            if end - start > _MAX_REPORT_LINE:
                return None
            handle.seek(start)
            line = handle.read(end - start)
    except OSError:
        return None
    data = json_object(line.decode("utf-8", errors="replace").strip())
    return data if data is not None and data.get("type") == "result" else None


# A report line longer than this is not read back from the file (it would not fit the
# memory a run is allowed); reading goes backwards in blocks of _BLOCK bytes.
_MAX_REPORT_LINE = 8 * 1024 * 1024  # a Claude answer is bounded by its output tokens: far less
_BLOCK = 1024 * 1024
# The most of a cut-short session's words kept as its output (characters, from the end).
_MAX_PARTIAL_TEXT = 4 * 1024 * 1024


def file_lines(path: str | None) -> Iterator[str]:
    """The lines of a transcript file, read in blocks (never the whole file at once); a
    line longer than a report may be is passed over. Nothing when it cannot be read."""
    if path is None:
        return
    try:
        with open_run_stream(path) as handle:
            pending = b""
            skipping = False
            while block := handle.read(_BLOCK):
                *complete, pending = (pending + block).split(b"\n")
                for raw in complete:
                    if not skipping:
                        yield raw.decode("utf-8", errors="replace")
                    skipping = False
                if len(pending) > _MAX_REPORT_LINE:
                    pending, skipping = b"", True
            if pending and not skipping:
                yield pending.decode("utf-8", errors="replace")
    except OSError:
        return


class PartialSession(NamedTuple):
    """What a stream-json session that never reported had said and used."""

    text: str
    usage: dict[str, int]
    model: str | None
    session_id: str | None = None


def partial_session(lines: Iterable[str]) -> PartialSession | None:
    """What a stream-json session that never reported (killed, crashed) had said: the text
    of its assistant messages, the tokens they used and their model, from its lines. None
    when they are not a stream."""
    texts: list[str] = []
    usage_by_message: dict[str, dict[str, int]] = {}
    model: str | None = None
    session_id: str | None = None
    seen_stream = False
    for number, line in enumerate(lines):
        data = json_object(line.strip())
        if data is None or not isinstance(data.get("type"), str):
            continue
        seen_stream = True
        session_id = session_id or session_of(data)
        message = data.get("message")
        if data["type"] != "assistant" or not isinstance(message, dict):
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        # One message comes as several lines (a line per content block), each with the
        # message's usage so far: the last line of a message id holds its count. A line
        # without an id is a message of its own.
        key = message.get("id")
        usage_by_message[str(key) if key else f"#{number}"] = usage_of(message)
        if isinstance(message.get("model"), str):
            model = message["model"]
    if not seen_stream:
        return None
    total: dict[str, int] = {}
    for usage in usage_by_message.values():
        for name, value in usage.items():
            total[name] = total.get(name, 0) + value
    return PartialSession("\n".join(texts), total, model, session_id)


# Tool inputs that say best what a tool call is doing, in order of preference.
_TOOL_SUBJECTS: tuple[str, ...] = ("command", "file_path", "path", "pattern", "url", "description")


def describe_step(line: str) -> str | None:
    """One line for a person about a stream-json line of Claude's: `Bash: pytest -q`,
    `Read: src/app.py`, or the first line of what it said; None for other lines."""
    data = json_object(line.strip())
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
    from little_loops.fsm.actions.transcript import latest_step as latest

    return latest(path, describe_step)


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


def model_costs(report: dict[str, Any]) -> dict[str, float]:
    """What each model of the session cost, from the report's `modelUsage` (`costUSD`)."""
    out: dict[str, float] = {}
    usage = report.get("modelUsage")
    for model, counts in (usage if isinstance(usage, dict) else {}).items():
        cost = counts.get("costUSD") if isinstance(counts, dict) else None
        if isinstance(cost, int | float) and not isinstance(cost, bool) and is_finite(cost):
            out[str(model)] = max(0.0, float(cost))
    return out


def apply_report(result: ActionResult) -> ActionResult:
    """Replace the raw JSON with Claude's answer and record its cost and tokens.

    Output that is not Claude Code's JSON report (an older CLI, a crash, a fake) is left
    as it is, so evaluation still sees what was printed. Claude Code failing (non-zero
    exit, `is_error`) or not knowing a slash command becomes `error`: judging such output
    with the LLM would be paid for nothing and would send the loop round again.
    """
    report = parse_report(result.output)
    if report is None and result.truncated and result.output_path:
        report = report_from_file(result.output_path)
    if report is None or "result" not in report and "total_cost_usd" not in report:
        partial, whole = None, not result.truncated
        if result.truncated and result.output_path:
            # The whole session counts, not just the tail the runner kept in memory.
            partial = partial_session(file_lines(result.output_path))
            whole = partial is not None
        if partial is None:  # all of it is in memory, or the file is gone: use memory
            partial = partial_session(result.output.splitlines())
        if partial is None:
            return _flag_failure(result, result.output)
        return _flag_failure(_without_report(result, partial, whole), partial.text)
    answer = report.get("result")
    cost = report.get("total_cost_usd")
    changes: dict[str, Any] = {
        "output": answer if isinstance(answer, str) else "",
        "usage": usage_of(report),
        # The answer is whole even when the transcript outgrew the runner's tail.
        "truncated": False,
        "session_id": session_of(report),
        "model_costs": model_costs(report) or None,
    }
    counted, implausible = reported_cost(cost)
    if implausible is not None:  # never counted: an error of the agent's output
        changes["error"] = f"claude {implausible}"
    elif counted is not None:
        changes["cost_usd"] = counted
    if report.get("is_error") is True and result.error is None:
        first = (answer if isinstance(answer, str) else "").strip().splitlines()
        changes["error"] = "claude reported an error: " + (first[0] if first else "no detail")
        if result.exit_code == 0:
            changes["exit_code"] = 1
    return _flag_failure(dataclasses.replace(result, **changes), changes["output"])


def with_tool_calls(result: ActionResult, transcript: str) -> ActionResult:
    """*result* with the tool calls of its session (transcript.tool_lines) and how many of
    them failed (transcript.failed_tools), read from its output file (all of it), else from
    the *transcript* it printed (the runner's tail)."""

    def lines() -> Iterable[str]:
        return file_lines(result.output_path) if result.output_path else transcript.splitlines()

    calls, failed = tool_lines(lines()), failed_tools(lines())
    return dataclasses.replace(result, tool_calls=calls or result.tool_calls, tools_failed=failed)


def _without_report(result: ActionResult, partial: PartialSession, whole: bool) -> ActionResult:
    """A session that ended without its report (a timeout, a stop, a crash): keep what
    Claude had said and the tokens it used, priced from its model where the price is known,
    so the budget sees them. One that exited 0 without a report did not finish properly.
    *whole* says the session was read in full (not only the runner's in-memory tail)."""
    text = partial.text
    changes: dict[str, Any] = {
        # As much of what Claude said as the runner would have kept of plain output.
        "output": text[-_MAX_PARTIAL_TEXT:],
        "usage": partial.usage,
        "truncated": len(text) > _MAX_PARTIAL_TEXT or not whole,
        "session_id": partial.session_id,
    }
    cost = estimate_cost(partial.model, partial.usage) if partial.model else None
    if cost:
        changes["cost_usd"] = cost
    if result.error is None and result.exit_code == 0:
        changes["exit_code"] = 1
        changes["error"] = "claude ended without its final report (the session did not finish)"
    return dataclasses.replace(result, **changes)


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
    lines = stripped.splitlines() or result.stderr.strip().splitlines()
    return exit_failed(result, "claude", lines[0] if lines else None)
