"""docs/loop-files.md's fan-out example (`map:` of fix-one over three modules) run for real:
three children in their own worktrees, each given its item and `with:` value, all merged."""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from pathlib import Path

from support.doc_blocks import all_blocks
from support.gitrepo import loops_project
from support.llproc import ll_loop, start, state
from support.paths import REPO
from support.slowdown import scaled

# The child the example names, as the doc shows it: it declares the item's key (`as: module`)
# and `attempts`.
(_CHILD,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: fix-one")]
FIX_ONE = _CHILD.text


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


# The same child, but lexer and printer wait for the file `go` in the project.
WAITING = FIX_ONE.replace(
    "    action: echo",
    "    action: |\n"
    '      [ ${context.module} = parser ] || while [ ! -e "$LL_TEST_GO" ]; do sleep 0.05; done\n'
    "      echo",
)


def _as_in_the_doc(text: str, keys: dict[str, str]) -> str:
    """*text* with each branch's run id replaced by the one the doc shows for its item."""
    shown = {"parser": "k3x9", "lexer": "m2p4", "printer": "q7r1"}
    for item, key in keys.items():
        text = text.replace(key.split("@")[1], shown[item])
    return text


def test_the_status_and_logs_branch_samples_are_what_a_live_fan_out_prints(
    tmp_path: Path,
) -> None:
    (block,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: fix-each")]
    (sample,) = [b for b in all_blocks() if b.starts("docs/cli.md", "branches:     3")]
    (refusal,) = [
        b for b in all_blocks() if b.starts("docs/cli.md", "ll-loop: error: run 'fix-each' has")
    ]
    root = loops_project(
        tmp_path, {".loops/fix-each.yaml": block.text, ".loops/fix-one.yaml": WAITING}
    )
    go = tmp_path / "go"
    env = {**os.environ, "LL_TEST_GO": str(go)}
    running = start(root, "run", "fix-each", env=env)
    try:
        deadline = time.monotonic() + scaled(60)
        while True:
            shown = ll_loop(root, "status", "fix-each", "--json")
            found = json.loads(shown.stdout).get("branches", []) if shown.returncode == 0 else []
            states = [(b["verdict"], b["status"], b["at"]) for b in found]
            if states == [("success", "completed", "done"), *[("", "running", "fix")] * 2]:
                break
            assert time.monotonic() < deadline, f"the branches never got there: {states}"
            time.sleep(0.1)
        keys = {b["item"]: b["key"] for b in found}
        text = ll_loop(root, "status", "fix-each").stdout
        lines = text[text.index("branches:") :]
        padded = re.compile(r"^branches: +", re.MULTILINE)  # the key column's width varies
        assert padded.sub("branches: ", _as_in_the_doc(lines, keys)) == padded.sub(
            "branches: ", sample.text
        )
        wrong = ll_loop(root, "logs", "fix-each", "--branch", "parsr")
        assert wrong.returncode == 1
        assert _as_in_the_doc(wrong.stderr, keys) == refusal.text
    finally:
        go.touch()
        running.wait(timeout=scaled(60))
    assert running.returncode == 0, running.stderr
    text = ll_loop(root, "status", "fix-each").stdout
    assert "fix #0 parser: success (terminal, merged) ·" in text
    (lanes,) = [b for b in all_blocks() if b.starts("docs/cli.md", "FAN-OUT  BRANCH")]
    report = ll_loop(root, "report", "fix-each").stdout
    shown = _as_in_the_doc(report[report.index("FAN-OUT") :], keys)
    timed = re.compile(r"\b\d+(\.\d+)?(ms|s)\b")
    assert [timed.sub("T", line).split() for line in shown.splitlines()] == [
        timed.sub("T", line).split() for line in lanes.text.splitlines()
    ]


def test_the_graph_and_simulate_samples_are_what_ll_loop_prints_for_the_example(
    tmp_path: Path,
) -> None:
    (block,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: fix-each")]
    (graph,) = [
        b
        for b in all_blocks()
        if b.starts("docs/loop-files.md", "flowchart TD\n    %% loop: fix-each")
    ]
    (walk,) = [b for b in all_blocks() if b.starts("docs/cli.md", "$ ll-loop simulate fix-each")]
    root = loops_project(
        tmp_path, {".loops/fix-each.yaml": block.text, ".loops/fix-one.yaml": FIX_ONE}
    )
    drawn = ll_loop(root, "graph", "fix-each")
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout == graph.text
    command, *printed = walk.text.splitlines()
    walked = ll_loop(root, *shlex.split(command.removeprefix("$ ll-loop ")))
    assert walked.returncode == 0, walked.stderr
    assert walked.stdout.splitlines() == printed
    said = "ll-loop simulate fix-each --branch-verdicts fix=success,failure,success"
    loop_files = (REPO / "docs" / "loop-files.md").read_text()
    assert f"`{said}`" in " ".join(loop_files.split())  # the one it names runs above
    dry = ll_loop(root, "run", "fix-each", "--dry-run")
    assert (
        "map 3 items over loop fix-one (as module); 2 at once, join all, merge green" in dry.stdout
    )
