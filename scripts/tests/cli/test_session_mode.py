"""`session_mode: continue`: a prompt starts with the result of the previous prompt of the
chain (shell states between are transparent; a `fresh` prompt breaks it). A fake `claude`
on PATH records each prompt it is given."""

from __future__ import annotations

import pytest
from support import llproc
from support.fake_claude import shell_claude
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

# Each call appends its prompt to prompts.log (a line of `=` after each) and says what it did.
RECORDING = 'printf "%s\\n=====\\n" "${@: -1}" >> prompts.log; echo "did ${@: -1}"'

CHAIN = """\
name: chain
session_mode: continue
initial: one
states:
  one:
    action: /first
    next: gate
  gate:
    action: "true"
    next: two
  two:
    action: /second
    next: three
  three:
    action: /third
    session_mode: fresh
    next: four
  four:
    action: /fourth
    next: done
  done:
    terminal: true
"""


def test_continuing_prompts_get_the_previous_result(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell_claude(loop_project.root, monkeypatch, RECORDING, shell="bash")
    loop_project.write("chain", CHAIN)
    result = llproc.console(loop_project.root, "run", "chain")
    assert result.returncode == ExitCode.OK, result.stderr
    prompts = (loop_project.root / "prompts.log").read_text().split("\n=====\n")[:-1]
    assert prompts[0] == "/first"
    assert prompts[1] == (
        "## Continuity summary from the prior chained state\n\ndid /first\n\n---\n\n/second"
    )
    assert prompts[2] == "/third"  # fresh: no summary, and it hands none on
    assert prompts[3] == "/fourth"


def test_without_session_mode_each_prompt_starts_fresh(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell_claude(loop_project.root, monkeypatch, RECORDING, shell="bash")
    loop_project.write("chain", CHAIN.replace("session_mode: continue\n", ""))
    result = llproc.console(loop_project.root, "run", "chain")
    assert result.returncode == ExitCode.OK, result.stderr
    prompts = (loop_project.root / "prompts.log").read_text().split("\n=====\n")[:-1]
    assert prompts == ["/first", "/second", "/third", "/fourth"]
