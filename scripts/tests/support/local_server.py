"""A scripted stand-in server on 127.0.0.1: its lifecycle and its queue of replies, shared
by the vendor API stand-ins (fake_gemini, fake_openai_chat)."""

from __future__ import annotations

import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Generic, Self, TypeVar

R = TypeVar("R")


class LocalServer(Generic[R]):
    """Serves *handler* on a free port of 127.0.0.1 in a thread of its own; use as a context
    manager or call start() / stop(). `reply()` queues the next answers (type R)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._replies: deque[R] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread: threading.Thread | None = None

    @property
    def root_url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reply(self, reply: R) -> Self:
        """Answer the next request the script does not route elsewhere with *reply*."""
        with self._lock:
            self._replies.append(reply)
        return self

    def queued(self) -> R | None:
        """The next scripted reply, taken off the queue; None when there is none."""
        with self._lock:
            return self._replies.popleft() if self._replies else None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)
