"""Reading a pipe the user named: whole, within a cap and a deadline, a late writer waited on."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.pipe import (
    READ_SECONDS,
    READ_SECONDS_ENV,
    Deadline,
    NoTempFile,
    PipeRefused,
    read_deadline,
    read_seconds,
    spool,
)


def _reader(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def _deadline() -> Deadline:
    """A deadline no test here should reach: its reads end well before."""
    return Deadline(time.monotonic() + scaled(20), scaled(20))


def _write_later(
    path: Path, data: bytes, after: float, hold: threading.Event | None = None
) -> threading.Thread:
    """A writer of *data* to the FIFO *path* after *after* seconds, which keeps it open
    until *hold* is set (when given)."""

    def write() -> None:
        time.sleep(after)
        with open(path, "wb") as writer:
            writer.write(data)
            writer.flush()
            if hold is not None:
                hold.wait(scaled(60))

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@contextmanager
def _fed_fifo(
    tmp_path: Path, data: bytes, after: float = 0.0, hold: threading.Event | None = None
) -> Iterator[tuple[int, threading.Thread]]:
    """A FIFO's read end (open, non-blocking) and the writer of *data* to it (_write_later);
    the read end closed and the writer waited for afterwards."""
    fifo = tmp_path / "values"
    os.mkfifo(fifo)
    fd = _reader(fifo)
    writer = _write_later(fifo, data, after, hold)
    try:
        yield fd, writer
    finally:
        if hold is not None:
            hold.set()
        os.close(fd)
        writer.join()


def test_a_pipe_is_read_whole(tmp_path: Path) -> None:
    data = b"x: 1\n" * 50_000  # more than one read's chunk
    with _fed_fifo(tmp_path, data) as (fd, _), spool(fd, _deadline(), len(data)) as copy:
        assert copy.read() == data


def test_a_fifo_whose_writer_comes_later_is_waited_for(tmp_path: Path) -> None:
    # Read at once, a FIFO no writer has opened yet says it ended: the reader waits instead.
    with _fed_fifo(tmp_path, b"late: true\n", 0.3) as (fd, _), spool(fd, _deadline(), 1024) as copy:
        assert copy.read() == b"late: true\n"


def test_more_than_the_cap_is_refused_as_too_big_not_late(tmp_path: Path) -> None:
    with _fed_fifo(tmp_path, b"y\n" * 4096) as (fd, _):
        with pytest.raises(PipeRefused) as refused:
            spool(fd, _deadline(), cap=1000)
        assert (refused.value.late, str(refused.value)) == (False, "more than 1,000 bytes")


def test_a_writer_that_holds_the_pipe_open_ends_by_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READ_SECONDS_ENV, "0.5")
    with _fed_fifo(tmp_path, b"a: 1\n", hold=threading.Event()) as (fd, writer):
        started = time.monotonic()
        deadline = read_deadline()
        monkeypatch.setenv(READ_SECONDS_ENV, "no")  # read once: not again for the message
        with pytest.raises(PipeRefused) as refused:
            spool(fd, deadline, cap=1024)
        assert (refused.value.late, str(refused.value)) == (True, "not read within 0.5s")
        assert time.monotonic() - started >= 0.5
        assert writer.is_alive()  # the writer still held the pipe open


def test_no_temporary_file_is_not_an_error_of_the_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (its OSError, ENOENT, read as the pipe's own: "no such file")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    os.mkfifo(tmp_path / "values")
    fd = _reader(tmp_path / "values")  # no writer: the copy is made before the first read
    try:
        with pytest.raises(NoTempFile) as refused:
            spool(fd, _deadline(), cap=1024)
    finally:
        os.close(fd)
    assert str(refused.value) == (
        "no temporary file could hold a copy of it (No such file or directory; TMPDIR sets where)"
    )


@pytest.mark.parametrize("given", ["abc", "0", "-1", "inf", "nan", ""])
def test_a_read_time_that_is_no_number_of_seconds_above_0_is_refused(
    monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.setenv(READ_SECONDS_ENV, given)
    with pytest.raises(
        LoopRuntimeError, match=f"{READ_SECONDS_ENV}=.*expected a number of seconds above 0"
    ):
        read_seconds()


def test_the_read_time_is_five_minutes_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(READ_SECONDS_ENV, raising=False)
    assert read_seconds() == READ_SECONDS == 300.0
    monkeypatch.setenv(READ_SECONDS_ENV, "2.5")
    assert read_seconds() == 2.5
