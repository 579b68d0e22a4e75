"""An error shown whole (the display, `history`, `status`, `report`) is bounded: a Claude
Code that writes a megabyte of stderr, escape sequences first, does not flood the terminal."""

from __future__ import annotations

import os
from pathlib import Path

from support import llproc
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.safetext import SHOWN_CHARS

LOOP = """\
    name: huge
    initial: fix
    states:
      fix:
        action: Fix the failing test
        action_type: prompt
        on_success: done
        on_failure: done
        on_error: done
      done:
        terminal: true
"""
MEGABYTE = 1_000_000


def _env(root: Path) -> dict[str, str]:
    folder = root / "bin"
    folder.mkdir()
    fake = folder / "claude"
    fake.write_text(
        "#!/bin/bash\n"
        f"python3 -c \"import sys; sys.stderr.write('\\x1b[2J' + 'B' * {MEGABYTE} + ' END')\"\n"
        "exit 1\n"
    )
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "IS_SANDBOX": "1"}


def test_a_megabyte_error_is_shown_bounded_with_its_end(loop_project: LoopProject) -> None:
    loop_project.write("huge", LOOP)
    env = _env(loop_project.root)
    run = llproc.ll_loop(loop_project.root, "run", "huge", env=env)
    assert run.returncode == ExitCode.TERMINAL_FAILURE, run.stderr[-500:]
    shown = [run.stdout + run.stderr]
    for command in ("history", "status", "report", "resume"):
        result = llproc.ll_loop(loop_project.root, command, "huge", env=env)
        assert result.returncode == (0 if command != "resume" else ExitCode.FAILED), result.stderr
        shown.append(result.stdout + result.stderr)
    for text in shown:
        assert "\x1b" not in text
        assert "BBB" in text
        assert "characters left out" in text
        assert " END" in text  # the end of an error (often its hint) is kept
        longest = max(len(line) for line in text.splitlines())
        assert longest < SHOWN_CHARS + 300, longest
