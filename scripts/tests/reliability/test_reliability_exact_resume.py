"""A resume after SIGKILL at an exact write of the event log decides as the run would have:
the output judged byte for byte, a recorded stall taken, a sub-loop's child gone on in, an
approval's answer taken once."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import killwrite

from little_loops.fsm.facts.outcomes import Outcome

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(killwrite.STRACE is None, reason="needs strace (scripts/dev setup)"),
]

NEWLINES = """\
name: nl
initial: a
states:
  a:
    action: "printf 'line1\\\\n\\\\n'"
    evaluate:
      type: output_contains
      pattern: "line1\\n\\n"
    on_success: good
    on_failure: bad
  good:
    terminal: true
  bad:
    terminal: true
    outcome: failure
"""

# No trailing newline: the stall alone is at stake.
STALL = """\
name: st
initial: a
states:
  a:
    action: "echo a >> effects.txt; echo same"
    evaluate:
      type: exit_code
    on_success: a
    stall:
      same_result: 2
      on_stall: out
  out:
    action: "echo out >> effects.txt"
    terminal: true
"""

PARENT = """\
name: parent
initial: sub
states:
  sub:
    loop: inner
    on_success: done
  done:
    terminal: true
"""

INNER = """\
name: inner
initial: c1
states:
  c1:
    action: "echo c1 >> effects.txt"
    next: c2
  c2:
    action: "echo c2 >> effects.txt"
    next: end
  end:
    terminal: true
"""

APPROVAL = """\
name: ap
initial: ask
states:
  ask:
    action_type: approval
    action: "ship it?"
    on_success: ship
  ship:
    action: "echo ship >> effects.txt"
    terminal: true
"""


def project(root: Path, **loops: str) -> Path:
    (root / ".loops").mkdir(parents=True)
    for name, text in loops.items():
        (root / ".loops" / f"{name}.yaml").write_text(text)
    return root


def writes_of(root: Path, name: str) -> int:
    """The writes to the log of an uninterrupted run of *name* (every kill point)."""
    ran = killwrite.drive(root, name)
    assert ran.writes > 3, ran.outputs
    return ran.writes


def test_the_output_is_judged_byte_for_byte_after_a_kill(tmp_path: Path) -> None:
    """Killed after `action_complete`, the resume judged `line1\\n\\n` chomped: failure."""
    for k in range(1, writes_of(project(tmp_path / "whole", nl=NEWLINES), "nl") + 1):
        root = project(tmp_path / f"k{k}", nl=NEWLINES)
        killwrite.drive(root, "nl", kill_at=k)
        state = killwrite.store(root, "nl").load_state()
        assert state is not None
        assert (state.current_state, state.terminated_by) == ("good", Outcome.TERMINAL), k


def test_a_recorded_stall_is_taken_after_a_kill(tmp_path: Path) -> None:
    """Killed right after the `stall` event, the resume judged the state again with the
    count started over and ran it more times before the stall came again."""
    whole = project(tmp_path / "whole", st=STALL)
    writes = writes_of(whole, "st")
    assert killwrite.effects(whole) == ["a", "a", "out"]
    for k in range(1, writes + 1):
        root = project(tmp_path / f"k{k}", st=STALL)
        done = killwrite.drive(root, "st", kill_at=k)
        got = killwrite.effects(root)
        assert killwrite.allowed(["a", "a", "out"], got, done.rerun), (k, got, done.rerun)


def test_a_killed_resume_keeps_the_sub_loops_child(tmp_path: Path) -> None:
    """A resume killed right after its own `loop_start` saved `child: null`: the next one
    started the child over, and its finished actions ran again."""
    loops = {"parent": PARENT, "inner": INNER}
    writes = writes_of(project(tmp_path / "whole", **loops), "parent")
    for k in range(1, writes + 1):
        root = project(tmp_path / f"k{k}", **loops)
        done = killwrite.drive(root, "parent", kill_at=k, then_at=2)
        got = killwrite.effects(root)
        assert killwrite.allowed(["c1", "c2"], got, done.rerun), (k, got, done.rerun)


def test_an_approval_answer_is_taken_once_whatever_the_kill(tmp_path: Path) -> None:
    """Killed as the answer's `approval` event was written, the answer was gone (its file
    removed first) and the run asked again; killed just after it, the resume entered the
    approval state again and asked a new question. `drive` answers once and fails when a
    run asks again after taking the answer."""
    writes = writes_of(project(tmp_path / "whole", ap=APPROVAL), "ap")
    for k in range(1, writes + 1):
        root = project(tmp_path / f"k{k}", ap=APPROVAL)
        done = killwrite.drive(root, "ap", kill_at=k)
        assert killwrite.allowed(["ship"], killwrite.effects(root), done.rerun), k
        assert not (root / ".loops" / ".running" / "ap.approval.json").exists(), k
