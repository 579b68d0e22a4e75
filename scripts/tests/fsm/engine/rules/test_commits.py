"""The checkpoint rule: nothing outside a worktree run; inside one, git records each step."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.engine_parts import Recorded, loop

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.commits import Commits

WORK = StateConfig(action="make", on_success="done", commit=True, rollback=True)
FSM = loop({"work": WORK, "done": StateConfig(terminal=True)})


def test_without_a_worktree_nothing_is_committed_or_rolled_back() -> None:
    emitted = Recorded()
    rule = Commits(FSM, emitted, None)
    rule.before("work", WORK)
    rule.after("work", WORK, "built", 1)
    assert emitted.seen == []
    rule.restore(ExecutorSnapshot(current_state="work", iteration=1))
    assert rule.dump() == {}


def test_a_main_checkout_is_left_untouched(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "new.txt").write_text("x")
    emitted = Recorded()
    Commits(FSM, emitted, tmp_path).after("work", WORK, "built", 1)
    assert emitted.names() == ["checkpoint"]
    assert "is a main checkout, not a worktree" in emitted.seen[0][1]["error"]
    assert (tmp_path / "new.txt").exists()
