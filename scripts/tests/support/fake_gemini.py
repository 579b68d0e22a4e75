"""A scripted stand-in for the Gemini API (generativelanguage v1beta) on 127.0.0.1, for Gemini CLI.

Gemini CLI reaches it with `GOOGLE_GEMINI_BASE_URL=<url>` (and an API key, chosen in its
settings: see `gemini_home`). Tests queue the answers (`reply_text`, `reply_call`,
`reply_error`, `reply_quota`); each `POST /v1beta/models/<model>:streamGenerateContent`
takes the next one and gets it as server-sent events (`data: <GenerateContentResponse>`),
the way the CLI asks (`?alt=sse`). The CLI's side requests, `:generateContent` without
streaming (the model router's classifier when no model is chosen, checks of its own), get
`side_reply` as one JSON object (by default the router's choice of the pro model), so they
take nothing of the script; `:countTokens` gets an estimate. Every request is recorded for
assertions. Once the queue is empty, turns get `default_reply` (a 500 when there is none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self

from support.local_server import LocalServer

# The tool Gemini CLI offers for shell commands, and what its model calls it with.
SHELL_TOOL = "run_shell_command"
# What the CLI's model router (its classifier, asked when no model is chosen) must answer.
ROUTER_CHOICE = '{"reasoning": "scripted", "model_choice": "pro"}'


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def model(self) -> str:
        """The model in the path: `/v1beta/models/<model>:streamGenerateContent`."""
        tail = self.path.split("?", 1)[0].rsplit("/models/", 1)[-1]
        return tail.split(":", 1)[0]

    @property
    def contents(self) -> list[dict[str, Any]]:
        given = self.body.get("contents") if isinstance(self.body, dict) else None
        return [c for c in given or [] if isinstance(c, dict)]

    def texts(self, role: str = "user") -> list[str]:
        """The text parts of the turns of *role* (`user` or `model`), in order."""
        return [
            str(part["text"])
            for content in self.contents
            if content.get("role") == role
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]

    @property
    def user_text(self) -> str:
        """The last text part of the last user turn: the prompt of this turn."""
        texts = self.texts("user")
        return texts[-1] if texts else ""

    @property
    def function_calls(self) -> list[dict[str, Any]]:
        """The model's function calls the request sends back (earlier turns)."""
        return self._parts("functionCall")

    @property
    def function_responses(self) -> list[dict[str, Any]]:
        """The results of function calls the client sends back."""
        return self._parts("functionResponse")

    @property
    def tool_names(self) -> list[str]:
        """The names of the functions the request offers the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [
            str(decl.get("name"))
            for tool in tools or []
            if isinstance(tool, dict)
            for decl in tool.get("functionDeclarations") or []
            if isinstance(decl, dict)
        ]

    def _parts(self, key: str) -> list[dict[str, Any]]:
        return [
            part[key]
            for content in self.contents
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get(key), dict)
        ]


@dataclass
class Reply:
    """One scripted answer: `parts` of a model turn with `usage`, or an HTTP error."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    status: int = 200
    body: Any = None


def usage_metadata(
    prompt: int = 100, output: int = 10, cached: int = 0, thoughts: int = 0
) -> dict[str, int]:
    """A `usageMetadata` block as the API sends it (the prompt count includes the cached)."""
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output + thoughts,
    }
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def quota_body(*, daily: bool, retry_seconds: float = 1.0) -> dict[str, Any]:
    """The API's 429 RESOURCE_EXHAUSTED body for a free-tier quota: per day (Gemini CLI
    gives up at once) or per minute (it retries after the RetryInfo delay)."""
    per = "PerDay" if daily else "PerMinute"
    return {
        "error": {
            "code": 429,
            "message": (
                "You exceeded your current quota, please check your plan and billing details."
                " For more information on this error, head to: "
                "https://ai.google.dev/gemini-api/docs/rate-limits.\n"
                "* Quota exceeded for metric: generativelanguage.googleapis.com/"
                "generate_content_free_tier_requests, limit: 50, model: gemini-2.5-pro\n"
                f"Please retry in {retry_seconds}s."
            ),
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": f"GenerateRequests{per}PerProjectPerModel-FreeTier",
                            "quotaValue": "50",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{retry_seconds:g}s",
                },
            ],
        }
    }


