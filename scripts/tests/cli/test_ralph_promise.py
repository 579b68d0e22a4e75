"""The ralph paradigm matches its promise as written, not as a regular expression."""

from __future__ import annotations

import pytest
from support import llproc
from support.fake_claude import shell_claude
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

RALPH = """\
    paradigm: ralph
    name: rl
    prompt: Do the thing.
    promise: "[DONE]"
    max_iterations: 2
"""


@pytest.mark.parametrize(
    ("answer", "code", "passes"),
    [
        ("Nope, not finished yet.", ExitCode.MAX_ITERATIONS, "2 iterations"),
        ("All good. [DONE]", ExitCode.OK, "1 iteration"),
    ],
)
def test_a_promise_with_brackets_is_made_only_when_written(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch, answer: str, code: int, passes: str
) -> None:
    """`[DONE]` as a regular expression matches any output holding D, O, N or E: the loop
    ended at its first pass although Claude said it was not finished."""
    report = (
        '{"type":"result","subtype":"success","is_error":false,'
        f'"result":"{answer}","total_cost_usd":0,"num_turns":1}}'
    )
    shell_claude(loop_project.root, monkeypatch, f"echo '{report}'")
    loop_project.write("rl", RALPH)
    result = llproc.console(loop_project.root, "run", "rl")
    assert result.returncode == code, result.stderr
    assert f"({passes}," in result.stdout + result.stderr
