"""A scripted fake of the Anthropic Messages API on 127.0.0.1, for real clients in tests.

Tests queue the replies the server should give (`reply_tool`, `reply_text`,
`reply_error`, `reply_malformed`, `reply_hang`, or one repeated `reply_until` a time);
each `POST /v1/messages` takes the next one, answering as JSON or, when the request says
`"stream": true`, as server-sent events the way the real API streams (message_start,
ping, content_block_start/delta/stop with text_delta or input_json_delta, message_delta
with stop_reason and usage, message_stop).
When several clients share one server (Claude Code and the LLM judge), `route(name,
predicate)` gives the requests a predicate selects their own queue of replies; requests
no route selects take the server's own queue, then `default_reply`. Every request is
recorded for assertions. `POST /v1/messages/count_tokens` answers an estimate
(characters / 4); other paths are 404. Hanging handlers wake up when the server stops,
so `stop()` always returns promptly.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

CHARS_PER_TOKEN = 4
# Ids of messages and tool calls, unique across every queue of every server.
_ids = itertools.count(1)


def estimate_tokens(payload: Any) -> int:
    """A rough token count of a request payload: its compact JSON length / 4."""
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return max(1, len(text) // CHARS_PER_TOKEN)


def _prompt_tokens(body: dict[str, Any]) -> int:
    return estimate_tokens(
        {k: body.get(k) for k in ("system", "messages", "tools", "tool_choice") if k in body}
    )


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def credential(self) -> str | None:
        """The key or token the client sent (`x-api-key`, or `authorization: Bearer`)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []

    @property
    def user_text(self) -> str:
        """The text of the last user message (string content or its text blocks).

        Claude Code may put a `role: system` message after it, so this looks for the
        last message whose role is user.
        """
        users = [m for m in self.messages if m.get("role") == "user"]
        return _text_of(users[-1]["content"]) if users else ""

    @property
    def all_user_text(self) -> str:
        """The text of every user message, in order, one per line."""
        return "\n".join(_text_of(m["content"]) for m in self.messages if m.get("role") == "user")

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """Every `tool_result` block the client sent back, in order."""
        return [
            block
            for m in self.messages
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offers the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]

    def tool(self, name: str) -> dict[str, Any]:
        """The definition of the offered tool *name* (KeyError if it is not offered)."""
        for tool in self.body.get("tools") or []:
            if tool.get("name") == name:
                return dict(tool)
        raise KeyError(name)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


Predicate = Callable[[RecordedRequest], bool]


def is_judge(request: RecordedRequest) -> bool:
    """The LLM judge's call: a messages request that forces the `evaluate` tool."""
    body = request.body if isinstance(request.body, dict) else {}
    return body.get("tool_choice") == {"type": "tool", "name": "evaluate"}


# The tool Claude Code offers (and its model must call) for `--json-schema` output.
STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


def is_claude_judge(request: RecordedRequest) -> bool:
    """The LLM judge's call through Claude Code (`claude -p --json-schema`): a Claude Code
    request offering the StructuredOutput tool, which the fake answers by calling it."""
    return is_claude_code(request) and STRUCTURED_OUTPUT_TOOL in request.tool_names


def is_claude_code(request: RecordedRequest) -> bool:
    """Any request Claude Code makes (its user agent is `claude-cli/<version> ...`)."""
    return request.headers.get("user-agent", "").startswith("claude-cli/")


def is_claude_code_turn(request: RecordedRequest) -> bool:
    """A turn of Claude Code's agent: a Claude Code request that offers the model tools
    (side requests such as title generation offer none)."""
    return is_claude_code(request) and bool(request.tool_names)


@dataclass
class Reply:
    """One scripted answer to a `/v1/messages` request."""

    kind: str  # "message", "error", "malformed", "hang"
    content: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] | None = None
    stop_reason: str = "end_turn"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    then: Reply | None = None
    until: float | None = None  # time.time() until which this reply repeats (reply_until)


class ReplyQueue:
    """Scripted replies taken in order; `default_reply` answers once they run out."""

    def __init__(self) -> None:
        self.default_reply: Reply | None = None
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()

    def reply(self, reply: Reply) -> Self:
        with self._lock:
            self._replies.append(reply)
        return self

    def reply_tool(
        self,
        input: dict[str, Any],
        *,
        name: str = "evaluate",
        usage: dict[str, int] | None = None,
        text: str | None = None,
    ) -> Self:
        """Answer with a `tool_use` block calling *name* with *input* (after *text*)."""
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        content.append(
            {"type": "tool_use", "id": f"toolu_fake_{next(_ids)}", "name": name, "input": input}
        )
        return self.reply(Reply("message", content, usage, stop_reason="tool_use"))

    def reply_text(self, text: str, *, usage: dict[str, int] | None = None) -> Self:
        """Answer with a plain assistant text message."""
        return self.reply(Reply("message", [{"type": "text", "text": text}], usage))

    def reply_error(
        self, status: int, body: Any = None, *, headers: dict[str, str] | None = None
    ) -> Self:
        """Answer with HTTP *status*; *body* defaults to the API's error envelope."""
        return self.reply(error_reply(status, body, headers=headers))

    def reply_until(self, until: float, reply: Reply) -> Self:
        """Answer every request with *reply* until time.time() reaches *until* (epoch
        seconds), then go on with the next scripted reply: an API down or limited until then."""
        return self.reply(dataclasses.replace(reply, until=until))

    def reply_malformed(self, raw: str = '{"id": "msg_broken", "content": [') -> Self:
        """Answer 200 with a body that is not valid JSON."""
        return self.reply(Reply("malformed", body=raw))

    def reply_hang(self, seconds: float, then: Reply | None = None) -> Self:
        """Send nothing for *seconds* (or until stop), then *then* or close the socket."""
        return self.reply(Reply("hang", seconds=seconds, then=then))

    def next_reply(self) -> Reply | None:
        with self._lock:
            while self._replies and self._replies[0].until is not None:
                head = self._replies[0]
                if head.until is not None and time.time() < head.until:
                    return head
                self._replies.popleft()  # its time is over
            return self._replies.popleft() if self._replies else self.default_reply

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._replies)


