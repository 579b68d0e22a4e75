"""A sub-loop's `with:` value filled in from the parent's results is data in the child."""

from __future__ import annotations

from support import llproc
from support.project import LoopProject

CHILD = """\
name: child
parameters:
  text: string
initial: show
states:
  show:
    action: 'printf "%s\\n" "${context.text}" >> side.txt'
    next: done
  done:
    terminal: true
"""

PARENT = """\
name: parent
context:
  secret: s3cr3t
initial: read
states:
  read:
    action: "printf '%s%s %s%s' '$' '{env.HOME}' '$' '{context.secret}'"
    capture: got
    next: pass
  pass:
    loop: child
    with:
      text: "seen: ${captured.got.output}"
    on_success: done
  done:
    terminal: true
"""


def test_a_reference_in_a_captured_value_is_not_filled_in_by_the_child(
    loop_project: LoopProject,
) -> None:
    # A command's (or Claude's) output passed down with `with:` may hold `${env.TOKEN}`:
    # the child keeps it as written, as a run keeps a VALUE given on the command line.
    loop_project.write("child", CHILD)
    loop_project.write("parent", PARENT)
    result = llproc.console(loop_project.root, "run", "parent")
    assert result.returncode == 0, result.stderr
    side = (loop_project.root / "side.txt").read_text()
    assert side == "seen: ${env.HOME} ${context.secret}\n"
