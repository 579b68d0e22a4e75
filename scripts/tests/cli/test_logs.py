"""`ll-loop logs` (cli/logs.py): the output of a run's latest step."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled
from support.tty import run_on_a_tty

from little_loops.cli.logs import latest_step, logs_command

LOOP = """\
    name: two
    initial: first
    states:
      first:
        action: echo one; echo oops >&2
        next: second
      second:
        action: echo two
        next: done
      done:
        terminal: true
"""


def test_latest_step_of_the_run_or_of_a_state(loop_project: LoopProject) -> None:
    loop_project.write("two", LOOP)
    assert latest_step("two", None, loop_project.loops) is None
    assert loop_project.run("run", "two").code == 0
    last = latest_step("two", None, loop_project.loops)
    assert last is not None
    assert (last["event"], last["state"]) == ("action_start", "second")
    first = latest_step("two", "first", loop_project.loops)
    assert first is not None
    assert first["state"] == "first"
    assert latest_step("two", "done", loop_project.loops) is None


def test_logs_prints_stdout_then_stderr(
    loop_project: LoopProject, capsys: pytest.CaptureFixture[str]
) -> None:
    loop_project.write("two", LOOP)
    assert loop_project.run("run", "two").code == 0
    assert logs_command("two", "first", loops_dir=loop_project.loops) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("(state first, shell action) <==")
    assert out[1] == "one"
    assert out[2].endswith("(stderr) <==")
    assert out[3] == "oops"
    assert logs_command("two", "done", loops_dir=loop_project.loops) == 1
    assert capsys.readouterr().err == "ll-loop: loop 'two' has no step output of state 'done' yet\n"


HOSTILE = r"""
    name: hostile
    initial: speak
    states:
      speak:
        action: printf '\033[31mred\033[0m \033]0;owned\007 \033]52;c;ZWNobw==\007 \033[2Jend\n'
        next: done
      done:
        terminal: true
"""


def test_logs_escapes_what_an_action_printed_to_act_on_a_terminal(
    loop_project: LoopProject,
) -> None:
    loop_project.write("hostile", HOSTILE)
    assert loop_project.run("run", "hostile").code == 0
    piped = llproc.ll_loop(loop_project.root, "logs", "hostile")
    assert piped.returncode == 0, piped.stderr
    line = piped.stdout.splitlines()[1]
    # Piped: no escape byte at all; the title, clipboard and clear-screen codes shown as text.
    assert line == r"red \x1b]0;owned\x07 \x1b]52;c;ZWNobw==\x07 \x1b[2Jend"
    code, shown = run_on_a_tty(loop_project, "logs", "hostile", env={"NO_COLOR": ""})
    assert code == 0, shown
    # On a terminal the colours stay; nothing else reaches it as a control.
    assert "\x1b[31mred\x1b[0m \\x1b]0;owned\\x07 \\x1b]52;c;ZWNobw==\\x07 \\x1b[2Jend" in shown
    assert "\x1b]" not in shown
    assert "\x1b[2J" not in shown


TITLED_STATE = r"""
    name: titled
    initial: "a\e]0;owned\a"
    states:
      "a\e]0;owned\a":
        action: echo hi
        next: done
      done:
        terminal: true
"""


def test_logs_header_escapes_a_state_name_that_would_act_on_a_terminal(
    loop_project: LoopProject,
) -> None:
    loop_project.write("titled", TITLED_STATE)
    assert loop_project.run("run", "titled").code == 0
    shown = llproc.ll_loop(loop_project.root, "logs", "titled")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout
    assert "\x07" not in shown.stdout
    assert r"(state a\x1b]0;owned\x07, shell action) <==" in shown.stdout.splitlines()[0]
    missing = llproc.ll_loop(loop_project.root, "logs", "titled", "b\x1b]0;x\x07")
    assert missing.returncode == 1
    assert "\x1b" not in missing.stderr
    assert r"state 'b\x1b]0;x\x07'" in missing.stderr


LONG_LINE = 20_000_000  # one line of output with a control in it, 20 MB


def test_logs_escapes_a_long_line_in_memory_near_its_size(loop_project: LoopProject) -> None:
    loop_project.write(
        "long",
        f"""\
        name: long
        initial: a
        states:
          a:
            action: >-
              python3 -c "import sys;
              sys.stdout.write('\\\\x1b]0;t\\\\x07' + 'x' * {LONG_LINE})"
            next: done
          done:
            terminal: true
        """,
    )
    assert loop_project.run("run", "long").code == 0
    # A parent whose one child is `ll-loop logs`: its children's peak memory is that of logs.
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'little_loops.cli', 'logs', 'long'],"
        " stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "shown = done.stdout.decode().splitlines()[1]\n"
        "print(done.returncode, len(shown), shown[:14],"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure],
        cwd=loop_project.root,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=True,
    )
    code, length, start, peak_kb = done.stdout.split()
    assert (code, start) == ("0", r"\x1b]0;t\x07xx")
    assert int(length) == LONG_LINE + 12
    # Escaped in one pass of `re`: the line, its escaped copy and the interpreter; a loop per
    # character (a list of 20 million one-character strings) took over 300 MB.
    assert int(peak_kb) * 1024 < 5 * LONG_LINE + 60_000_000, peak_kb


CONCEALING = r"""
    name: concealing
    initial: speak
    states:
      speak:
        action: printf '\033[8mhidden\nshown\n\033[30;40mdark\n'
        next: done
      done:
        terminal: true
"""


def test_logs_on_a_terminal_ends_each_coloured_line_with_a_reset(
    loop_project: LoopProject,
) -> None:
    # A style a line leaves on (hidden text, black on black) would hide what follows it.
    loop_project.write("concealing", CONCEALING)
    assert loop_project.run("run", "concealing").code == 0
    code, shown = run_on_a_tty(loop_project, "logs", "concealing", env={"NO_COLOR": ""})
    assert code == 0, shown
    lines = shown.splitlines()
    assert "\x1b[8mhidden\x1b[0m" in lines
    assert "shown" in lines
    assert "\x1b[30;40mdark\x1b[0m" in lines
