"""The words a forge answers with are each written once: check states, merge methods."""

from __future__ import annotations

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.forges.forge import CheckState, ForgeError, Mergeable
from little_loops.fsm.forges.merge import MergeMethod


def test_the_merge_methods_are_the_ones_a_pr_state_names() -> None:
    assert [m.value for m in MergeMethod] == ["squash", "merge", "rebase", "none"]


def test_check_states_and_mergeable_words() -> None:
    assert [s.value for s in CheckState] == ["pending", "passed", "failed", "skipped"]
    assert [m.value for m in Mergeable] == ["mergeable", "conflicting", "unknown"]


def test_a_forge_error_is_a_runtime_error_of_a_loop() -> None:
    assert issubclass(ForgeError, LoopRuntimeError)
