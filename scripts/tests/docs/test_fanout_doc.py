"""docs/loop-files.md's fan-out example (`map:` of fix-one over three modules) run for real:
three children in their own worktrees, each given its item and `with:` value, all merged."""

from __future__ import annotations

from pathlib import Path

from support.doc_blocks import all_blocks
from support.gitrepo import loops_project
from support.llproc import ll_loop, state

# The child the example names: it declares the item's key (`as: module`) and `attempts`.
FIX_ONE = """\
name: fix-one
context:
  module: ""
  attempts: "1"
initial: fix
states:
  fix:
    action: echo "${context.module} fixed in ${context.attempts}" > ${context.module}.txt
    next: done
  done:
    terminal: true
"""


def test_the_fix_each_example_maps_its_items_and_merges_them(tmp_path: Path) -> None:
    (block,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: fix-each")]
    root = loops_project(
        tmp_path, {".loops/fix-each.yaml": block.text, ".loops/fix-one.yaml": FIX_ONE}
    )
    done = ll_loop(root, "run", "fix-each", timeout=120)
    assert done.returncode == 0, done.stderr
    for module in ("parser", "lexer", "printer"):
        assert (root / f"{module}.txt").read_text() == f"{module} fixed in 3\n"
    result = state(root, "fix-each")["captured"]["fix"]
    assert result["verdict"] == "success"
    assert len(result["merged"]) == 3
    assert state(root, "fix-each")["current_state"] == "done"
