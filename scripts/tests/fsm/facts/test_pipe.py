"""Reading a pipe the user named: whole, within a cap and a deadline, a late writer waited on."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.pipe import (
    READ_SECONDS,
    READ_SECONDS_ENV,
    PipeRefused,
    read_seconds,
    spool,
)


def _reader(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


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


def test_a_pipe_is_read_whole(tmp_path: Path) -> None:
    fifo = tmp_path / "values"
    os.mkfifo(fifo)
    fd = _reader(fifo)
    data = b"x: 1\n" * 50_000  # more than one read's chunk
    writer = _write_later(fifo, data, after=0.0)
    try:
        with spool(fd, time.monotonic() + scaled(20), cap=len(data)) as copy:
            assert copy.read() == data
    finally:
        os.close(fd)
        writer.join()


def test_a_fifo_whose_writer_comes_later_is_waited_for(tmp_path: Path) -> None:
    # Read at once, a FIFO no writer has opened yet says it ended: the reader waits instead.
    fifo = tmp_path / "values"
    os.mkfifo(fifo)
    fd = _reader(fifo)
    writer = _write_later(fifo, b"late: true\n", after=0.3)
    try:
        with spool(fd, time.monotonic() + scaled(20), cap=1024) as copy:
            assert copy.read() == b"late: true\n"
    finally:
        os.close(fd)
        writer.join()


def test_more_than_the_cap_is_refused_as_too_big_not_late(tmp_path: Path) -> None:
    fifo = tmp_path / "values"
    os.mkfifo(fifo)
    fd = _reader(fifo)
    writer = _write_later(fifo, b"y\n" * 4096, after=0.0)
    try:
        with pytest.raises(PipeRefused) as refused:
            spool(fd, time.monotonic() + scaled(20), cap=1000)
        assert (refused.value.late, str(refused.value)) == (False, "more than 1,000 bytes")
    finally:
        os.close(fd)
        writer.join()


def test_a_writer_that_holds_the_pipe_open_ends_by_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READ_SECONDS_ENV, "0.5")
    fifo = tmp_path / "values"
    os.mkfifo(fifo)
    fd = _reader(fifo)
    held = threading.Event()
    writer = _write_later(fifo, b"a: 1\n", after=0.0, hold=held)
    started = time.monotonic()
    try:
        with pytest.raises(PipeRefused) as refused:
            spool(fd, started + read_seconds(), cap=1024)
        assert (refused.value.late, str(refused.value)) == (True, "not read within 0.5s")
        assert time.monotonic() - started >= 0.5
        assert writer.is_alive()  # the writer still held the pipe open
    finally:
        held.set()
        os.close(fd)
        writer.join()


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
