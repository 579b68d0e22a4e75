"""A scripted stand-in of the OpenAI Chat Completions API on 127.0.0.1, for real clients in tests.

opencode reaches a model of an OpenAI-compatible provider (`@ai-sdk/openai-compatible`,
bundled in its binary) with `POST <baseURL>/chat/completions`, streaming. Tests queue the
answers the agent's turns get (`reply_text`, `reply_tool`, `reply_error`, or one repeated
`reply_until` a time); each turn takes the next one, as JSON or, when the request says
`"stream": true`, as server-sent `chat.completion.chunk` events ending with a usage chunk
and `data: [DONE]`, the way the real API streams. A request that offers no tools (opencode
asks its small model for the session's title that way) is a side request: it is answered
with `side_text` and takes nothing from the queue. Every request is recorded for
assertions. Other paths are 404.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from support.local_server import LocalServer

CHARS_PER_TOKEN = 4
_ids = itertools.count(1)  # ids of completions and tool calls, unique across servers


def estimate_tokens(payload: Any) -> int:
    """A rough token count: the compact JSON length of *payload* / 4."""
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return max(1, len(text) // CHARS_PER_TOKEN)


@dataclass
class RecordedRequest:
    """One request the stand-in received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def credential(self) -> str | None:
        """The key the client sent (`authorization: Bearer KEY`)."""
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None

    @property
    def model(self) -> str | None:
        model = self.body.get("model") if isinstance(self.body, dict) else None
        return model if isinstance(model, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def user_texts(self) -> list[str]:
        """The text of each user message, in order."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "user"]

    @property
    def assistant_texts(self) -> list[str]:
        """The text of each assistant message the client sent back, in order."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "assistant"]

    @property
    def tool_results(self) -> list[str]:
        """The content of each `role: tool` message (a tool call's result), in order."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "tool"]

    @property
    def tool_names(self) -> list[str]:
        """The names of the functions the request offers the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [
            str((t.get("function") or {}).get("name"))
            for t in tools or []
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]

    def tool(self, name: str) -> dict[str, Any]:
        """The `function` definition of the offered tool *name* (KeyError if not offered)."""
        for tool in self.body.get("tools") or []:
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and function.get("name") == name:
                return dict(function)
        raise KeyError(name)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


@dataclass
class Reply:
    """One scripted answer to a turn."""

    kind: str  # "message" or "error"
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments"}
    usage: dict[str, Any] | None = None
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    until: float | None = None  # time.time() until which this reply repeats (reply_until)
    delay: float = 0.0  # seconds it takes to answer (a slow model)

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def usage(prompt: int, completion: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """A Chat Completions `usage` object: *prompt* tokens (of them *cached* read from the
    cache), *completion* tokens (of them *reasoning*)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def error_reply(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> Reply:
    """An HTTP *status* answer with the API's error envelope."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return Reply("error", status=status, body=body, headers=dict(headers or {}))


class FakeOpenAIChat(LocalServer[Reply]):
    """The stand-in server; use as a context manager or call start() / stop()."""

    def __init__(self, side_text: str = "Fixing the constant") -> None:
        self.side_text = side_text
        self.requests: list[RecordedRequest] = []
        super().__init__(_make_handler(self))

    @property
    def url(self) -> str:
        """The base URL a client is given (`.../v1`)."""
        return f"{self.root_url}/v1"

    # --- scripting -------------------------------------------------------------------

    def reply_text(
        self, text: str, *, usage: dict[str, Any] | None = None, delay: float = 0.0
    ) -> Self:
        """Answer the next turn with assistant *text*, *delay* seconds after it came."""
        return self.reply(Reply("message", text=text, usage=usage, delay=delay))

    def reply_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        text: str = "",
        usage: dict[str, Any] | None = None,
    ) -> Self:
        """Answer the next turn with a call of the function *name* with *arguments* (after
        *text*)."""
        call = {"name": name, "arguments": arguments}
        return self.reply(Reply("message", text=text, tool_calls=[call], usage=usage))

    def reply_error(
        self,
        status: int,
        message: str = "",
        *,
        kind: str = "",
        headers: dict[str, str] | None = None,
    ) -> Self:
        """Answer the next turn with HTTP *status* and the API's error envelope."""
        kind = kind or {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status, "api_error")
        return self.reply(error_reply(status, message or f"fake {status}", kind, headers))

    def reply_until(self, until: float, reply: Reply) -> Self:
        """Answer every turn with *reply* until time.time() reaches *until* (epoch seconds),
        then go on with the next scripted reply: an API limited until then."""
        return self.reply(dataclasses.replace(reply, until=until))

    @property
    def turns(self) -> list[RecordedRequest]:
        """The completions requests that offered tools: the agent's turns."""
        with self._lock:
            return [r for r in self.requests if _is_completion(r) and r.tool_names]

    @property
    def side_requests(self) -> list[RecordedRequest]:
        """The completions requests that offered no tools (the session's title)."""
        with self._lock:
            return [r for r in self.requests if _is_completion(r) and not r.tool_names]

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_reply(self) -> Reply | None:
        with self._lock:
            while self._replies and self._replies[0].until is not None:
                head = self._replies[0]
                if head.until is not None and time.time() < head.until:
                    return head
                self._replies.popleft()  # its time is over
            return self._replies.popleft() if self._replies else None


def _is_completion(request: RecordedRequest) -> bool:
    return request.method == "POST" and request.path.split("?", 1)[0].endswith("/chat/completions")


def _make_handler(fake: FakeOpenAIChat) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAIChat
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server_fake.record(self._recorded(None))
        self._send_json(404, {"error": {"message": f"no route GET {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        request = self._recorded(body)
        fake = self.server_fake
        fake.record(request)
        if not _is_completion(request):
            self._send_json(404, {"error": {"message": f"no route POST {self.path}"}})
        elif not isinstance(body, dict):
            self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid"}})
        elif not request.tool_names:
            self._answer(body, Reply("message", text=fake.side_text))
        else:
            reply = fake.next_reply()
            if reply is None:
                reply = error_reply(500, "fake_openai_chat: no scripted reply", "server_error")
            self._answer(body, reply)

    def _recorded(self, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(self.command, self.path, headers, body)

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        time.sleep(reply.delay)
        if reply.kind == "error":
            self._send_json(reply.status, reply.body, reply.headers)
            return
        calls = [
            {
                "id": f"call_fake_{next(_ids)}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in reply.tool_calls
        ]
        used = reply.usage or usage(
            estimate_tokens({k: body.get(k) for k in ("messages", "tools")}),
            estimate_tokens(reply.text or calls),
        )
        ident, model = f"chatcmpl-fake-{next(_ids)}", body.get("model", "fake-model")
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        if not body.get("stream"):
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": reply.finish_reason}
                    ],
                    "usage": used,
                },
            )
            return
        head = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time())}
        head["model"] = model
        delta: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if calls:
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
        chunks = [
            {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]},
            {**head, "choices": [], "usage": used},
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True
