"""A scripted fake of the OpenAI Responses API on 127.0.0.1, for the real Codex CLI in tests.

Tests queue the replies the server gives (`reply_text`, `reply_shell`, `reply_error`,
`reply_usage_limit`); each `POST /v1/responses` takes the next one (then `default_reply`,
a plain text answer) and answers the way the API streams (server-sent events:
response.created, one response.output_item.done per output item, response.completed with
`usage`). A shell call is a `function_call` of Codex's own `exec_command` tool
(`{"cmd": "..."}`); Codex runs it and sends its `function_call_output` in the next
request. Every request is recorded for assertions; other paths are 404.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# The name and argument of the shell tool Codex 0.171 offers the model.
SHELL_TOOL = "exec_command"
SHELL_ARGUMENT = "cmd"
DEFAULT_USAGE = {"input_tokens": 1000, "cached_input_tokens": 200, "output_tokens": 50}
_ids = itertools.count(1)


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def items(self) -> list[dict[str, Any]]:
        given = self.body.get("input") if isinstance(self.body, dict) else None
        return [item for item in given or [] if isinstance(item, dict)]

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def user_texts(self) -> list[str]:
        """The text of each user message of the input, in order (Codex's own context
        message about the environment included)."""
        return [
            str(part.get("text", ""))
            for item in self.items
            if item.get("type") == "message" and item.get("role") == "user"
            for part in item.get("content") or []
            if isinstance(part, dict) and part.get("type") == "input_text"
        ]

    @property
    def function_outputs(self) -> list[str]:
        """The output of each function call the client sends back, in order."""
        return [
            str(item.get("output", ""))
            for item in self.items
            if item.get("type") == "function_call_output"
        ]

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema the answer must follow (`text.format`), when one is asked."""
        text = self.body.get("text") if isinstance(self.body, dict) else None
        given = text.get("format") if isinstance(text, dict) else None
        return given.get("schema") if isinstance(given, dict) else None


@dataclass
class Reply:
    """One scripted answer: output items, or an HTTP error *status* with *body*."""

    output: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    status: int = 200
    body: Any = None


def text_reply(text: str, usage: dict[str, int] | None = None) -> Reply:
    """An assistant message saying *text*."""
    message = {
        "type": "message",
        "role": "assistant",
        "id": f"msg_fake_{next(_ids)}",
        "content": [{"type": "output_text", "text": text}],
    }
    return Reply([message], dict(usage or DEFAULT_USAGE))


def usage_limit_body(resets_at: float | None = None) -> dict[str, Any]:
    """The error body of a ChatGPT plan's usage limit (HTTP 429), as Codex reads it."""
    error: dict[str, Any] = {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "plus",
    }
    if resets_at is not None:
        error["resets_at"] = int(resets_at)
    return {"error": error}


class FakeOpenAI:
    """The server: `with FakeOpenAI() as fake:` ... `fake.url` is the base URL (`/v1`)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.default_reply: Reply = text_reply("Done.")
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, reply: Reply) -> Self:
        with self._lock:
            self._replies.append(reply)
        return self

    def reply_text(self, text: str, *, usage: dict[str, int] | None = None) -> Self:
        return self.reply(text_reply(text, usage))

    def reply_shell(self, command: str, *, usage: dict[str, int] | None = None) -> Self:
        """Answer with a call of Codex's shell tool running *command*."""
        call = {
            "type": "function_call",
            "id": f"fc_fake_{next(_ids)}",
            "call_id": f"call_fake_{next(_ids)}",
            "name": SHELL_TOOL,
            "arguments": json.dumps({SHELL_ARGUMENT: command}),
        }
        return self.reply(Reply([call], dict(usage or DEFAULT_USAGE)))

    def reply_error(self, status: int, body: Any) -> Self:
        return self.reply(Reply(status=status, body=body))

    def reply_usage_limit(self, resets_at: float | None = None) -> Self:
        return self.reply_error(429, usage_limit_body(resets_at))

    def wait_for_requests(self, count: int, timeout: float = 30) -> list[RecordedRequest]:
        """The requests once there are *count* of them (AssertionError after *timeout*)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.requests) >= count, f"{len(self.requests)} requests, not {count}"
        return list(self.requests)

    def _next(self) -> Reply:
        with self._lock:
            return self._replies.popleft() if self._replies else self.default_reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, "application/json", b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append(RecordedRequest("POST", self.path, headers, body))
                if self.path.rstrip("/") != "/v1/responses":
                    self._send(404, "application/json", b'{"error": {"message": "not found"}}')
                    return
                reply = fake._next()
                if reply.status != 200:
                    self._send(reply.status, "application/json", json.dumps(reply.body).encode())
                    return
                self._send(200, "text/event-stream", _events(reply))

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _events(reply: Reply) -> bytes:
    """*reply* as the Responses API's server-sent events."""
    response_id = f"resp_fake_{next(_ids)}"
    usage = dict(reply.usage)
    usage["input_tokens_details"] = {"cached_tokens": usage.pop("cached_input_tokens", 0)}
    usage["output_tokens_details"] = {"reasoning_tokens": 0}
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": response_id}}]
    events += [{"type": "response.output_item.done", "item": item} for item in reply.output]
    events.append({"type": "response.completed", "response": {"id": response_id, "usage": usage}})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
