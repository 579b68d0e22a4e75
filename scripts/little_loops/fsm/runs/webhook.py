"""POST a run's JSON summary to a webhook: each try within a timeout, failed ones retried."""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

# Seconds before retry N (1, 2, 4 ... doubling, at most MAX_BACKOFF_S): docs/notifications.md.
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
# Answers worth another try: the server is unwell or busy; other 4xx will not change.
_RETRIED_STATUSES = frozenset({408, 425, 429})
_WAIT_STEP_S = 0.05  # how often a wait looks whether it was cancelled (Ctrl-C)
_USER_AGENT = "ll-loop-notify"


def backoff(retry: int) -> float:
    """Seconds to wait before retry number *retry* (1 for the first): 1, 2, 4 ... <= 30."""
    return min(FIRST_BACKOFF_S * 2.0 ** (retry - 1), MAX_BACKOFF_S)


def where(url: str) -> str:
    """The scheme and host of *url* (its path and query may hold a secret token)."""
    try:
        parts = urllib.parse.urlsplit(url)
        return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"
    except ValueError:  # a host or port urllib cannot read: never shown, it may hold a secret
        return f"{url.partition(':')[0]}://(a host that cannot be read)"


@dataclass(frozen=True)
class Delivery:
    """How posting went: delivered or not, after how many tries, and the last problem."""

    delivered: bool
    tries: int
    problem: str = ""  # `HTTP 500 Internal Server Error`, `no answer within 10s` ...
    cancelled: bool = False


@cache
def _opener() -> Any:
    """The opener every POST goes through: a redirect is an answer, not followed (a POST
    would become a GET, or change scheme). Built on the first POST: a run without a webhook
    never imports urllib.request, http.client and ssl."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirects)


def no_answer(timeout: float) -> str:
    """What a try that got no answer in time is said to be, whichever clock noticed first."""
    return f"no answer within {timeout:g}s"


def _post_once(url: str, body: bytes, timeout: float) -> tuple[str, bool]:
    """One POST: ('', _) when the server took it (2xx), else (what went wrong, retry?)."""
    import ssl
    import urllib.error
    import urllib.request
    from http.client import HTTPException

    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": _USER_AGENT},
    )
    try:
        with _opener().open(request, timeout=timeout) as answer:
            status = answer.status
            reason = answer.reason
    except urllib.error.HTTPError as exc:
        status, reason = exc.code, exc.reason
        exc.close()
    except (urllib.error.URLError, OSError, HTTPException, ValueError) as exc:
        why = getattr(exc, "reason", None) or exc
        if isinstance(why, TimeoutError):  # the socket's own timeout: said as post_json's
            return no_answer(timeout), True
        # A certificate that does not check out will not check out a second later.
        return str(why) or type(why).__name__, not isinstance(why, ssl.SSLCertVerificationError)
    if 200 <= status < 300:
        return "", False
    retry = status >= 500 or status in _RETRIED_STATUSES
    note = " (redirects are not followed)" if 300 <= status < 400 else ""
    return f"HTTP {status} {reason}".rstrip() + note, retry


def _attempt(
    url: str, body: bytes, timeout: float, outcome: list[tuple[str, bool]], done: threading.Event
) -> None:
    """One try, in its own thread: its outcome appended to *outcome*, then *done* set."""
    try:
        outcome.append(_post_once(url, body, timeout))
    finally:
        done.set()


def _wait(done: threading.Event, seconds: float, cancelled: threading.Event) -> bool:
    """Wait up to *seconds* for *done*; False when the time ran out or *cancelled* was set."""
    deadline = time.monotonic() + seconds
    while not cancelled.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if done.wait(min(left, _WAIT_STEP_S)):
            return True
    return False


def post_json(
    url: str,
    body: bytes,
    *,
    timeout: float,
    retries: int,
    cancelled: threading.Event | None = None,
    sleep: Callable[[float, threading.Event], bool] | None = None,
) -> Delivery:
    """POST *body* to *url*, at most 1 + *retries* times, *backoff()* apart.

    Each try gets *timeout* seconds in all (a server that trickles its answer counts too):
    a try still waiting then is left to end in a daemon thread, so the whole post takes at
    most timeout x tries plus the backoffs. Setting *cancelled* ends the waiting at once.
    """
    _opener()  # the HTTP modules imported here, not in a try's thread against its timeout
    cancelled = cancelled or threading.Event()
    pause = sleep or (lambda seconds, stop: not stop.wait(seconds))
    problem = ""
    for attempt in range(1, retries + 2):
        if attempt > 1 and not pause(backoff(attempt - 1), cancelled):
            return Delivery(False, attempt - 1, problem, cancelled=True)
        outcome: list[tuple[str, bool]] = []
        done = threading.Event()
        threading.Thread(
            target=_attempt,
            args=(url, body, timeout, outcome, done),
            name="ll-loop-webhook",
            daemon=True,
        ).start()
        if not _wait(done, timeout, cancelled):
            if cancelled.is_set():
                return Delivery(False, attempt, problem or "cancelled", cancelled=True)
            problem, retry = no_answer(timeout), True
        else:
            problem, retry = outcome[0] if outcome else ("the request failed", True)
        if not problem:
            return Delivery(True, attempt)
        if not retry:
            return Delivery(False, attempt, problem)
    return Delivery(False, retries + 1, problem)
