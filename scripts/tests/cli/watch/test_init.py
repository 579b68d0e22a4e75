"""`ll-loop watch` itself: Textual loaded by it alone, its message without Textual, and the
view in a real terminal (tmux, 80x24) that `q` leaves sane."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

PROBE = """\
import contextlib, io, sys
if sys.argv[1] == "--without-textual":
    sys.modules["textual"] = None  # what find_spec sees when Textual is not installed
    sys.argv.pop(1)
from little_loops.cli import main_loop
err = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    code = main_loop(sys.argv[1:])
print(code, " ".join(sorted(m for m in sys.modules if sys.modules[m] is not None)))
print(err.getvalue(), file=sys.stderr)
"""


def probe(cwd: Path, *argv: str) -> tuple[int, set[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True, check=True
    )
    code, _, modules = proc.stdout.strip().partition(" ")
    return int(code), set(modules.split()), proc.stderr


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["status", "x"], ["graph", "x"]])
def test_no_other_command_loads_textual(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "x.yaml").write_text(
        "name: x\ninitial: done\nstates:\n  done:\n    terminal: true\n"
    )
    _, modules, _ = probe(tmp_path, *argv)
    assert not {m for m in modules if m.split(".")[0] in ("textual", "rich")}
    assert not {m for m in modules if m.startswith("little_loops.cli.watch.")}


def test_the_full_parser_registers_watch_without_textual(tmp_path: Path) -> None:
    code, modules, _ = probe(tmp_path, "completion", "bash")  # builds every command's parser
    assert code == ExitCode.OK
    assert "little_loops.cli.watch" in modules
    assert not {m for m in modules if m.split(".")[0] == "textual"}


def test_watch_without_textual_says_the_one_command_to_run(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    code, _, err = probe(tmp_path, "--without-textual", "watch")
    assert code == ExitCode.FAILED
    assert err.strip() == (
        "ll-loop: watch needs Textual; install it with: pip install 'little-loops[tui]'"
    )


def test_watch_without_a_terminal_says_so_and_does_not_wait(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    done = llproc.console(tmp_path, "watch")
    assert done.returncode == ExitCode.FAILED
    assert done.stderr == (
        "ll-loop: watch needs a terminal; for a script: ll-loop list --running --json\n"
    )


SLOW = """\
    name: slow
    initial: waiting
    states:
      waiting:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""


def _tmux(socket: str, *args: str) -> str:
    proc = subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=scaled(20)
    )
    return proc.stdout


def _until(check: Callable[[], bool], what: str, show: Callable[[], str]) -> None:
    deadline = time.monotonic() + scaled(30)
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the pane:\n{show()}")
        time.sleep(0.1)


COLOURS = re.compile(r"\x1b\[[0-9;]*(?:38|48)[;:][0-9;:]*m")  # a foreground or background colour


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (scripts/dev test installs it)"
)
@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "NO_COLOR"])
def test_watch_in_a_real_tmux_pane_at_80x24_then_q_leaves_the_terminal_sane(
    tmp_path: Path, marker: str, no_color: bool
) -> None:
    pytest.importorskip("textual")
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "slow.yaml").write_text(textwrap.dedent(SLOW.format(marker=marker)))
    started = llproc.console(tmp_path, "run", "slow", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    socket = f"ll-watch-{uuid.uuid4().hex[:8]}"
    ll_loop = shlex.quote(str(Path(sys.executable).parent / "ll-loop"))
    script = f"{ll_loop} watch; echo watch-exited=$?; stty -a; echo stty-done; sleep 300"
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24",
         "-c", str(tmp_path), "sh", "-c", script],
        check=True, env=env, timeout=scaled(20),
    )  # fmt: skip
    try:
        pane = lambda: _tmux(socket, "capture-pane", "-p", "-t", "0")  # noqa: E731
        _until(lambda: "slow" in pane() and "waiting" in pane(), "the run in the list", pane)
        lines = pane().splitlines()
        assert len(lines) <= 24
        assert all(len(line) <= 80 for line in lines)
        assert lines[0].split() == ["LOOP", "RUN", "STATUS", "STATE", "PASS", "ELAPSED", "COST",
                                    "WAITING"]  # fmt: skip
        assert any(line.split()[:1] == ["slow"] and "running" in line for line in lines)
        assert _tmux(socket, "display", "-p", "-t", "0", "#{alternate_on}").strip() == "1"
        styled = _tmux(socket, "capture-pane", "-p", "-e", "-t", "0")
        assert bool(COLOURS.search(styled)) is not no_color, repr(styled[:400])
        _tmux(socket, "send-keys", "-t", "0", "q")
        _until(lambda: "stty-done" in pane(), "watch to quit and stty to tell", pane)
        after = pane()
        assert "watch-exited=0" in after
        assert _tmux(socket, "display", "-p", "-t", "0", "#{alternate_on}").strip() == "0"
        flags = after.split()
        assert {"icanon", "echo", "icrnl", "opost", "isig"} <= set(flags), after
        assert "LOOP" not in after  # the view was on the alternate screen, now gone
    finally:
        _tmux(socket, "kill-server")
        llproc.console(tmp_path, "stop", "slow")
