"""Finding this process's children, the way the stray sweep does, with and without /proc's list."""

from __future__ import annotations

import os
import subprocess

import pytest

from little_loops.fsm.processes import descendants
from little_loops.fsm.processes.proctree import child_pids


def test_children_are_found_by_the_children_file_as_by_scanning_proc() -> None:
    before = descendants._children()
    assert before == set(child_pids(os.getpid()))
    with subprocess.Popen(["sleep", "30"]) as child:
        try:
            assert descendants._children() - before == {child.pid}
            assert set(child_pids(os.getpid())) - before == {child.pid}
        finally:
            child.kill()


def test_nothing_is_swept_unless_orphans_are_adopted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(descendants, "_adopting", False)
    assert descendants.Children.now() is None
    monkeypatch.setattr(descendants, "_adopting", True)
    children = descendants.Children.now()
    assert children is not None
    assert children.strays() == []
