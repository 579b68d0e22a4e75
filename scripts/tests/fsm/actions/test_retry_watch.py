"""An agent CLI's own retry of a rate-limited call, heard on its live stderr, ends its process
tree (real bash children under the supervisor); look-alike lines end nothing."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path

import pytest
from support.llproc import wait_for

from little_loops.fsm.actions.gemini import GEMINI_OWN_RETRY
from little_loops.fsm.actions.opencode import OPENCODE_OWN_RETRY
from little_loops.fsm.actions.retry_watch import HeardTail, RetryWatch
from little_loops.fsm.actions.spec import OwnRetry
from little_loops.fsm.actions.supervisor import GAVE_WAY_EXIT_CODE, ProcessSupervisor
from little_loops.fsm.processes.pids import pid_alive

# As Gemini CLI 0.61 printed them against the scripted API (a per-minute quota).
GEMINI_RETRY = (
    "Attempt 1 failed: You exceeded your current quota, please check your plan and billing "
    "details.\n* Quota exceeded for metric: generate_content_free_tier_requests, limit: 50\n"
    "Please retry in 1.0s.\nSuggested retry after 1s.. Retrying after 5186ms...\n"
)
# As opencode 1.18 printed it with --print-logs --log-level ERROR (retry-after 3600).
OPENCODE_RETRY = (
    "timestamp=2026-12-07T03:12:25.380Z level=ERROR run=e8862318 "
    'message="stream error" providerID=fake modelID=fake-model session.id=ses_x small=false '
    'agent=build mode=primary error.error="AI_APICallError: You exceeded your current quota, '
    'please check your plan and billing details."\n'
)
LOOK_ALIKES = [
    "tests/test_retry.py::test_retrying_after_a_failure PASSED\n",
    "Retrying after 5000ms...\n",  # no "Attempt N failed" before it
    "  Attempt 1 failed: flaky. Retrying after 5ms...\n",  # not at the line's start
    "Attempt 1 failed with status 404. Retrying with backoff...\n",  # neither 429 nor 5xx
    "Attempt 2 failed: quota. Max attempts reached\n",  # its last try: it ends by itself
    OPENCODE_RETRY.replace("small=false", "small=true"),  # its title's side request
    OPENCODE_RETRY.replace("level=ERROR", "level=INFO"),
]


def _heard(own: OwnRetry, text: str, chunk: int = 7) -> RetryWatch:
    watch = RetryWatch(own)
    data = text.encode()
    for at in range(0, len(data), chunk):  # pipes hand over any split
        watch.feed(data[at : at + chunk])
    return watch


def test_gemini_s_retry_message_is_heard_across_its_lines_and_any_chunking() -> None:
    assert GEMINI_OWN_RETRY.allowed == 1  # its first retry is let through
    assert _heard(GEMINI_OWN_RETRY, GEMINI_RETRY).heard is None
    for chunk in (1, 7, 4096):
        said = "YOLO mode is enabled.\n" + GEMINI_RETRY * 2
        heard = _heard(GEMINI_OWN_RETRY, said, chunk).heard
        assert heard is not None
        assert heard.startswith("Attempt 1 failed: You exceeded")
    backoff = "Attempt 1 failed with status 429. Retrying with backoff... Error: x\n" * 2
    assert _heard(GEMINI_OWN_RETRY, backoff).heard is not None


@pytest.mark.parametrize(
    "line",
    [
        "Attempt 1 failed with status 503. Retrying with backoff... Error: overloaded\n",
        "Attempt 1 failed with status 500. Retrying with backoff...\n",
        "Attempt 3 failed with 5xx error. Retrying with backoff...\n",
    ],
)
def test_gemini_s_first_retry_of_a_5xx_is_heard_at_once(line: str) -> None:
    heard = _heard(GEMINI_OWN_RETRY, "YOLO mode is enabled.\n" + line).heard
    assert heard is not None
    assert heard.startswith("Attempt ")
    # A 429's first retry is still let through; a 5xx after it is heard at once.
    late = _heard(GEMINI_OWN_RETRY, GEMINI_RETRY + line)
    assert (late.count, late.heard is not None) == (2, True)


def test_opencode_s_log_line_is_heard_as_the_error_it_quotes() -> None:
    heard = _heard(OPENCODE_OWN_RETRY, OPENCODE_RETRY).heard
    assert heard == (
        "AI_APICallError: You exceeded your current quota, please check your plan and "
        "billing details."
    )


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_a_line_that_merely_looks_like_a_retry_is_not_heard(line: str) -> None:
    for own in (GEMINI_OWN_RETRY, OPENCODE_OWN_RETRY):
        assert _heard(own, line * 3).heard is None


UNNAMED = OPENCODE_RETRY.replace("You exceeded your current quota", "Please try again later")


def test_a_refusal_that_names_no_limit_is_heard_only_if_the_cli_still_runs_after_settle() -> None:
    # A refused key, a bad request: opencode gives up at once, with its own error event.
    watch = _heard(OPENCODE_OWN_RETRY, UNNAMED)
    assert watch.heard is None
    assert watch.due is not None
    assert not watch.expire(watch.due - 0.001)
    assert watch.expire(watch.due)  # still running: it waits to retry it
    assert watch.heard is not None
    assert watch.heard.startswith("AI_APICallError: Please try again later")
    # A second such line: it retried; heard at once.
    assert _heard(OPENCODE_OWN_RETRY, UNNAMED * 2).heard is not None
    # Output after it: it went on (its retry was answered); nothing pending.
    went_on = _heard(OPENCODE_OWN_RETRY, UNNAMED)
    went_on.progress()
    assert went_on.due is None
    assert not went_on.expire(float("inf"))
    assert _heard(OPENCODE_OWN_RETRY, UNNAMED.replace("small=false", "small=true")).due is None
    assert OPENCODE_OWN_RETRY.settle > 0
    assert _heard(GEMINI_OWN_RETRY, UNNAMED * 2).due is None  # Gemini has none


def test_allowed_retries_are_let_through_before_the_next_is_heard() -> None:
    twice = OwnRetry(GEMINI_OWN_RETRY.begins, GEMINI_OWN_RETRY.ends, allowed=1)
    once = OwnRetry(GEMINI_OWN_RETRY.begins, GEMINI_OWN_RETRY.ends, allowed=0)
    assert _heard(once, GEMINI_RETRY).heard is not None
    assert _heard(twice, GEMINI_RETRY).heard is None
    assert _heard(twice, GEMINI_RETRY * 2).heard is not None


def _spawn(script: str, out: Path, own: OwnRetry | None, timeout: float = 600):
    supervisor = ProcessSupervisor(grace_seconds=0.5)
    try:
        with open(out, "wb") as handle:
            return supervisor.spawn(
                ["bash", "-c", script],
                None,
                None,
                (timeout, None),
                handle.fileno(),
                out,
                time.monotonic(),
                own_retry=own,
            )
    finally:
        supervisor.close()


def test_the_first_retry_line_ends_the_cli_and_all_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    (tmp_path / "said").write_text(GEMINI_RETRY)
    script = f'sleep 1000 & echo $! > {pidfile}; echo \'{{"type":"init"}}\'; '
    script += f"cat {tmp_path / 'said'} {tmp_path / 'said'} >&2; sleep 1000"
    result = _spawn(script, tmp_path / "a.out", GEMINI_OWN_RETRY)
    assert result.exit_code == GAVE_WAY_EXIT_CODE
    assert not result.timed_out
    assert result.error is not None
    assert result.error.startswith("the agent retries a refused call itself: Attempt 1")
    assert "Retrying after 5186ms" in result.stderr  # its own words stay in its stderr
    assert '{"type":"init"}' in result.output
    grandchild = int(pidfile.read_text())
    wait_for(lambda: not pid_alive(grandchild), 5, "the CLI's child to be ended")


def test_look_alike_lines_and_a_kind_without_own_retry_end_nothing(tmp_path: Path) -> None:
    said = tmp_path / "said"
    said.write_text("".join(LOOK_ALIKES))
    result = _spawn(f"cat {said} >&2; echo done", tmp_path / "b.out", GEMINI_OWN_RETRY)
    assert (result.exit_code, result.error, result.output) == (0, None, "done\n")
    said.write_text(GEMINI_RETRY)
    result = _spawn(f"cat {said} >&2; echo done", tmp_path / "c.out", None)
    assert (result.exit_code, result.error) == (0, None)


def test_a_long_hostile_log_line_is_looked_at_in_linear_time() -> None:
    # One line of its stderr is looked at up to 64 KiB in the thread that reads the pipe,
    # holding the GIL: a pattern that backtracks over repeated fields froze the whole run,
    # its timeout too (a 26 kB line took over two minutes).
    field = 'message="stream error" error.error="AI_APICallError: '
    line = "timestamp=x level=ERROR " + field * 1300 + "\n"
    started = time.process_time()
    assert _heard(OPENCODE_OWN_RETRY, line, chunk=65536).heard is None  # names no limit
    # Two: a refusal it retried (OwnRetry.maybe), heard as such, in linear time too.
    assert _heard(OPENCODE_OWN_RETRY, line * 2, chunk=65536).heard is not None
    assert time.process_time() - started < 2


# As opencode 1.18 printed them with --print-logs --log-level INFO: the call sent again
# after a refusal (retry-after 0), and lines of its start.
OPENCODE_SENT = (
    "timestamp=2026-12-07T23:51:15.505Z level=INFO run=1c7f847a message=stream "
    "providerID=fake modelID=fake-model session.id=ses_x small=false agent=build mode=primary\n"
)
OPENCODE_INFO = (
    'timestamp=2026-12-07T23:51:07.086Z level=INFO run=1c7f847a message="creating instance" '
    "directory=/tmp/p\n"
    'timestamp=2026-12-07T23:51:12.141Z level=INFO run=1c7f847a message="shell tool using '
    'shell" shell=/bin/bash\n'
    "timestamp=2026-12-07T23:51:12.141Z level=WARN run=1c7f847a message=slow\n"
)


def test_a_refusal_opencode_sent_again_is_no_longer_heard_at_settle_but_a_second_still_is() -> None:
    sent = _heard(OPENCODE_OWN_RETRY, UNNAMED + OPENCODE_SENT)
    assert sent.due is None  # its answer may take any time: nothing pending
    assert not sent.expire(float("inf"))
    # The title's side request (small=true) is not the call sent again.
    title = _heard(OPENCODE_OWN_RETRY, UNNAMED + OPENCODE_SENT.replace("=false", "=true"))
    assert title.due is not None
    # Refused again after it: it retries; heard at once, as without the line.
    again = _heard(OPENCODE_OWN_RETRY, UNNAMED + OPENCODE_SENT + UNNAMED)
    assert again.heard is not None
    assert again.heard.startswith("AI_APICallError: Please try")
    # Before any refusal the line is its first call, nothing to clear.
    assert _heard(OPENCODE_OWN_RETRY, OPENCODE_SENT + UNNAMED).due is not None


def _settling(settle: float) -> OwnRetry:
    return dataclasses.replace(OPENCODE_OWN_RETRY, settle=settle)


def test_a_retry_sent_is_left_to_answer_however_long_it_takes(tmp_path: Path) -> None:
    """On a loaded machine the retried call's answer came after OPENCODE_SETTLE and the
    step was cut and run again (a second prompt paid): the line that says the call was
    sent again ends the settle, whatever the answer then takes."""
    (tmp_path / "said").write_text(UNNAMED + OPENCODE_SENT)
    script = f"cat {tmp_path / 'said'} >&2; sleep 1.5; echo answered"
    result = _spawn(script, tmp_path / "a.out", _settling(0.3))
    assert (result.exit_code, result.error, result.output) == (0, None, "answered\n")
    # Without the line, it waits to retry: ended at settle.
    (tmp_path / "said").write_text(UNNAMED)
    result = _spawn(script, tmp_path / "b.out", _settling(0.3))
    assert result.exit_code == GAVE_WAY_EXIT_CODE
    assert result.error is not None
    assert "Please try again later" in result.error


def _spawn_to_files(script: str, tmp_path: Path, env: dict[str, str], timeout: float):
    """*script* under the supervisor as opencode's own retry is watched (a settle that never
    comes), its stdout and stderr written to c.out and c.err under *tmp_path*."""
    supervisor = ProcessSupervisor(tail_bytes=1 << 20, grace_seconds=0.3)
    out, err = tmp_path / "c.out", tmp_path / "c.err"
    try:
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            return supervisor.spawn(
                ["bash", "-c", script],
                None,
                env,
                (timeout, None),
                stdout.fileno(),
                out,
                time.monotonic(),
                stderr.fileno(),
                own_retry=_settling(600),
            )
    finally:
        supervisor.close()


def test_quiet_lines_are_read_but_kept_from_stderr_and_its_file(tmp_path: Path) -> None:
    long_info = "timestamp=x level=INFO " + "y" * 70_000 + "\n"  # too long to hold: kept
    said = OPENCODE_INFO + UNNAMED + OPENCODE_SENT + "plain words\n" + long_info
    said += "last words"  # its last line, unended
    (tmp_path / "said").write_text(said)
    # Written 997 bytes at a time, so lines arrive split across reads.
    writer = (
        "import sys\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "for at in range(0, len(data), 997):\n"
        "    sys.stderr.buffer.write(data[at : at + 997]); sys.stderr.flush()\n"
    )
    script = f'python3 -c "$WRITER" {tmp_path / "said"}; echo out'
    err = tmp_path / "c.err"
    result = _spawn_to_files(script, tmp_path, {**os.environ, "WRITER": writer}, 600)
    kept = UNNAMED + "plain words\n" + long_info + "last words"
    assert result.stderr == kept
    assert err.read_text() == kept
    assert (result.output, result.exit_code) == ("out\n", 0)
    # An unended quiet line at the very end is kept from both too.
    (tmp_path / "said").write_text("plain\n" + OPENCODE_SENT.rstrip("\n"))
    watch = RetryWatch(OPENCODE_OWN_RETRY)
    tail = HeardTail(1000, watch)
    passed = tail.add((tmp_path / "said").read_bytes()) + tail.flush()
    assert (passed, tail.text()) == (b"plain\n", "plain\n")


def test_the_last_line_of_a_pipe_left_open_goes_to_the_file_too(tmp_path: Path) -> None:
    """A process outside the step holds its stderr open past its end (here this test,
    through /proc): no end of file, so the unended last line the tail held was in the
    step's stderr but never written to its file."""
    pid_file, ready = tmp_path / "pid", tmp_path / "ready"
    script = (
        f"echo $$ > {pid_file}; while [ ! -e {ready} ]; do sleep 0.01; done;"
        ' printf "plain\\nlast words" >&2'
    )
    held: list[int] = []

    def hold() -> None:
        wait_for(lambda: bool(pid_file.exists() and pid_file.read_text().strip()), 30)
        held.append(os.open(f"/proc/{pid_file.read_text().strip()}/fd/2", os.O_WRONLY))
        ready.touch()

    holder = threading.Thread(target=hold)
    holder.start()
    err = tmp_path / "c.err"
    try:
        result = _spawn_to_files(script, tmp_path, dict(os.environ), 60)
    finally:
        holder.join()
        for fd in held:
            os.close(fd)
    assert held  # the pipe was held open past the step's end
    assert result.stderr == "plain\nlast words"
    assert err.read_text() == "plain\nlast words"
