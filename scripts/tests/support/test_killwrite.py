"""A run forked from the fork server and traced once held (killwrite's way) makes the same
writes to its event log as `python -m little_loops.cli` started under strace, and dies at the
same one: the kill points of the reliability tests are a fresh process's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import killwrite

pytestmark = pytest.mark.skipif(killwrite.STRACE is None, reason="needs strace")

LOOP = """\
name: steps
initial: count
max_iterations: 3
states:
  count:
    action: 'echo "count ${state.iteration}" >> effects.txt; echo ${state.iteration}'
    capture: n
    evaluate:
      type: output_numeric
      operator: lt
      target: 2
    on_success: note
    on_failure: done
  note:
    action: 'echo "note ${captured.n.output}" >> effects.txt'
    next: count
  done:
    action: "echo done >> effects.txt"
    terminal: true
"""


def project(root: Path) -> Path:
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "steps.yaml").write_text(LOOP)
    return root


def logged(root: Path) -> list[str]:
    """The events the log holds, by kind, in order."""
    text = killwrite.events_file(root, "steps").read_text()
    return [json.loads(line)["event"] for line in text.splitlines()]


def run(root: Path, kill_at: int | None, fresh: bool) -> tuple[int, int, list[str], list[str]]:
    done, writes = killwrite.ll_loop_traced(root, "steps", kill_at, "run", "steps", fresh=fresh)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, writes, logged(root), killwrite.effects(root)


def test_a_forked_run_writes_and_dies_as_a_fresh_process(tmp_path: Path) -> None:
    whole = run(project(tmp_path / "fresh"), None, fresh=True)
    assert whole[0] == 0, whole
    assert whole[1] > 5, whole
    assert run(project(tmp_path / "forked"), None, fresh=False) == whole
    for k in sorted({1, 2, whole[1] // 2, whole[1]}):
        fresh = run(project(tmp_path / f"fresh{k}"), k, fresh=True)
        assert fresh[:2] == (killwrite.KILLED, k - 1), fresh
        assert run(project(tmp_path / f"forked{k}"), k, fresh=False) == fresh, k
