"""DefaultActionRunner with real processes: bash, and a fake `claude` script on PATH."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from support import llproc
from support.fake_claude import shell_claude
from support.slowdown import scaled

from little_loops.fsm.actions.claude_code import CLAUDE_ROOT_ERROR
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.executor import FSMExecutor

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")

REAL_REFUSAL = (
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
)


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[DefaultActionRunner]:
    with DefaultActionRunner(cwd=tmp_path, grace_seconds=0.3) as r:
        yield r


@pytest.fixture
def marker() -> str:
    """A `sleep` duration no other process on the machine has on its command line."""
    return f"300.{random.randrange(10**8):08d}"


def survivors(marker: str, settle: float = 1.0) -> list[str]:
    """Live processes whose command line contains `marker`, after giving SIGKILL a moment."""
    needle = marker.encode()
    until = time.monotonic() + scaled(settle)
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if needle in cmdline and state != "Z":
                found.append(entry + ": " + cmdline.replace(b"\0", b" ").decode())
        if not found or time.monotonic() > until:
            return found
        time.sleep(0.02)


def test_exit_code_and_separate_streams(runner: DefaultActionRunner) -> None:
    result = runner.run(ActionRequest("echo out; echo err >&2; exit 3", 10, "shell"))
    assert (result.output, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert (result.error, result.timed_out, result.truncated) == (None, False, False)
    assert result.duration_ms >= 0


def test_action_result_keeps_the_seed_positional_fields() -> None:
    # Test doubles written against the original four-field ActionResult must keep working.
    result = ActionResult("out", "err", 1, 5)
    assert (result.output, result.stderr, result.exit_code, result.duration_ms) == (
        "out",
        "err",
        1,
        5,
    )
    assert (result.truncated, result.output_path, result.timed_out, result.error) == (
        False,
        None,
        False,
        None,
    )


def test_death_by_signal_is_128_plus_signal(runner: DefaultActionRunner) -> None:
    assert runner.run(ActionRequest("kill -KILL $$", 10, "shell")).exit_code == 137


def test_runs_in_the_working_directory_with_env_overlay(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with DefaultActionRunner(cwd=tmp_path) as runner:
        assert runner.run(ActionRequest("pwd", 10, "shell")).output == f"{tmp_path}\n"
        request = ActionRequest('pwd; echo "$LL_X"', 10, "shell", cwd=other, env={"LL_X": "y"})
        assert runner.execute(request).output == f"{other}\ny\n"


def test_five_megabytes_on_both_streams_at_once(tmp_path: Path) -> None:
    action = (
        "head -c 5000000 /dev/zero | tr '\\0' o & head -c 5000000 /dev/zero | tr '\\0' e >&2; wait"
    )
    started = time.monotonic()
    with DefaultActionRunner(cwd=tmp_path, tail_bytes=8 * 1024 * 1024) as runner:
        result = runner.run(ActionRequest(action, 20, "shell"))
    assert time.monotonic() - started < scaled(5, at_most=15)  # not the 20 s timeout
    assert result.exit_code == 0
    assert result.output == "o" * 5_000_000
    assert result.stderr == "e" * 5_000_000


def test_timeout_kills_the_whole_group_and_keeps_stderr(
    runner: DefaultActionRunner, marker: str
) -> None:
    started = time.monotonic()
    result = runner.run(
        ActionRequest(f"echo said >&2; sleep {marker} & sleep {marker}", 0.5, "shell")
    )
    assert time.monotonic() - started < scaled(1.5)
    assert result.exit_code == 124
    assert result.timed_out
    assert result.error == "action timed out after 500ms"
    assert result.stderr == "said\nll-loop: action timed out after 500ms\n"
    assert survivors(marker) == []


def test_timeout_escalates_to_sigkill_after_grace(runner: DefaultActionRunner, marker: str) -> None:
    started = time.monotonic()
    result = runner.run(
        ActionRequest(f"trap '' TERM; sleep {marker} & sleep {marker}; sleep 1", 0.3, "shell")
    )
    elapsed = time.monotonic() - started
    # timeout 0.3 + grace 0.3: TERM was ignored, KILL was not
    assert 0.6 <= elapsed < scaled(2)
    assert result.exit_code == 124
    assert survivors(marker) == []


def test_background_child_does_not_hold_up_a_finished_action(
    runner: DefaultActionRunner, marker: str
) -> None:
    started = time.monotonic()
    result = runner.run(ActionRequest(f"sleep {marker} & echo hi", 30, "shell"))
    assert time.monotonic() - started < scaled(1, at_most=20)  # not the 30 s timeout
    assert (result.output, result.exit_code, result.error) == ("hi\n", 0, None)
    assert survivors(marker) == []


def test_background_child_with_redirected_output_is_ended_too(
    runner: DefaultActionRunner, marker: str
) -> None:
    result = runner.run(ActionRequest(f"sleep {marker} >/dev/null 2>&1 & echo hi", 30, "shell"))
    assert (result.output, result.exit_code) == ("hi\n", 0)
    assert survivors(marker) == []


def test_idle_timeout_kills_a_silent_action(runner: DefaultActionRunner, marker: str) -> None:
    started = time.monotonic()
    result = runner.execute(
        ActionRequest(f"echo start; sleep {marker}", 30, "shell", idle_timeout=0.5)
    )
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed < scaled(2.5, at_most=20)  # not the 30 s timeout
    assert (result.output, result.exit_code, result.timed_out) == ("start\n", 124, True)
    assert result.error == "action printed nothing for 500ms (idle_timeout)"
    assert survivors(marker) == []


def test_idle_timeout_spares_a_chatty_action(runner: DefaultActionRunner) -> None:
    action = "for i in 1 2 3 4 5 6 7 8; do echo $i >&2; sleep 0.1; done"
    # A line every 0.1 s, and a limit five times that (longer where starting `sleep` is slow).
    result = runner.execute(ActionRequest(action, 30, "shell", idle_timeout=scaled(0.5)))
    assert (result.exit_code, result.error) == (0, None)
    assert result.stderr == "".join(f"{i}\n" for i in range(1, 9))


def test_tail_is_bounded_and_the_file_has_everything(tmp_path: Path) -> None:
    count = 2_800_000  # `seq` prints about 20 MB
    out_file = tmp_path / ".loops" / ".running" / "loop.state.out"
    with DefaultActionRunner(cwd=tmp_path, tail_bytes=1024 * 1024) as runner:
        tracemalloc.start()
        try:
            result = runner.execute(
                ActionRequest(f"seq {count}", 30, "shell", output_file=out_file)
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    expected = "".join(f"{i}\n" for i in range(1, count + 1)).encode()
    assert len(expected) > 20_000_000
    assert peak < 6 * 1024 * 1024
    assert result.truncated
    assert result.output_path == str(out_file)
    assert out_file.read_bytes() == expected
    assert result.output.encode() == expected[-1024 * 1024 :]


def test_keep_output_false_writes_no_file(tmp_path: Path) -> None:
    out_file = tmp_path / "out"
    with DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path, keep_output=False) as runner:
        result = runner.execute(ActionRequest("echo hi", 10, "shell", output_file=out_file))
    assert (result.output, result.output_path) == ("hi\n", None)
    assert list(tmp_path.iterdir()) == []


def test_output_dir_receives_stdout_by_default(tmp_path: Path) -> None:
    with DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path / "running") as runner:
        result = runner.run(ActionRequest("echo hi", 10, "shell"))
    assert result.output_path is not None
    assert Path(result.output_path).parent == tmp_path / "running"
    assert Path(result.output_path).read_text() == "hi\n"
    assert not result.truncated


def test_unwritable_output_file_is_an_error_result(
    runner: DefaultActionRunner, tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("")
    target = tmp_path / "afile" / "out"
    result = runner.execute(ActionRequest("touch ran", 10, "shell", output_file=target))
    assert result.exit_code == 126
    assert result.error == f"cannot write action output to {target}: Not a directory"
    assert not (tmp_path / "ran").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_file_failing_midway_keeps_the_result(runner: DefaultActionRunner) -> None:
    full = Path("/dev/full")
    result = runner.execute(ActionRequest("echo hi", 10, "shell", output_file=full))
    assert (result.output, result.exit_code, result.error) == ("hi\n", 0, None)
    assert result.output_path is None
    assert result.stderr == (
        "ll-loop: cannot write action output to /dev/full: No space left on device\n"
    )


def test_truncated_tail_does_not_start_inside_a_character(tmp_path: Path) -> None:
    with DefaultActionRunner(cwd=tmp_path, tail_bytes=1001) as runner:
        result = runner.run(ActionRequest("for i in $(seq 2000); do printf 'é'; done", 10, "shell"))
    assert result.truncated
    assert result.output == "é" * 500


def test_non_utf8_output_is_replaced(runner: DefaultActionRunner) -> None:
    result = runner.run(ActionRequest("printf 'a\\377b'; printf 'c\\376' >&2", 10, "shell"))
    assert (result.output, result.stderr) == ("a\ufffdb", "c\ufffd")


def once_running(started: Path, then: Callable[[], object]) -> threading.Thread:
    """A thread that calls *then* once the action has made the file *started*."""

    def wait_then() -> None:
        llproc.wait_for(started.exists, 10, "the action to start")
        then()

    thread = threading.Thread(target=wait_then, daemon=True)
    thread.start()
    return thread


def test_cancel_from_another_thread(
    runner: DefaultActionRunner, marker: str, tmp_path: Path
) -> None:
    once_running(tmp_path / "started", runner.cancel)
    started = time.monotonic()
    result = runner.run(
        ActionRequest(f"echo up; touch started; sleep {marker} & sleep {marker}", 30, "shell")
    )
    assert time.monotonic() - started < scaled(1.5, at_most=20)  # not the 30 s timeout
    assert (result.output, result.exit_code) == ("up\n", 143)
    assert result.error == "action cancelled (stopped)"
    assert survivors(marker) == []


def test_cancel_from_a_signal_handler(
    runner: DefaultActionRunner, marker: str, tmp_path: Path
) -> None:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        runner.cancel("interrupted")

    previous = signal.signal(signal.SIGUSR1, on_signal)
    try:
        sender = once_running(tmp_path / "started", lambda: os.kill(os.getpid(), signal.SIGUSR1))
        started = time.monotonic()
        result = runner.run(ActionRequest(f"touch started; sleep {marker}", 30, "shell"))
        assert time.monotonic() - started < scaled(1.5, at_most=20)  # not the 30 s timeout
    finally:
        sender.join()
        signal.signal(signal.SIGUSR1, previous)
    assert (result.exit_code, result.error) == (130, "action cancelled (interrupted)")
    assert survivors(marker) == []


def test_cancel_is_sticky_until_reset(runner: DefaultActionRunner, tmp_path: Path) -> None:
    runner.cancel("stopped")
    result = runner.run(ActionRequest("touch ran", 10, "shell"))
    assert (result.exit_code, result.error) == (143, "action cancelled (stopped)")
    assert not (tmp_path / "ran").exists()
    assert runner.cancelled == "stopped"
    runner.reset()
    assert runner.run(ActionRequest("touch ran", 10, "shell")).exit_code == 0
    assert (tmp_path / "ran").exists()


def test_prompt_reaches_claude_with_the_right_argv(
    runner: DefaultActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "argv"
    shell_claude(
        tmp_path, monkeypatch, f'printf "%s\\0" "$@" > {record}; pwd >> {record}; echo answered'
    )
    state = StateConfig(action="Analyze the test failures", action_type="prompt")
    assert state.action is not None

    result = runner.run(ActionRequest(state.action, 10, state.action_kind().name))

    assert (result.output, result.exit_code) == ("answered\n", 0)
    *argv, cwd = record.read_text().split("\0")
    assert argv == [
        "--dangerously-skip-permissions",
        "--output-format",
        "stream-json",
        "--verbose",
        "-p",
        "--",
        "Analyze the test failures",
    ]
    assert cwd == f"{tmp_path}\n"


def test_missing_claude_is_an_error_result(
    runner: DefaultActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = runner.run(ActionRequest("/ll:help", 10, "claude"))
    assert result.exit_code == 127
    assert result.error == (
        "claude: command not found on PATH "
        "(install Claude Code: npm install -g @anthropic-ai/claude-code)"
    )


def test_missing_bash_is_an_error_result(
    runner: DefaultActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = runner.run(ActionRequest("true", 10, "shell"))
    assert (result.exit_code, result.error) == (127, "bash: command not found on PATH")


def test_missing_working_directory_is_an_error_result(tmp_path: Path) -> None:
    with DefaultActionRunner(cwd=tmp_path / "gone") as runner:
        result = runner.run(ActionRequest("true", 10, "shell"))
    assert result.exit_code == 127
    assert result.error == f"working directory not found: {tmp_path / 'gone'}"


def test_claude_refusing_root_names_is_sandbox(
    runner: DefaultActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell_claude(tmp_path, monkeypatch, f"echo '{REAL_REFUSAL}' >&2; exit 1")
    result = runner.run(ActionRequest("fix it", 10, "claude"))
    assert result.exit_code == 1
    assert result.error == CLAUDE_ROOT_ERROR
    assert result.error == (
        "claude refuses --dangerously-skip-permissions as root; "
        "set IS_SANDBOX=1 in a sandbox, or run as a normal user"
    )


def test_same_text_from_a_shell_action_is_not_a_claude_refusal(
    runner: DefaultActionRunner,
) -> None:
    result = runner.run(ActionRequest(f"echo '{REAL_REFUSAL}' >&2; exit 1", 10, "shell"))
    assert (result.exit_code, result.error) == (1, None)


@pytest.mark.skipif(sys.platform != "linux", reason="counts descriptors in /proc/self/fd")
def test_no_descriptor_leak(
    runner: DefaultActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner.run(ActionRequest("true", 10, "shell"))
    before = len(os.listdir("/proc/self/fd"))
    for action in ("true", "exit 3", "sleep 5"):
        runner.run(ActionRequest(action, 0.2, "shell"))
    monkeypatch.setenv("PATH", str(tmp_path))
    runner.run(ActionRequest("true", 10, "claude"))  # claude not found
    assert len(os.listdir("/proc/self/fd")) == before


# --- moved from test_qa_regressions.py ---


def test_a_nul_byte_in_an_action_is_an_error_result(tmp_path: Path) -> None:
    result = DefaultActionRunner(cwd=tmp_path).run(ActionRequest("echo a\0b", 5, "shell"))
    assert (result.exit_code, result.error) == (
        126,
        "the action contains a NUL byte, which a command line cannot carry",
    )


# --- moved from test_spend.py ---


class TestIdleTimeout:
    def test_silent_action_is_killed_within_two_seconds_of_the_limit(self, tmp_path: Path) -> None:
        fsm = FSMLoop(
            name="idle",
            initial="wait",
            states={
                "wait": StateConfig(action="sleep 30", idle_timeout=0.5, on_error="done"),
                "done": StateConfig(terminal=True),
            },
        )
        events: list[dict[str, Any]] = []
        started = time.monotonic()
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        # The limit, then `sleep` ends at SIGTERM (the 2 s grace is for what ignores it).
        assert time.monotonic() - started < 0.5 + scaled(2.0, at_most=20)
        assert result.final_state == "done"
        complete = next(e for e in events if e["event"] == "action_complete")
        assert complete["exit_code"] == 124
        assert complete["error"] == "action printed nothing for 500ms (idle_timeout)"
        assert next(e for e in events if e["event"] == "evaluate")["verdict"] == "error"

    def test_loop_default_applies_and_chatty_action_survives(self, tmp_path: Path) -> None:
        fsm = FSMLoop(
            name="idle",
            initial="chatty",
            states={
                "chatty": StateConfig(
                    action="for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done",
                    on_success="silent",
                ),
                "silent": StateConfig(action="sleep 30", on_error="done"),
                "done": StateConfig(terminal=True),
            },
            idle_timeout=scaled(0.6),  # a line every 0.2 s (longer on a slower machine)
        )
        events: list[dict[str, Any]] = []
        FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        codes = [e["exit_code"] for e in events if e["event"] == "action_complete"]
        assert codes == [0, 124]


def test_a_claude_session_s_tool_calls_come_with_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"pytest -q"}}]}}'  # noqa: E501
    answer = '{"type":"user","message":{"content":[{"type":"tool_result","content":"3 passed"}]}}'
    report = '{"type":"result","result":"Fixed","total_cost_usd":0.01}'
    shell_claude(tmp_path, monkeypatch, f"echo '{call}'; echo '{answer}'; echo '{report}'")
    expected = ['→ Bash {"command": "pytest -q"}', "← 3 passed"]
    out = tmp_path / "fix.out"
    with DefaultActionRunner(cwd=tmp_path) as runner:  # all of stdout goes to the file
        from_file = runner.execute(ActionRequest("/fix", 10, "claude", output_file=out))
    with DefaultActionRunner(cwd=tmp_path, keep_output=False) as runner:  # only in memory
        in_memory = runner.execute(ActionRequest("/fix", 10, "claude"))
    for result in (from_file, in_memory):
        assert (result.output, result.tool_calls) == ("Fixed", expected)
    assert from_file.output_path == str(out)


def test_a_prompt_on_stdin_without_an_output_file_goes_through_a_temporary_file(
    tmp_path: Path,
) -> None:
    import dataclasses
    import glob
    import tempfile

    from little_loops.fsm.actions.registry import KINDS
    from little_loops.fsm.actions.spec import PromptInput

    def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
        return ["bash", "-c", 'wc -c; echo "file=${LL_PROMPT_FILE:-none}"']

    spec = dataclasses.replace(
        KINDS["shell"], name="reader", argv=argv, prompt_input=PromptInput.STDIN
    )
    before = set(glob.glob(f"{tempfile.gettempdir()}/ll-loop-*.prompt"))
    runner = DefaultActionRunner(keep_output=False)
    big = "y" * (3 * 1024 * 1024)
    result = runner.execute(ActionRequest(big, 60, "reader", spec=spec))
    assert result.exit_code == 0, result.stderr
    assert result.output.split() == [str(len(big)), "file=none"]
    assert set(glob.glob(f"{tempfile.gettempdir()}/ll-loop-*.prompt")) == before  # removed
    as_file = dataclasses.replace(spec, prompt_input=PromptInput.FILE)
    argv_file = ["bash", "-c", 'cat "$LL_PROMPT_FILE"']
    as_file = dataclasses.replace(as_file, argv=lambda request, program: argv_file)
    out = tmp_path / "x.out"
    result = runner.execute(
        ActionRequest("the 'prompt'", 60, "reader", output_file=out, spec=as_file)
    )
    assert result.output == "the 'prompt'"


def test_a_program_that_reads_pwd_gets_the_folder_it_runs_in(tmp_path: Path) -> None:
    # printenv is no shell: it reports $PWD as it was handed (bash would reset it itself).
    where = tmp_path / "worktree"
    where.mkdir()
    runner = DefaultActionRunner(keep_output=False, commands={"shell": ("printenv",)})
    result = runner.execute(ActionRequest("PWD", timeout=30, kind="shell", cwd=where))
    assert result.output.strip() == str(where)
    values = runner.execute(
        ActionRequest("PWD", timeout=30, kind="shell", cwd=where, env={"LL_V_1": "x"})
    )
    assert values.output.strip() == str(where)


def test_bash_sets_pwd_itself_so_it_is_handed_our_environment_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Encoding every variable for a child at each step was a fifth of a step's cost: bash
    corrects a stale $PWD and exports it, so a shell step gets no PWD of ours."""
    where = tmp_path / "worktree"
    where.mkdir()
    monkeypatch.setenv("PWD", str(tmp_path / "elsewhere"))
    runner = DefaultActionRunner(keep_output=False)
    handed: list[object] = []
    spawn = runner.spawn

    def spying(argv, cwd, env, *rest, **named):  # type: ignore[no-untyped-def]
        handed.append(env)
        return spawn(argv, cwd, env, *rest, **named)

    monkeypatch.setattr(runner, "spawn", spying)
    script = 'echo "$PWD"; python3 -c "import os; print(os.environ[\'PWD\'])"'
    result = runner.execute(ActionRequest(script, timeout=30, kind="shell", cwd=where))
    assert result.output.split() == [str(where), str(where)]  # bash's, and its child's
    assert handed == [None]
    # Values for bash are laid over, still without PWD.
    result = runner.execute(
        ActionRequest(script, timeout=30, kind="shell", cwd=where, env={"LL_V_1": "x"})
    )
    assert result.output.split() == [str(where), str(where)]
    assert "PWD" not in dict(handed[1].extra)  # type: ignore[attr-defined]
