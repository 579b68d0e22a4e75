"""`notify:` through the console script: a real webhook server on 127.0.0.1, a real command."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.layout import HISTORY_DIR
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.notify import RunSummary

# The loop's file; FAIL=1 in its context makes it fail (exit 1, outcome `failed`).
LOOP = """\
    name: hello
    initial: greet
    context:
      fail: "0"
    states:
      greet:
        action: echo hello; [ "${context.fail}" = 0 ]
        on_success: done
        on_failure: broken
      broken:
        action: exit 3
        on_success: done
      done:
        terminal: true
    notify:
    """


@dataclass
class Hook:
    """A webhook server: answers each POST with the next of `answers` (the last repeats)."""

    answers: list[int | str] = field(default_factory=lambda: [200])  # a status, or "hang"
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    url: str = ""
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self) -> int | str:
        return self.answers[min(len(self.bodies) - 1, len(self.answers) - 1)]


@pytest.fixture
def hook() -> Iterator[Hook]:
    state = Hook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.times.append(time.monotonic())
            state.headers.append(dict(self.headers))
            state.bodies.append(json.loads(body))
            answer = state.answer()
            if answer == "hang":
                state.release.wait(30)
                return
            assert isinstance(answer, int)
            self.send_response(answer)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/secret-token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()


def _env(**extra: str) -> dict[str, str]:
    """This environment without proxies (127.0.0.1 is reached directly) or OTel settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.lower().endswith("_proxy") and not key.startswith("OTEL_")
    }
    return {**env, **extra}


def _ll_loop(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The installed `ll-loop` console script, as a user runs it."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "ll-loop"), *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(timeout),
        env=_env(),
    )


def _write(project: LoopProject, settings: str, *, fail: bool = False) -> None:
    text = LOOP.replace('fail: "0"', 'fail: "1"') if fail else LOOP
    indented = "".join(f"      {line}\n" for line in settings.splitlines())
    project.write("hello", text.rstrip(" ") + indented)


def test_the_webhook_receives_the_runs_summary(loop_project: LoopProject, hook: Hook) -> None:
    _write(loop_project, f"webhook: {hook.url}")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert (done.returncode, done.stdout) == (ExitCode.OK, "")
    assert "notify" not in done.stderr
    [body] = hook.bodies
    assert set(body) == set(RunSummary.__dataclass_fields__)
    run_id = body["run_id"]
    assert body == {
        **body,
        "loop": "hello",
        "outcome": "done",
        "terminated_by": "terminal",
        "status": "completed",
        "exit_code": 0,
        "last_state": "done",
        "passes": 1,
        "error": None,
        "report_path": f".loops/{HISTORY_DIR}/hello/{run_id}/",
        "report_command": f"ll-loop report hello --run {run_id}",
    }
    assert (loop_project.root / body["report_path"] / "run.json").is_file()
    assert hook.headers[0]["Content-Type"] == "application/json"


def test_a_500_is_retried_after_a_second_and_then_delivered(
    loop_project: LoopProject, hook: Hook
) -> None:
    hook.answers = [500, 200]
    _write(loop_project, f"webhook: {hook.url}\nretries: 3")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK
    assert "notify" not in done.stderr
    assert len(hook.bodies) == 2
    assert hook.bodies[0] == hook.bodies[1]
    assert hook.times[1] - hook.times[0] >= 1.0  # the documented backoff: 1 s, 2 s, 4 s


def test_a_server_that_always_fails_leaves_the_exit_code_and_says_so_once(
    loop_project: LoopProject, hook: Hook
) -> None:
    hook.answers = [500]
    _write(loop_project, f"webhook: {hook.url}\nretries: 2", fail=True)
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.FAILED  # the loop's own outcome: an error, no route
    assert len(hook.bodies) == 3
    assert hook.bodies[0]["outcome"] == "failed"
    assert hook.times[2] - hook.times[1] >= 2.0
    port = hook.url.split(":")[2].split("/")[0]
    notes = [line for line in done.stderr.splitlines() if "notify" in line]
    assert notes == [
        f"ll-loop: notify: the webhook http://127.0.0.1:{port} was not reached after 3 tries"
        " (HTTP 500 Internal Server Error); the run's outcome is unchanged"
    ]
    assert "secret-token" not in done.stderr


def test_a_hanging_server_times_out_each_try(loop_project: LoopProject, hook: Hook) -> None:
    hook.answers = ["hang"]
    _write(loop_project, f"webhook: {hook.url}\ntimeout: 1\nretries: 1")
    began = time.monotonic()
    done = _ll_loop(loop_project.root, "run", "hello")
    took = time.monotonic() - began
    assert done.returncode == ExitCode.OK
    assert len(hook.bodies) == 2
    assert "was not reached after 2 tries (no answer within 1s)" in done.stderr
    # Two tries of 1 s and a 1 s backoff: far less than the server's 30 s hang.
    assert took < scaled(20, at_most=25)


def test_a_client_error_is_not_retried(loop_project: LoopProject, hook: Hook) -> None:
    hook.answers = [404]
    _write(loop_project, f"webhook: {hook.url}")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK
    assert len(hook.bodies) == 1
    assert "after 1 try (HTTP 404 Not Found)" in done.stderr


def test_a_redirect_is_not_followed(loop_project: LoopProject, hook: Hook) -> None:
    hook.answers = [302]
    _write(loop_project, f"webhook: {hook.url}")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK
    assert len(hook.bodies) == 1
    assert "(HTTP 302 Found (redirects are not followed))" in done.stderr