class FakeGemini(LocalServer[Reply]):
    """The fake server; use as a context manager or call start() / stop()."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.default_reply: Reply | None = None
        self.side_reply = Reply([{"text": ROUTER_CHOICE}], usage_metadata(10, 5))
        super().__init__(_make_handler(self))

    @property
    def url(self) -> str:
        return self.root_url

    # --- scripting -------------------------------------------------------------------

    def reply_text(self, text: str, *, usage: dict[str, int] | None = None) -> Self:
        """Answer with a model turn of *text*."""
        return self.reply(Reply([{"text": text}], usage or usage_metadata()))

    def reply_call(
        self,
        args: dict[str, Any],
        *,
        name: str = SHELL_TOOL,
        text: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> Self:
        """Answer with a call of the function *name* with *args* (after *text*)."""
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        parts.append({"functionCall": {"name": name, "args": args}})
        return self.reply(Reply(parts, usage or usage_metadata()))

    def reply_error(self, status: int, body: Any = None) -> Self:
        """Answer with HTTP *status*; *body* defaults to the API's error envelope."""
        if body is None:
            body = {"error": {"code": status, "message": f"fake {status}", "status": "UNKNOWN"}}
        return self.reply(Reply(status=status, body=body))

    def reply_quota(self, *, daily: bool, retry_seconds: float = 1.0) -> Self:
        """Answer 429 RESOURCE_EXHAUSTED (see `quota_body`)."""
        return self.reply_error(429, quota_body(daily=daily, retry_seconds=retry_seconds))

    def next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else self.default_reply

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    @property
    def turns(self) -> list[RecordedRequest]:
        """The agent's turns (`:streamGenerateContent` requests), in order."""
        with self._lock:
            return [r for r in self.requests if ":streamGenerateContent" in r.path]


def gemini_home(home: Path, *, max_attempts: int = 1) -> Path:
    """Make *home* a Gemini CLI home for tests: an API key as the auth type (so
    GOOGLE_GEMINI_BASE_URL is used: without a chosen type the CLI 0.61 takes the base URL
    for a `gateway` it then refuses), no update check, no usage statistics or telemetry,
    and *max_attempts* calls of a refused request (10 by default in the CLI)."""
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": max_attempts,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return home


def gemini_env(fake: FakeGemini, home: Path, tmp: Path) -> dict[str, str]:
    """The environment variables that point Gemini CLI at *fake*, with *home* as its home
    and *tmp* for the error reports it writes to the temporary folder."""
    return {
        "HOME": str(home),
        "GEMINI_API_KEY": "fake-gemini-key",
        "GOOGLE_GEMINI_BASE_URL": fake.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "TMPDIR": str(tmp),
        "NO_COLOR": "1",
    }


def _make_handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeGemini
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server_fake.record(self._recorded(None))
        self._send(404, {"error": {"code": 404, "message": f"no route GET {self.path}"}})

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
        if path.endswith(":countTokens"):
            self._send(200, {"totalTokens": max(1, len(raw) // 4)})
            return
        if path.endswith(":generateContent"):
            self._send(200, _response(request.model, self.server_fake.side_reply))
            return
        if not path.endswith(":streamGenerateContent"):
            self._send(404, {"error": {"code": 404, "message": f"no route POST {path}"}})
            return
        reply = self.server_fake.next_reply()
        if reply is None:
            self._send(500, {"error": {"code": 500, "message": "fake_gemini: no scripted reply"}})
        elif reply.status != 200:
            self._send(reply.status, reply.body)
        else:
            self._stream(request.model, reply)

    def _recorded(self, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(self.command, self.path, headers, body)

    def _stream(self, model: str, reply: Reply) -> None:
        """The reply as server-sent events: each part in a chunk of its own, the last
        with the finish reason and the usage, as the API streams."""
        chunks = []
        for number, part in enumerate(reply.parts):
            last = number == len(reply.parts) - 1
            chunk = _response(model, Reply([part], reply.usage))
            if not last:
                del chunk["candidates"][0]["finishReason"]
                del chunk["usageMetadata"]
            chunks.append(chunk)
        data = b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _response(model: str, reply: Reply) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": reply.parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": dict(reply.usage),
        "modelVersion": model,
    }
