"""Control characters in names, actions and outputs are shown escaped on the terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import llproc
from support.project import LoopProject

from little_loops.cli.display import ProgressDisplay, outcome_line, shorten
from little_loops.cli.history import format_event
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.safetext import one_line

HOSTILE = "a\x1b[2J\x07\r\n\x00\x7f\x9bz"
ESCAPED = "a\\x1b[2J\\x07\\r\\n\\x00\\x7f\\x9bz"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> bool:
    """No control character except the newlines that end lines."""
    return RAW.search(text) is None


def test_one_line_escapes_c0_c1_and_del_and_keeps_the_rest() -> None:
    assert one_line(HOSTILE) == ESCAPED
    assert one_line("tab\there") == "tab\\there"
    assert one_line("naïve ✓ 🚀 状態") == "naïve ✓ 🚀 状態"
    assert one_line(42) == "42"


def test_the_run_display_escapes_state_names_actions_and_errors() -> None:
    import io

    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=3)
    display({"event": "state_enter", "state": HOSTILE, "iteration": 1})
    display({"event": "action_start", "action": "printf '\x1b]0;title\x07'"})
    display({"event": "action_complete", "duration_ms": 5, "exit_code": 1})
    display({"event": "evaluate", "type": "exit_code", "verdict": "error", "error": HOSTILE})
    display({"event": "route", "reason": "verdict", "to": HOSTILE})
    display(
        {
            "event": "loop_complete",
            "final_state": HOSTILE,
            "terminated_by": "error",
            "error": HOSTILE,
            "iterations": 1,
            "duration_ms": 5,
        }
    )
    text = out.getvalue()
    assert clean(text), repr(text)
    assert ESCAPED in text
    assert "\\x1b]0;title\\x07" in text
    assert ESCAPED in outcome_line({"final_state": HOSTILE, "terminated_by": "terminal"})
    assert shorten("x\x1by") == "x\\x1by"


def test_history_lines_escape_names() -> None:
    line = format_event({"ts": "t", "event": "state_enter", "state": HOSTILE, "iteration": 1})
    assert clean(line)
    assert ESCAPED in line
    odd = format_event({"ts": "t", "event": "state_enter", "state": HOSTILE, "iteration": []})
    assert clean(odd)


HOSTILE_LOOP = """\
name: hostile
initial: "s\\e[2J\\a\\r\\n\\0\\x7f\\x9b"
states:
  "s\\e[2J\\a\\r\\n\\0\\x7f\\x9b":
    action: "printf 'out\\\\033]0;title\\\\007'; echo; exit 1"
    on_success: done
    on_failure: done
  done:
    terminal: true
max_iterations: 3
"""
SCREEN = "s\\x1b[2J\\x07\\r\\n\\x00\\x7f\\x9b"


def test_a_real_run_with_a_hostile_state_name_prints_it_escaped(
    loop_project: LoopProject,
) -> None:
    loop_project.write("hostile", HOSTILE_LOOP)
    result = loop_project.run("run", "hostile", "--no-color")
    assert clean(result.err), repr(result.err)
    assert SCREEN in result.err
    hist = loop_project.run("history", "hostile")
    assert clean(hist.out), repr(hist.out)
    assert SCREEN in hist.out


def test_validate_escapes_a_hostile_state_name_in_its_messages(
    loop_project: LoopProject,
) -> None:
    loop_project.write("bad", HOSTILE_LOOP.replace("on_failure: done", 'on_failure: "n\\e[2Jx"'))
    result = loop_project.run("validate", ".loops/bad.yaml")
    assert result.code == ExitCode.USAGE
    assert clean(result.out + result.err), repr(result.out + result.err)
    assert "n\\x1b[2Jx" in result.out


def test_a_file_system_error_names_the_file_not_its_temp_file(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(args: object) -> int:
        raise OSError(28, "No space left on device", ".loops/.running/.x.state.json.0000abcd.tmp")

    loop_project.write("x", "name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n")
    monkeypatch.setattr("little_loops.cli.validate._handler", full)
    result = loop_project.run("validate", "x")
    assert (
        result.err
        == "ll-loop: error: .loops/.running/x.state.json: No space left on device (errno 28)\n"
    )


def test_stop_escapes_a_hostile_name_typed_for_it(loop_project: LoopProject) -> None:
    result = loop_project.run("stop", "a\x9bb\x1b[2J")
    assert result.code != 0
    assert clean(result.err), repr(result.err)
    assert "'a\\x9bb\\x1b[2J'" in result.err
    assert result.err.count("\n") == 1


def test_bidi_controls_in_names_and_values_are_shown_escaped(tmp_path: Path) -> None:
    # A right-to-left override in a loop name, a file name or a value went to the terminal
    # raw, and the line read in another order than it was written.
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "bidi.yaml").write_text(
        'name: bidi\ninitial: a\nstates:\n  a:\n    action: "true"\n    next: "do\u202ene"\n'
        "  done:\n    terminal: true\n"
    )
    (loops / "ok\u2067x.yaml").write_text(
        "name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    )
    checked = llproc.console(tmp_path, "validate", "bidi")
    assert checked.returncode == ExitCode.USAGE
    assert "next: 'do\\u202ene' is not a state (did you mean done?)" in checked.stdout
    missing = llproc.console(tmp_path, "run", "no\u202eloop")
    assert missing.returncode == ExitCode.USAGE
    assert missing.stderr.startswith("ll-loop: error: no loop named 'no\\u202eloop'; looked for")
    assert missing.stderr.rstrip("\n").endswith("available: bidi, ok\\u2067x")
    for done in (checked, missing):
        assert (
            re.search("[\u200e\u200f\u202a-\u202e\u2066-\u2069]", done.stdout + done.stderr) is None
        )
