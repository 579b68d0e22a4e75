"""The loop's `circuit:` block: read, checked, and taken by a real run."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.definition.model.circuit import CircuitConfig, circuit_block


def test_the_block_reads_and_writes_back() -> None:
    block = CircuitConfig.read({"repeated_failure": {"window": 2, "on_repeated_failure": "x"}})
    assert block is not None
    assert block.target == "x"
    assert block.to_dict() == {"repeated_failure": {"window": 2, "on_repeated_failure": "x"}}
    assert CircuitConfig.read(None) is None
    assert CircuitConfig.read({"repeated_failure": {}}) == CircuitConfig.read(
        {"repeated_failure": {"on_repeated_failure": "abort"}}
    )
    assert CircuitConfig.read({}) is not None
    assert CircuitConfig().target is None


def test_bad_blocks_are_named() -> None:
    assert circuit_block({"repeated_failure": {"window": 0}}) is not None
    assert "unknown key" in str(circuit_block({"repeated": {}}))
    assert circuit_block([]) is not None


LOOP = """\
name: task
initial: attempt
max_iterations: 20
circuit:
  repeated_failure:
    window: 3
    on_repeated_failure: diagnose
    exclude_paths:
      - "${context.run_dir}/plan.md"
states:
  attempt:
    action: "echo try >> tries; false"
    on_success: done
    on_failure: attempt
  diagnose:
    action: echo diagnosing
    next: done
  done:
    terminal: true
"""


def test_a_run_goes_to_on_repeated_failure_after_the_window(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/task.yaml": LOOP})
    checked = ll_loop(root, "validate", "task")
    assert checked.returncode == 0
    assert "unreachable" not in checked.stdout + checked.stderr
    run = ll_loop(root, "run", "task")
    assert run.returncode == 0, run.stderr + run.stdout
    assert (root / "tries").read_text().split() == ["try"] * 3
    assert "→ diagnose" in run.stdout + run.stderr


def test_abort_ends_the_run_as_a_stall(tmp_path: Path) -> None:
    root = loops_project(
        tmp_path, {".loops/task.yaml": LOOP.replace("diagnose\n    exclude", "abort\n    exclude")}
    )
    run = ll_loop(root, "run", "task")
    assert run.returncode != 0
    assert "same exit code and verdict 3 times" in run.stdout + run.stderr
