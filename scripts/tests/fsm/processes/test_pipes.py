"""pipes: the tail kept of a stream, the file copy, and reading a real child's pipes."""

from __future__ import annotations

import os
import subprocess
import time

from support.slowdown import scaled

from little_loops.fsm.processes.containment import CONTAINMENT
from little_loops.fsm.processes.pipes import Sink, Tail, Watch


def test_a_tail_keeps_the_last_bytes_and_says_it_was_cut() -> None:
    tail = Tail(4)
    tail.add(b"abc")
    assert (tail.text(), tail.truncated) == ("abc", False)
    tail.add(b"defgh")
    assert (tail.text(), tail.truncated, tail.total) == ("efgh", True, 8)


def test_a_cut_tail_does_not_start_inside_a_utf8_character() -> None:
    tail = Tail(2)
    tail.add("xé!".encode())  # é is two bytes: the last two start in its middle
    assert tail.text() == "!"


def test_a_sink_stops_at_its_first_write_error() -> None:
    read, write = os.pipe()
    os.close(read)  # writing now fails with EPIPE (Python ignores SIGPIPE)
    sink = Sink(write)
    sink.write(b"lost")
    assert sink.write_error is not None
    os.close(write)
    Sink(-1).write(b"nowhere")  # no file: nothing to write, no error


def test_a_watch_reads_both_pipes_to_their_end_and_sees_the_exit() -> None:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)  # drained until empty, as the supervisor's is
    copy_r, copy_w = os.pipe()
    child = CONTAINMENT.start(
        ["bash", "-c", "echo out; echo err >&2"], streams=(subprocess.DEVNULL, out_w, err_w)
    )
    os.close(out_w)
    os.close(err_w)
    out, err = Tail(100), Tail(100)
    watch = Watch(child.process, (out_r, err_r), ((out, Sink(copy_w)), (err, Sink(-1))), wake_r)
    os.write(wake_w, b"\0")  # a wake-up is drained, not read as output
    deadline = time.monotonic() + scaled(10.0)
    while (watch.open_pipes or not watch.exited) and time.monotonic() < deadline:
        watch.wait(0.1)
    watch.close()
    assert (out.text(), err.text()) == ("out\n", "err\n")
    assert child.reap() == 0
    assert os.read(copy_r, 100) == b"out\n"
    for fd in (out_r, err_r, wake_r, wake_w, copy_r, copy_w):
        os.close(fd)