def error_reply(status: int, body: Any = None, *, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP *status* answer; *body* defaults to the API's error envelope."""
    if body is None:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": f"fake {status}"}}
    return Reply("error", status=status, body=body, headers=dict(headers or {}))


class Route(ReplyQueue):
    """The replies for the requests *predicate* selects, and those requests."""

    def __init__(self, name: str, predicate: Predicate) -> None:
        super().__init__()
        self.name = name
        self.predicate = predicate
        self.requests: list[RecordedRequest] = []


class FakeAnthropic(ReplyQueue):
    """The fake server; use as a context manager or call start() / stop()."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[RecordedRequest] = []
        self.routes: list[Route] = []
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeAnthropic:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()  # joins the handler threads

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- scripting -------------------------------------------------------------------

    def route(self, name: str, predicate: Predicate) -> Route:
        """A queue for the `/v1/messages` requests *predicate* selects (the first route
        that selects a request answers it). A route with no reply left answers 500."""
        route = Route(name, predicate)
        with self._lock:
            self.routes.append(route)
        return route

    @property
    def unrouted(self) -> list[RecordedRequest]:
        """The `/v1/messages` requests no route selected."""
        with self._lock:
            routed = {id(r) for route in self.routes for r in route.requests}
            return [
                r
                for r in self.requests
                if r.path.split("?", 1)[0] == "/v1/messages" and id(r) not in routed
            ]

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def dispatch(self, request: RecordedRequest) -> Reply | None:
        """The reply to a `/v1/messages` request: its route's next one, else this queue's."""
        with self._lock:
            routes = list(self.routes)
        for route in routes:
            if route.predicate(request):
                with self._lock:
                    route.requests.append(request)
                reply = route.next_reply()
                if reply is None:
                    return error_reply(
                        500, _error_body("api_error", f"fake_anthropic: no reply for {route.name}")
                    )
                return reply
        return self.next_reply()

    def wait(self, seconds: float) -> bool:
        """Sleep up to *seconds*; True if the server is stopping."""
        return self._stopping.wait(seconds)

    def message_id(self) -> str:
        return f"msg_fake_{next(_ids)}"


def _make_handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server_fake.record(self._recorded(None))
        self._send_json(404, _error_body("not_found_error", f"no route GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        request = self._recorded(body)
        self.server_fake.record(request)
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens" and isinstance(body, dict):
            self._send_json(200, {"input_tokens": _prompt_tokens(body)})
        elif path == "/v1/messages" and isinstance(body, dict):
            self._answer(body, self.server_fake.dispatch(request))
        elif path in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_json(400, _error_body("invalid_request_error", "body is not JSON"))
        else:
            self._send_json(404, _error_body("not_found_error", f"no route POST {path}"))

    def _recorded(self, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(self.command, self.path, headers, body)

    def _answer(self, body: dict[str, Any], reply: Reply | None) -> None:
        fake = self.server_fake
        if reply is None:
            self._send_json(500, _error_body("api_error", "fake_anthropic: no scripted reply"))
            return
        if reply.kind == "hang":
            if fake.wait(reply.seconds) or reply.then is None:
                self.close_connection = True
                return
            reply = reply.then
        if reply.kind == "error":
            self._send_json(reply.status, reply.body, reply.headers)
        elif reply.kind == "malformed":
            self._send_raw(200, "application/json", str(reply.body).encode())
        elif body.get("stream"):
            self._stream(body, reply)
        else:
            self._send_json(200, self._message(body, reply))

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        usage = reply.usage or {
            "input_tokens": _prompt_tokens(body),
            "output_tokens": estimate_tokens(reply.content),
        }
        return {
            "id": self.server_fake.message_id(),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        message = self._message(body, reply)
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
            "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
            "output_tokens": 1,
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(message["content"]):
            if block["type"] == "tool_use":
                empty = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                empty = {**block, "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": empty}),
                ("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]  # fmt: skip
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, "application/json", json.dumps(data).encode(), headers)

    def _send_raw(
        self, status: int, ctype: str, payload: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", f"req_fake_{status}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
