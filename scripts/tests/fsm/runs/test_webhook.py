"""Webhook posts: the backoff schedule, what a note shows of a URL, retries and cancelling."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from little_loops.fsm.runs.webhook import backoff, post_json, where


def test_the_backoff_doubles_from_one_second_up_to_thirty() -> None:
    assert [backoff(retry) for retry in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_note_shows_the_scheme_and_host_not_the_secret_path() -> None:
    assert where("https://hooks.example.com/services/T0/B0/secret?x=1") == (
        "https://hooks.example.com"
    )
    assert where("http://127.0.0.1:8080/hook") == "http://127.0.0.1:8080"


def test_a_note_about_a_url_urllib_cannot_read_shows_no_part_of_it() -> None:
    assert where("http://127.0.0.1:99999/hook?token=secret") == (
        "http://(a host that cannot be read)"
    )
    assert "secret" not in where("http://[::1/hook?token=secret")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_is_tried_again_after_each_backoff() -> None:
    waited: list[float] = []

    def sleep(seconds: float, cancelled: threading.Event) -> bool:
        waited.append(seconds)
        return True

    url = f"http://127.0.0.1:{_closed_port()}/hook"
    done = post_json(url, b"{}", timeout=5, retries=2, sleep=sleep)
    assert (done.delivered, done.tries, done.cancelled) == (False, 3, False)
    assert "refused" in done.problem.lower()
    assert waited == [1, 2]


def test_a_cancel_during_the_backoff_ends_it() -> None:
    cancelled = threading.Event()

    def sleep(seconds: float, stop: threading.Event) -> bool:
        cancelled.set()  # Ctrl-C arrives while waiting to try again
        return not stop.is_set()

    url = f"http://127.0.0.1:{_closed_port()}/hook"
    done = post_json(url, b"{}", timeout=5, retries=3, cancelled=cancelled, sleep=sleep)
    assert (done.delivered, done.tries, done.cancelled) == (False, 1, True)


def test_a_certificate_that_fails_to_verify_is_not_tried_again(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    waited: list[float] = []
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/hook"
        done = post_json(
            url, b"{}", timeout=5, retries=3, sleep=lambda s, _: waited.append(s) is None
        )
    finally:
        server.shutdown()
        server.server_close()
    assert (done.delivered, done.tries, waited) == (False, 1, [])
    assert "CERTIFICATE_VERIFY_FAILED" in done.problem


def test_a_timeout_reads_the_same_whichever_clock_notices_it_first() -> None:
    # A try's socket times out at the moment post_json stops waiting for it; under load the
    # socket's own timeout can come first. Both are "no answer", never Python's "timed out".
    from little_loops.fsm.runs.webhook import _post_once

    silent = socket.create_server(("127.0.0.1", 0))  # takes the connection, never answers
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
        assert _post_once(url, b"{}", 0.3) == ("no answer within 0.3s", True)
    finally:
        silent.close()
