"""`watch` with a live fan-out: its branches' runs listed under their parent, live, in a real
tmux pane, with real git and real child `ll-loop` processes."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support import fanout, llproc
from support.doc_blocks import all_blocks
from support.programs import needs
from support.slowdown import scaled

from little_loops.cli.watch.board import board_rows

pytest.importorskip("textual")
from cli.watch.test_init import _tmux, _until  # noqa: E402


def _live_fan_out(tmp_path: Path, go: Path) -> tuple[Path, subprocess.Popen[str]]:
    """A project whose loop `fan` maps a, b, f over `fix`, started; the children wait for
    *go* to exist."""
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "b", "f"], merge="green"))
    wait = f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done"
    return root, llproc.start(root, "run", "fan", env={"LL_TEST_WAIT": wait})


def _shape(lines: list[str]) -> list[list[str]]:
    """*lines* of the list with run ids and times made alike (a doc sample's are made up).

    A run id is told by its column, not its look: a random id can read as a time
    (``120s``), which once made the shapes differ.
    """
    run_columns = {"fan": (1,), "└": (1, 4)}  # the fan-out's RUN; a branch's name@id and RUN
    times = re.compile(r"\b\d+(\.\d+)?(ms|s|m|h)( \d+(\.\d+)?(ms|s|m))?\b")

    def cells(line: str) -> list[str]:
        cut = line.split()
        at = run_columns.get(cut[0] if cut else "", ())
        named = ["ID" if i in at else cell for i, cell in enumerate(cut)]
        return times.sub("T", " ".join(named)).split()

    return [cells(line) for line in lines]


def _branch_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "└ fix@" in line]


@needs("tmux", "tmux")
def test_watch_in_a_real_tmux_pane_shows_a_live_fan_outs_branches_under_it(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    root, running = _live_fan_out(tmp_path, go)
    socket = f"ll-watch-{uuid.uuid4().hex[:8]}"
    ll_loop = shlex.quote(str(Path(sys.executable).parent / "ll-loop"))
    script = f"{ll_loop} watch 2>&1; echo watch-exited=$?; sleep 300"
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30",
         "-c", str(root), "sh", "-c", script],
        check=True, env={**os.environ, "TERM": "xterm-256color"}, timeout=scaled(20),
    )  # fmt: skip
    pane = lambda: _tmux(socket, "capture-pane", "-p", "-t", "0")  # noqa: E731
    try:

        def all_running() -> bool:
            lines = _branch_lines(pane())
            return len(lines) == 3 and all(" running " in line for line in lines)

        _until(all_running, "the three branches running under the fan-out", pane)
        shown = pane().splitlines()
        shown = [line.strip() for line in shown]
        top = [i for i, line in enumerate(shown) if line.split()[:1] == ["fan"]]
        assert len(top) == 1, shown
        parent = shown[top[0]].split()
        assert parent[2:4] == ["running", "fan"], shown[top[0]]
        below = shown[top[0] + 1 : top[0] + 4]
        for line, label in zip(below, ("#0 a", "#1 b", "#2 f"), strict=True):
            assert line.startswith("└ fix@"), shown
            assert f" {label} " in line
            cells = line.split()
            assert cells[5:7] == ["running", "work"], line  # its own run, at its own state
            assert cells[4] == cells[1].split("@")[1]  # the RUN column: the branch's id
        (sample,) = [
            b for b in all_blocks() if b.starts("docs/watch.md", " LOOP               RUN")
        ]
        assert _shape(shown[top[0] - 1 : top[0] + 4]) == _shape(sample.text.splitlines())
        # No branch is listed again on its own among the runs.
        assert sum(1 for line in shown if "fix@" in line) == 3
        listed = json.loads(llproc.ll_loop(root, "list", "--running", "--json").stdout)
        (fan,) = [row for row in listed if row["loop"] == "fan"]
        assert [(b["item"], b["verdict"]) for b in fan["branches"]] == [
            ("a", ""), ("b", ""), ("f", "")
        ]  # fmt: skip
        # Enter on the fan-out's run: its screen has a section of its branches, live.
        _tmux(socket, "send-keys", "-t", "0", "Enter")
        _until(lambda: "── branches ──" in pane(), "the fan-out's run screen", pane)
        screen = [line.strip() for line in pane().splitlines()]
        at = screen.index("── branches ──")
        for line, label in zip(screen[at + 1 : at + 4], ("#0 a", "#1 b", "#2 f"), strict=True):
            assert line.startswith(f"fan {label}  fix@"), screen
            assert line.endswith("  running at work (pass 1)  $0.0000"), line
        assert "(a fan-out under way: see branches)" in pane()
        _tmux(socket, "send-keys", "-t", "0", "Escape")
        _until(lambda: "LOOP" in pane(), "the list again", pane)
        go.touch()

        def all_ended() -> bool:
            text = pane()
            lines = _branch_lines(text)
            ended = len(lines) == 3 and all(" completed " in line for line in lines)
            return ended and any(
                line.split()[:3][2:] == ["completed"] for line in text.splitlines()
            )

        _until(all_ended, "the branches and the fan-out ended, as the view follows", pane)
        _tmux(socket, "send-keys", "-t", "0", "q")
        _until(lambda: "watch-exited=0" in pane(), "watch to quit", pane)
        assert "Traceback" not in pane()
    finally:
        go.touch()
        _tmux(socket, "kill-server")
        running.wait(timeout=scaled(60))
    assert running.returncode == 0, running.stderr


def test_branches_without_files_are_rows_of_their_verdict_and_a_planted_cycle_is_listed(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "e"]))
    assert llproc.ll_loop(root, "run", "fan", timeout=120).returncode == 0
    rows = board_rows(root / ".loops")
    assert [(r.depth, r.status) for r in rows] == [
        (0, "completed"),
        (1, "completed"),
        (1, "failed"),
    ]
    a, e = rows[1].key, rows[2].key
    assert [r.loop for r in rows[1:]] == [f"{a} #0 a", f"{e} #1 e"]
    # The parent alone elsewhere (its branches' files gone): each is a row of its verdict.
    other = tmp_path / "other" / ".loops" / ".running"
    other.mkdir(parents=True)
    parent = json.loads((root / ".loops" / ".running" / "fan.state.json").read_text())
    (other / "fan.state.json").write_text(json.dumps(parent))
    alone = board_rows(other.parent)
    assert [(r.depth, r.loop, r.status) for r in alone] == [
        (0, "fan", "completed"),
        (1, f"{a} #0 a", "success"),
        (1, f"{e} #1 e", "failure"),
    ]
    # A branch's saved state naming its parent as its own branch: both still listed, once.
    child = json.loads((root / ".loops" / ".running" / f"{a}.state.json").read_text())
    child["captured"]["x"] = {"stopped_by": "", "branches": [{"index": 0, "key": "fan"}]}
    (root / ".loops" / ".running" / f"{a}.state.json").write_text(json.dumps(child))
    cycled = board_rows(root / ".loops")
    assert sorted(r.key for r in cycled) == sorted(["fan", a, e])
