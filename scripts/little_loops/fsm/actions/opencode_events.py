"""Read opencode's `run --format json` events: its answer, tokens, cost, tool calls, errors.

opencode (1.18) prints one JSON object a line, each with `type`, `timestamp`, `sessionID`:
`step_start`; `text` (`part.text`, `part.messageID`); `reasoning` (with `--thinking`);
`tool_use` (`part.tool`, `part.state` with `status` completed|error, `input`, `output`,
`title`), printed when the call has finished; `step_finish` (`part.tokens` with `input`
(not cached), `output`, `reasoning`, `cache.read`, `cache.write`, and `part.cost` in
dollars, priced from its model list or the provider's `cost` in its config); `error`
(`error.name`, `error.data.message`, and for an API error `statusCode`,
`responseHeaders`, `responseBody`). There is no final report: the answer is the text of
the last message that said something.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from little_loops.fsm.actions.transcript import json_object
from little_loops.fsm.facts.spend import format_cost, implausible_tokens, reported_cost
from little_loops.fsm.values.value_checks import is_finite, is_number

RESULT_WIDTH = 100  # a tool result is shown as its first line, cut to this many characters
MAX_TOOL_LINES = 200  # what `tool_calls` keeps of a session, each line cut to TOOL_LINE_WIDTH
TOOL_LINE_WIDTH = 500
# Tool inputs that say best what a call is doing, in order of preference.
_TOOL_SUBJECTS: tuple[str, ...] = ("command", "filePath", "path", "pattern", "url", "description")
# The colours opencode puts around its own messages on stderr (`Error: Session not found`).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plain(text: str) -> str:
    """*text* without terminal colour codes."""
    return _ANSI.sub("", text)


@dataclass
class Session:
    """What a session's events said: its id, the text of each message (in order), tokens,
    cost and steps, its tool calls as readable lines and the errors it reported."""

    session_id: str | None = None
    messages: dict[str, list[str]] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0
    steps: int = 0
    tool_lines: list[str] = field(default_factory=list)
    more_tool_lines: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    tools_failed: int = 0  # tool calls that failed (`failed_call`)
    seen: bool = False  # any opencode event at all
    # Why a step's tokens or cost cannot be ones (infinite, 400 digits): an error of its output.
    implausible: str | None = None

    @property
    def answer(self) -> str:
        """The text of the last message that said something."""
        said = [texts for texts in self.messages.values() if any(t.strip() for t in texts)]
        return "".join(said[-1]).strip() if said else ""

    def add(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        self.seen = True
        if isinstance(data.get("sessionID"), str) and data["sessionID"]:
            self.session_id = self.session_id or data["sessionID"]
        part = mapping_of(data.get("part"))
        if kind == "text":
            key = str(part.get("messageID") or f"#{len(self.messages)}")
            self.messages.setdefault(key, []).append(str(part.get("text") or ""))
        elif kind == "tool_use":
            self.tools_failed += failed_call(part)
            for line in tool_call_lines(part):
                if len(self.tool_lines) < MAX_TOOL_LINES:
                    cut = len(line) > TOOL_LINE_WIDTH
                    self.tool_lines.append(line[: TOOL_LINE_WIDTH - 1] + "…" if cut else line)
                else:
                    self.more_tool_lines += 1
        elif kind == "step_finish":
            self.steps += 1
            self.implausible = self.implausible or _implausible(part)
            for name, count in step_tokens(part).items():
                self.tokens[name] = self.tokens.get(name, 0) + count
            cost = part.get("cost")
            if _number(cost) and cost > 0:
                self.cost += float(cost)
        elif kind == "error" and isinstance(data.get("error"), dict):
            self.errors.append(data["error"])

    def tool_calls(self) -> list[str]:
        more = [f"(and {self.more_tool_lines} more lines)"] if self.more_tool_lines else []
        return [*self.tool_lines, *more]


def read_session(lines: Iterable[str]) -> Session:
    """The session *lines* (opencode's JSON events; other lines are passed over) tell of."""
    session = Session()
    for line in lines:
        data = json_object(line.strip())
        if data is not None and isinstance(data.get("type"), str) and "sessionID" in data:
            session.add(data)
    return session


def _implausible(part: dict[str, Any]) -> str | None:
    """Why a `step_finish` part's tokens or cost cannot be ones (spend.implausible_tokens,
    reported_cost), or None: such a number is never counted, nor read as none."""
    tokens = mapping_of(part.get("tokens"))
    cache = mapping_of(tokens.get("cache"))
    counts = {**tokens, **{f"cache.{key}": value for key, value in cache.items()}}
    return implausible_tokens(counts) or reported_cost(part.get("cost"))[1]


def step_tokens(part: dict[str, Any]) -> dict[str, int]:
    """A `step_finish` part's tokens under the USAGE_KEYS names. Reasoning tokens are
    billed as output, so they count as output tokens."""
    tokens = mapping_of(part.get("tokens"))
    cache = mapping_of(tokens.get("cache"))
    counts = {
        "input_tokens": [tokens.get("input")],
        "output_tokens": [tokens.get("output"), tokens.get("reasoning")],
        "cache_read_input_tokens": [cache.get("read")],
        "cache_creation_input_tokens": [cache.get("write")],
    }
    return {
        name: sum(int(v) for v in values if _number(v) and v > 0)
        for name, values in counts.items()
        if any(_number(v) for v in values)
    }


def error_text(error: dict[str, Any]) -> str:
    """An `error` event's error on one line: `APIError: Rate limit reached (HTTP 429)`."""
    data = mapping_of(error.get("data"))
    message = " ".join(str(data.get("message") or "no detail").split())
    status = data.get("statusCode")
    where = f" (HTTP {status})" if isinstance(status, int) else ""
    return f"{error.get('name') or 'Error'}: {message}{where}"


def failed_call(part: dict[str, Any]) -> bool:
    """True when a finished tool call failed: its state is `error`, or its command exited
    non-zero (`metadata.exit`, the bash tool's; opencode says `completed` for it)."""
    state = mapping_of(part.get("state"))
    if state.get("status") == "error":
        return True
    code = mapping_of(state.get("metadata")).get("exit")
    bad_code = isinstance(code, int) and not isinstance(code, bool) and code != 0
    return state.get("status") == "completed" and bad_code


def tool_call_lines(part: dict[str, Any]) -> list[str]:
    """A finished tool call as a person reads it: `→ bash {"command": ...}` and
    `← its first line (+N lines)` (`← error: ...` when the call failed)."""
    state = mapping_of(part.get("state"))
    given = mapping_of(state.get("input"))
    call = json.dumps(given, ensure_ascii=False, separators=(", ", ": "))
    lines = [f"→ {part.get('tool') or 'tool'} {call}"]
    if state.get("status") == "error":
        return [*lines, _first_of("← error: ", state.get("error"))]
    if state.get("status") == "completed":
        metadata = mapping_of(state.get("metadata"))
        code = metadata.get("exit")
        status = f" [exit {code}]" if isinstance(code, int) and code != 0 else ""
        return [*lines, _first_of("← ", state.get("output")) + status]
    return lines


def _first_of(mark: str, text: object) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    first = lines[0].strip() if lines else "(no output)"
    if len(first) > RESULT_WIDTH:
        first = first[: RESULT_WIDTH - 1] + "…"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return f"{mark}{first}{more}"


def readable(line: str) -> list[str]:
    """The lines a person reads for one line of an opencode action's `.out` file: what it
    said, each tool call and its result, each step's tokens and cost, and errors. A line
    that is not one of its events is kept as it is."""
    stripped = line.strip()
    data = json_object(stripped)
    if data is None or not isinstance(data.get("type"), str):
        return [line.rstrip("\r\n")] if stripped else []
    part = mapping_of(data.get("part"))
    kind = data["type"]
    if kind == "text":
        return str(part.get("text") or "").strip().splitlines()
    if kind == "tool_use":
        return tool_call_lines(part)
    if kind == "step_finish":
        tokens = step_tokens(part)
        used = f"{tokens.get('input_tokens', 0)} in, {tokens.get('output_tokens', 0)} out"
        cache = tokens.get("cache_read_input_tokens", 0)
        used += f", {cache} from cache" if cache else ""
        cost = part.get("cost")
        priced = f", {format_cost(float(cost))}" if _number(cost) and cost > 0 else ""
        return [f"· step done ({used}{priced})"]
    if kind == "error" and isinstance(data.get("error"), dict):
        return [f"error: {error_text(data['error'])}"]
    return []


def describe_step(line: str) -> str | None:
    """One line about an event for the live display: `bash: pytest -q`, `read: app.py`,
    or the first line of what it said; None for other lines."""
    data = json_object(line.strip())
    if data is None:
        return None
    part = mapping_of(data.get("part"))
    if data.get("type") == "tool_use":
        state = mapping_of(part.get("state"))
        inputs = mapping_of(state.get("input"))
        subjects = [str(inputs[k]) for k in _TOOL_SUBJECTS if isinstance(inputs.get(k), str)]
        subject = subjects[0] if subjects else ""
        name = str(part.get("tool") or "tool")
        return f"{name}: {' '.join(subject.split())}" if subject.strip() else name
    if data.get("type") == "text":
        words = str(part.get("text") or "").strip().splitlines()
        return words[0].strip() if words else None
    return None


def mapping_of(value: object) -> dict[str, Any]:
    """*value* when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _number(value: object) -> TypeGuard[int | float]:
    return is_number(value) and is_finite(value)
