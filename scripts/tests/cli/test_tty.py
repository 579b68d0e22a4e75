"""A terminal session (a real pty): the live ticker and colours on a TTY, none with NO_COLOR
or on a dumb terminal."""

from __future__ import annotations

import pytest
from support.project import LoopProject
from support.tty import run_on_a_tty

SLEEPY = """\
    name: sleepy
    initial: wait
    states:
      wait:
        action: sleep 0.4
        on_success: done
      done:
        terminal: true
"""
COLOURS = ("\033[32m", "\033[31m", "\033[1m", "\033[2m")


@pytest.fixture
def sleepy(loop_project: LoopProject) -> LoopProject:
    loop_project.write("sleepy", SLEEPY)
    return loop_project


def test_live_ticker_and_colours_on_a_tty(sleepy: LoopProject) -> None:
    code, screen = run_on_a_tty(sleepy, "run", "sleepy", env={"NO_COLOR": ""})
    assert code == 0
    assert "\r       ⠋ running " in screen  # the spinner with the elapsed time
    assert "⠙ running " in screen  # ... redrawn while the action runs
    assert "\r\033[K" in screen  # and cleared before the verdict line
    assert "\033[1mwait\033[0m → sleep 0.4" in screen
    assert "\033[32m✓\033[0m success (exit 0)" in screen
    assert "\033[32mLoop completed: done (1 iteration, " in screen


@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_colour_with_no_color(sleepy: LoopProject, how: str) -> None:
    if how == "NO_COLOR":
        code, screen = run_on_a_tty(sleepy, "run", "sleepy", env={"NO_COLOR": "1"})
    else:
        code, screen = run_on_a_tty(sleepy, "run", "sleepy", "--no-color", env={"NO_COLOR": ""})
    assert code == 0
    assert not any(colour in screen for colour in COLOURS)
    assert "[1/50] wait → sleep 0.4" in screen
    assert "✓ success (exit 0)" in screen
    assert "⠋ running " in screen  # still live: only the colours go


def test_quiet_on_a_tty_has_no_ticker(sleepy: LoopProject) -> None:
    code, screen = run_on_a_tty(sleepy, "run", "sleepy", "--quiet", env={"NO_COLOR": ""})
    assert code == 0
    assert "running" not in screen
    assert screen.strip().endswith("\033[0m")
    assert "Loop completed: done (1 iteration, " in screen


def test_a_dumb_terminal_gets_no_escape_sequences(sleepy: LoopProject) -> None:
    # TERM=dumb (Emacs' shell, some CI logs) shows escapes as text: neither colours nor the
    # ticker, whose line is redrawn with one; the lines are those NO_COLOR gives.
    code, screen = run_on_a_tty(sleepy, "run", "sleepy", env={"NO_COLOR": "", "TERM": "dumb"})
    assert code == 0
    assert "\033" not in screen, screen
    assert "running" not in screen
    assert "[1/50] wait → sleep 0.4" in screen
    assert "✓ success (exit 0)" in screen
    assert "Loop completed: done (1 iteration, " in screen
