"""A branch's child process (fsm/fanout/children.py): its output in its log, its state file
read, and its whole process tree ended, even parts that ignore SIGTERM or left its group."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from support.llproc import wait_for
from support.slowdown import scaled

from little_loops.fsm.fanout import children
from little_loops.fsm.processes.pids import pid_alive

# A parent that ignores SIGTERM, with a grandchild in a session of its own (out of the
# child's process group) that ignores it too; each writes its pid.
_TREE = """
trap '' TERM
setsid bash -c 'trap "" TERM; echo $$ > {pids}/grand; sleep 300' &
echo $$ > {pids}/parent
sleep 300
"""


def test_stop_ends_the_whole_tree_even_what_ignores_sigterm(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    script = _TREE.format(pids=pids)
    child = children.start(["bash", "-c", script], tmp_path, tmp_path / "out.log")
    wait_for(lambda: len(list(pids.iterdir())) == 2, scaled(20), "the tree")
    parent, grand = int((pids / "parent").read_text()), int((pids / "grand").read_text())
    children.stop(child, grace=scaled(0.5))
    assert child.poll() is not None
    wait_for(lambda: not pid_alive(grand) and not pid_alive(parent), scaled(10), "the tree's end")


def test_a_child_found_alive_is_watched_by_its_pid(tmp_path: Path) -> None:
    other = children.start(
        [sys.executable, "-c", "import time; time.sleep(300)"], tmp_path, tmp_path / "l"
    )
    adopted = children.Child(other.pid)
    assert adopted.poll() is None
    children.stop(adopted, grace=scaled(5))
    assert other.poll() is not None or other.wait(timeout=scaled(10)) is not None
    assert adopted.poll() == -1


def test_output_goes_to_the_log_and_the_state_file_is_read(tmp_path: Path) -> None:
    child = children.start(["bash", "-c", "echo said; echo err >&2"], tmp_path, tmp_path / "x.log")
    assert child.process is not None
    assert child.process.wait(timeout=scaled(10)) == 0
    assert (tmp_path / "x.log").read_text() == "said\nerr\n"
    running = tmp_path / ".loops" / ".running"
    running.mkdir(parents=True)
    assert children.saved(tmp_path / ".loops", "fix@ab12") == {}
    (running / "fix@ab12.state.json").write_text(
        json.dumps({"status": "completed", "cost_usd": 0.25})
    )
    assert children.spent_by(children.saved(tmp_path / ".loops", "fix@ab12")) == 0.25
    (running / "fix@ab12.state.json").write_text("[1, 2")
    assert children.saved(tmp_path / ".loops", "fix@ab12") == {}
    assert children.spent_by({"cost_usd": -1}) == 0.0
    assert children.spent_by({"cost_usd": "9"}) == 0.0


def test_the_log_is_never_written_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep\n")
    (tmp_path / "x.log").symlink_to(target)
    with contextlib.suppress(OSError):
        children.start(["true"], tmp_path, tmp_path / "x.log")
    assert target.read_text() == "keep\n"
