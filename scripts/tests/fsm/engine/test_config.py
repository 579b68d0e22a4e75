"""ExecutorConfig: a run's options passed at construction, and a child's output key."""

from __future__ import annotations

from pathlib import Path

from support.engine_parts import loop

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.executor import FSMExecutor


def test_a_worktree_runs_output_key_passes_its_id_to_a_child() -> None:
    config = ExecutorConfig(output_key="parent@abc")
    assert config.child_key("parent", "child") == "child@abc"
    assert ExecutorConfig(output_key="parent").child_key("parent", "child") is None
    assert ExecutorConfig().child_key("parent", "child") is None


def test_the_shorthand_keywords_fill_in_the_config_given(tmp_path: Path) -> None:
    fsm = loop({"work": StateConfig(terminal=True)})
    config = ExecutorConfig(wait_approval=True, stall_cwd=tmp_path)
    executor = FSMExecutor(fsm, config=config, output_dir=tmp_path)
    assert executor.config == ExecutorConfig(
        wait_approval=True, stall_cwd=tmp_path, output_dir=tmp_path
    )
    assert executor.run_parts.stalls.watch.cwd == tmp_path
    assert executor.run_parts.approval.wait


def test_the_output_key_names_the_output_files(tmp_path: Path) -> None:
    fsm = loop({"work": StateConfig(terminal=True)})
    executor = FSMExecutor(fsm, config=ExecutorConfig(output_key="t@run1"))
    assert executor.run_parts.work.output_key == "t@run1"
    assert FSMExecutor(fsm).run_parts.work.output_key == "t"