@pytest.mark.parametrize(
    ("on", "fail", "told"),
    [
        ("[failed]", False, False),
        ("[failed]", True, True),
        ("[done, budget]", False, True),
        ("[terminal]", False, True),
        ("[error]", True, True),
    ],
)
def test_on_picks_the_outcomes_that_notify(
    loop_project: LoopProject, hook: Hook, on: str, fail: bool, told: bool
) -> None:
    _write(loop_project, f"webhook: {hook.url}\non: {on}", fail=fail)
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == (ExitCode.FAILED if fail else ExitCode.OK)
    assert len(hook.bodies) == (1 if told else 0)


def test_the_command_gets_the_outcome_in_its_environment_and_the_summary_on_stdin(
    loop_project: LoopProject,
) -> None:
    command = (
        'echo "$LL_LOOP_OUTCOME $LL_LOOP_EXIT_CODE $LL_LOOP_NAME $LL_LOOP_RUN_ID" > told;'
        " cat > summary.json; echo said"
    )
    _write(loop_project, f"command: '{command}'", fail=True)
    done = _ll_loop(loop_project.root, "run", "hello", "--json")
    assert done.returncode == ExitCode.FAILED
    assert json.loads(done.stdout)["terminated_by"] == "error"  # the command's echo: stderr
    assert "said" in done.stderr
    summary = json.loads((loop_project.root / "summary.json").read_text())
    told = (loop_project.root / "told").read_text().split()
    assert told == ["failed", "1", "hello", summary["run_id"]]
    assert summary["exit_code"] == 1
    assert summary["last_state"] == "broken"


def test_a_failing_or_slow_command_leaves_the_exit_code(loop_project: LoopProject) -> None:
    _write(loop_project, "command: exit 7")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK
    assert "ll-loop: notify: the command exited with 7; the run's outcome is unchanged" in (
        done.stderr
    )
    _write(loop_project, "command: sleep 30\ntimeout: 1")
    began = time.monotonic()
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK
    assert "ll-loop: notify: the command took longer than 1s and was stopped" in done.stderr
    assert time.monotonic() - began < scaled(20, at_most=25)  # not the command's 30 s


def test_ctrl_c_during_a_hanging_webhook_gives_it_up(loop_project: LoopProject, hook: Hook) -> None:
    hook.answers = ["hang"]
    _write(loop_project, f"webhook: {hook.url}\ntimeout: 60\nretries: 3")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ll-loop"), "run", "hello"],
        cwd=loop_project.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=_env(),
    )
    try:
        llproc.wait_for(lambda: len(hook.bodies) == 1, timeout=20, what="the webhook's POST")
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=scaled(20))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == ExitCode.OK  # the run had ended: Ctrl-C only gave up the POST
    assert "notify: the webhook" in err
    assert "was given up (interrupted)" in err
    assert len(hook.bodies) == 1


def test_a_background_run_notifies_too(loop_project: LoopProject, hook: Hook) -> None:
    _write(loop_project, f"webhook: {hook.url}")
    done = _ll_loop(loop_project.root, "run", "hello", "--background")
    assert done.returncode == ExitCode.OK, done.stderr
    llproc.wait_for(lambda: len(hook.bodies) == 1, timeout=20, what="the webhook's POST")
    assert hook.bodies[0]["outcome"] == "done"


def test_the_plan_says_who_is_told(loop_project: LoopProject) -> None:
    hook = "https://hooks.example.com/x/secret"
    _write(loop_project, f"command: echo hi\nwebhook: {hook}\non: [done]")
    done = loop_project.run("run", "hello", "--dry-run")
    assert done.code == ExitCode.OK
    assert "notify: the command and the webhook https://hooks.example.com (on: done)\n" in done.out
    _write(loop_project, "command: echo hi")
    assert "notify: the command (on: every outcome)\n" in loop_project.run("hello", "--dry-run").out


def _sleeping(pid: int) -> bool:
    """Whether *pid* (recorded by the test's command) is still that `sleep 317`."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x00317\x00"
    except OSError:
        return False


def test_what_the_command_leaves_running_neither_holds_our_pipe_nor_outlives_the_run(
    loop_project: LoopProject,
) -> None:
    command = "sleep 317 & echo $! > sleeper.pid; ps -o pgid= -p $! > sleeper.pgid; echo said"
    _write(loop_project, f"command: '{command}'")
    began = time.monotonic()
    try:
        done = subprocess.run(
            ["bash", "-c", f"{Path(sys.executable).parent / 'll-loop'} run hello 2>&1 | cat"],
            cwd=loop_project.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=scaled(60),
            env=_env(),
        )
        took = time.monotonic() - began
        assert done.returncode == ExitCode.OK, done.stdout
        assert took < scaled(30, at_most=60)  # not the sleep's 317 s
        assert "said" in done.stdout  # the command's output is still shown
        pid = int((loop_project.root / "sleeper.pid").read_text())
        assert int((loop_project.root / "sleeper.pgid").read_text()) not in (0, os.getpgid(0))
        llproc.wait_for(lambda: not _sleeping(pid), timeout=10, what="the sleep to be ended")
    finally:  # only the pid the command recorded, whatever failed above
        with contextlib.suppress(OSError, ValueError):
            pid = int((loop_project.root / "sleeper.pid").read_text())
            if _sleeping(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_commands_output_is_shown_last_64_kib(loop_project: LoopProject) -> None:
    _write(loop_project, "command: 'head -c 100000 /dev/zero | tr \"\\\\0\" x; echo; echo end'")
    done = _ll_loop(loop_project.root, "run", "hello")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "[ll-loop: the first 34469 bytes of its output were not kept]" in done.stderr
    assert done.stderr.count("x") >= 65536 - 100
    assert "end\n" in done.stderr
