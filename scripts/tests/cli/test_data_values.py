"""A value given to a run is data all through: in a list's items and a mapping's values too."""

from __future__ import annotations

import json

from support import llproc
from support.project import LoopProject

LOOP = """\
name: show
parameters:
  files:
    type: list
    default: []
context:
  cfg: {}
initial: show
states:
  show:
    action: 'echo "${context.files.0}|${context.files}|${context.cfg.a}|${context.cfg}" >> side.txt'
    next: done
  done:
    terminal: true
"""


def test_items_given_by_set_or_a_context_file_are_never_filled_in(
    loop_project: LoopProject,
) -> None:
    # Was: `${context.files.0}` and `${context.cfg.a}` filled in the given `${env.HOME}`.
    loop_project.write("show", LOOP)
    given = loop_project.root / "given.json"
    given.write_text(json.dumps({"cfg": {"a": "${env.HOME}"}}))
    result = llproc.console(
        loop_project.root,
        "run",
        "show",
        "--set",
        "files=${env.HOME},b",
        "--context-file",
        str(given),
    )
    assert result.returncode == 0, result.stderr
    line = (loop_project.root / "side.txt").read_text()
    assert line == '${env.HOME}|${env.HOME} b|${env.HOME}|{"a": "${env.HOME}"}\n'
