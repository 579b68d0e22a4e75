"""The words of a `pr` state's `merge:`: the methods gh knows, and none, loaded without a forge."""

from __future__ import annotations

import subprocess
import sys

from little_loops.fsm.forges.merge import MergeMethod


def test_the_merge_words_are_gh_s_three_methods_and_none() -> None:
    assert [str(method) for method in MergeMethod] == ["squash", "merge", "rebase", "none"]
    assert MergeMethod("squash") is MergeMethod.SQUASH


def test_the_merge_words_load_no_forge() -> None:
    code = (
        "import sys, little_loops.fsm.forges.merge; "
        "print(sorted(m for m in sys.modules if m.startswith('little_loops.fsm.forges')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "['little_loops.fsm.forges', 'little_loops.fsm.forges.merge']"
