"""Read Gemini CLI's `--output-format stream-json` lines: the answer, tokens, cost, tool calls.

Gemini CLI (0.61) prints one JSON object a line: `init` (session_id, model), `message`
(role user: the prompt; role assistant: a piece of the answer, `delta: true`), `tool_use`
(tool_name, tool_id, parameters), `tool_result` (tool_id, status success|error, output,
error), `error` (severity, message) and last `result` (status success|error, error, stats:
input_tokens, output_tokens, cached, input, total_tokens, tool_calls, models by name). It
reports tokens but no cost: each model's tokens are priced by facts.pricing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.actions.transcript import (
    MAX_TOOL_LINES,
    RESULT_WIDTH,
    TOOL_LINE_WIDTH,
    json_object,
)
from little_loops.fsm.facts.pricing import estimate_cost
from little_loops.fsm.facts.spend import implausible_tokens


def usage_of(stats: Mapping[str, Any]) -> dict[str, int]:
    """The USAGE_KEYS counters of a `stats` block (the session's or one model's).

    `input_tokens` there is the whole prompt, of which `cached` came from the cache and
    `input` did not; `output_tokens` counts the answer without thinking, which the total
    holds (total = prompt + answer + thoughts), so the output is total - prompt.
    """

    def count(key: str) -> int:
        value = stats.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return int(value) if value != float("inf") else 0  # refused by failure()
        return 0

    prompt, cached, total = count("input_tokens"), count("cached"), count("total_tokens")
    fresh = count("input") if "input" in stats else max(0, prompt - cached)
    output = max(count("output_tokens"), total - prompt)
    usage = {"input_tokens": fresh, "output_tokens": output}
    if cached:
        usage["cache_read_input_tokens"] = cached
    return usage


@dataclass
class Session:
    """What a stream-json transcript said: see `read_session`."""

    session_id: str | None = None
    model: str | None = None
    pieces: list[str] = field(default_factory=list)  # the answer, a piece per turn
    tools: list[str] = field(default_factory=list)  # tool calls and results, readable
    more_tools: int = 0  # tool lines past MAX_TOOL_LINES
    errors: list[str] = field(default_factory=list)  # `error` events
    # The ids of this run's tool calls, and of those whose result says they failed.
    tool_ids: set[str] = field(default_factory=set)
    failed_ids: set[str] = field(default_factory=set)
    report: dict[str, Any] | None = None  # the `result` line
    seen: bool = False  # any stream-json line at all
    _open: bool = False  # the last piece takes more deltas

    @property
    def answer(self) -> str:
        return "\n".join(piece.strip() for piece in self.pieces if piece.strip())

    def stats(self) -> dict[str, Any]:
        given = self.report.get("stats") if self.report else None
        return given if isinstance(given, dict) else {}

    def usage(self) -> dict[str, int]:
        return usage_of(self.stats())

    def model_costs(self) -> dict[str, float]:
        """Dollars per model of the session, for the models whose price is known."""
        models = self.stats().get("models")
        out: dict[str, float] = {}
        for name, stats in (models if isinstance(models, dict) else {}).items():
            if isinstance(stats, dict):
                cost = estimate_cost(str(name), usage_of(stats))
                if cost is not None:
                    out[str(name)] = cost
        return out

    def cost(self) -> float | None:
        """The session's dollars, or None when a model it used has no known price."""
        models = self.stats().get("models")
        costs = self.model_costs()
        if isinstance(models, dict) and models and len(costs) == len(models):
            return sum(costs.values())
        if not models and self.model:
            return estimate_cost(self.model, self.usage())
        return None

    def failure(self) -> str | None:
        """What the CLI said went wrong (the report's error, else an `error` event), or
        token counts outside any plausible range, an error of its output."""
        implausible = implausible_tokens(self.stats())
        if implausible is not None:
            return f"it {implausible}"
        error = self.report.get("error") if self.report else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str):
            return message
        if self.report and self.report.get("status") == "error":
            return self.errors[-1] if self.errors else "no detail"
        return None

    def add(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        self.seen = True
        if kind == "init":
            self.session_id = _text(data.get("session_id")) or self.session_id
            self.model = _text(data.get("model")) or self.model
        elif kind == "message" and data.get("role") == "assistant":
            text = str(data.get("content") or "")
            if self._open and data.get("delta") is True:
                self.pieces[-1] += text
            else:
                self.pieces.append(text)
            self._open = data.get("delta") is True
        elif kind in ("tool_use", "tool_result"):
            self._open = False
            if isinstance(data.get("tool_id"), str):
                self.tool_ids.add(data["tool_id"])
            if kind == "tool_result" and failed_call(data):
                self.failed_ids.add(str(data.get("tool_id") or f"#{len(self.failed_ids)}"))
            for line in readable_event(data):
                if len(self.tools) < MAX_TOOL_LINES:
                    cut = len(line) > TOOL_LINE_WIDTH
                    self.tools.append(line[: TOOL_LINE_WIDTH - 1] + "…" if cut else line)
                else:
                    self.more_tools += 1
        elif kind == "error":
            self.errors.append(str(data.get("message") or ""))
        elif kind == "result":
            self.report = data


def read_session(lines: Iterable[str]) -> Session:
    """The session the stream-json *lines* tell of (lines that are not JSON are passed over)."""
    session = Session()
    for line in lines:
        data = json_object(line.strip())
        if data is not None and isinstance(data.get("type"), str):
            session.add(data)
    return session


def readable_event(data: Mapping[str, Any]) -> list[str]:
    """The lines a person reads for one stream-json object."""
    kind = data.get("type")
    if kind == "init":
        return [f"· session started (model {data.get('model') or '?'})"]
    if kind == "message" and data.get("role") == "assistant":
        return [line for line in str(data.get("content") or "").splitlines() if line.strip()]
    if kind == "tool_use":
        given = json.dumps(data.get("parameters", {}), ensure_ascii=False, separators=(", ", ": "))
        return [f"→ {data.get('tool_name') or 'tool'} {given}"]
    if kind == "tool_result":
        return [_tool_result(data)]
    if kind == "error":
        return [f"! {data.get('message') or 'error'}"]
    if kind == "result":
        return _report(data)
    return []


def readable(line: str) -> list[str]:
    """One line of a Gemini session's `.out` file as the lines a person reads; a line that
    is not stream-json (plain output) is kept as it is."""
    stripped = line.strip()
    data = json_object(stripped)
    if data is None or not isinstance(data.get("type"), str):
        return [line.rstrip("\r\n")] if stripped else []
    return readable_event(data)


def describe_step(line: str) -> str | None:
    """One line about a stream-json line: `run_shell_command: pytest -q`, or the first line
    of what the model said; None for other lines."""
    data = json_object(line.strip())
    if data is None:
        return None
    if data.get("type") == "tool_use":
        name = str(data.get("tool_name") or "tool")
        given = data.get("parameters")
        params = given if isinstance(given, dict) else {}
        keys = ("command", "file_path", "absolute_path", "path", "pattern", "url", "dir_path")
        subject = next((str(params[k]) for k in keys if isinstance(params.get(k), str)), "")
        return f"{name}: {' '.join(subject.split())}" if subject.strip() else name
    if data.get("type") == "message" and data.get("role") == "assistant":
        words = str(data.get("content") or "").strip().splitlines()
        return words[0].strip() if words else None
    return None


def latest_step(path: str) -> str | None:
    """What the Gemini session streaming into *path* did last, from the end of the file."""
    from little_loops.fsm.actions.transcript import latest_step as latest

    return latest(path, describe_step)


# How Gemini CLI 0.61's shell tool reports, as the whole output of a `"status": "success"`
# tool result, a command that printed nothing and failed. (One that printed something is
# shown by its output alone: stream-json does not say it failed.)
_SHELL_FAILED = re.compile(
    r"Command exited with code: -?[1-9]\d*|Command terminated by signal: .+|Command failed: .+"
)


def failed_call(data: Mapping[str, Any]) -> bool:
    """True when a `tool_result` says the tool call failed: its status is `error`, or the
    shell tool's command failed silently (`Command exited with code: 3`)."""
    if data.get("status") == "error":
        return True
    output = data.get("output")
    return isinstance(output, str) and _SHELL_FAILED.fullmatch(output.strip()) is not None


def _tool_result(data: Mapping[str, Any]) -> str:
    error = data.get("error")
    if data.get("status") == "error":
        message = error.get("message") if isinstance(error, dict) else None
        first = (str(message or "failed").strip().splitlines() or ["failed"])[0]
        return f"← error: {_cut(first)}"
    lines = [text for text in str(data.get("output") or "").splitlines() if text.strip()]
    first = _cut(lines[0].strip()) if lines else "(no output)"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return f"← {first}{more}"


def _report(data: Mapping[str, Any]) -> list[str]:
    stats = data.get("stats")
    lines = []
    if isinstance(stats, dict):
        usage = usage_of(stats)
        cached = usage.get("cache_read_input_tokens", 0)
        lines.append(
            f"tokens: {usage['input_tokens']} in"
            + (f" (+{cached} cached)" if cached else "")
            + f", {usage['output_tokens']} out"
        )
    error = data.get("error")
    if data.get("status") == "error":
        message = error.get("message") if isinstance(error, dict) else None
        first = (str(message or "no detail").strip().splitlines() or ["no detail"])[0]
        lines.append(f"(gemini reported an error: {first})")
    return lines


def _cut(text: str) -> str:
    return text[: RESULT_WIDTH - 1] + "…" if len(text) > RESULT_WIDTH else text


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
