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


LIST_CHILD = """\
name: lister
parameters:
  files: list
context:
  who: child-value
initial: show
states:
  show:
    action: 'echo "${context.files.0} ${context.files}" >> side.txt'
    next: done
  done:
    terminal: true
"""


def test_a_lists_items_are_filled_in_by_the_parent_and_are_data_in_the_child(
    loop_project: LoopProject,
) -> None:
    # Was: the items were passed as written and the child filled `${context.who}` in
    # with its own value when indexed (and a captured `${env.HOME}` with the real one).
    loop_project.write("lister", LIST_CHILD)
    loop_project.write(
        "parent",
        """\
        name: parent
        context: {who: parent-value}
        initial: read
        states:
          read:
            action: "printf '%s%s' '$' '{env.HOME}'"
            capture: got
            next: pass
          pass:
            loop: lister
            with: {files: ["${context.who}", "${captured.got.output}"]}
            on_success: done
          done:
            terminal: true
        """,
    )
    result = llproc.console(loop_project.root, "run", "parent")
    assert result.returncode == 0, result.stderr
    shown = (loop_project.root / "side.txt").read_text()
    assert shown == "parent-value parent-value ${env.HOME}\n"
