"""SIGKILL at every write of a guarded run's event log, then `ll-loop resume`: the guards
(`tamper_guard`, `prepatch_check`) give the verdict the uninterrupted run gives, and no
scratch of the pre-patch check is left (its folder, git's record of it).

A crash must not switch a guard off: an action killed after it tampered runs again on
resume, and the tamper guard still compares with the test files as they were before the
first attempt (recorded before the action started); an action whose `action_complete` was
written is judged by the guards on resume as it would have been; a verdict the guards
recorded is the verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import killwrite
from support.gitrepo import git, make_repo, run_env

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(killwrite.STRACE is None, reason="needs strace (scripts/dev setup)"),
]

ORIGINAL = "def test_sum():\n    assert 1 + 1 == 2\n"
TAMPER = """\
    name: shape
    tamper_guard: {policy}
    initial: work
    states:
      work:
        action: 'echo work >> effects.txt; echo "def test_sum(): pass" > tests/test_sum.py'
        on_success: done
        on_failure: tampered
      tampered:
        terminal: true
        outcome: failure
      done:
        action: 'echo done >> effects.txt'
        terminal: true
"""

# Two passes of two guarded states (four records): those of the first must survive a crash
# in the second.
TWICE = """\
    name: shape
    tamper_guard: revert
    initial: work
    states:
      work:
        action: 'echo work >> effects.txt; echo "def test_sum(): pass" > tests/test_sum.py'
        next: count
      count:
        action: '[ ${state.iteration} -ge 2 ]'
        on_success: done
        on_failure: work
      done:
        action: 'echo done >> effects.txt'
        terminal: true
"""

CALC = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
FIX = "def add(a, b):\n    return a + b\n"
WEAK = "\n\ndef test_weak():\n    assert add(1, 0) == 1\n"
PREPATCH = """\
    name: shape
    prepatch_check: fail
    initial: work
    states:
      work:
        action: >-
          echo work >> effects.txt; cp patch/calc.py calc.py &&
          cp patch/test_calc.py tests/test_calc.py
        on_success: done
        on_failure: failed
      done:
        action: 'echo done >> effects.txt'
        terminal: true
      failed:
        terminal: true
        outcome: failure
"""


def project(root: Path, shape: str) -> Path:
    ignore = {".gitignore": ".loops/\neffects.txt\n"}
    if shape == "prepatch":
        files = {"calc.py": CALC, "tests/test_calc.py": TESTS, "patch/calc.py": FIX}
        files["patch/test_calc.py"] = TESTS + WEAK  # a copy: the same if it runs twice
        make_repo(root, {**ignore, **files, ".loops/shape.yaml": textwrap.dedent(PREPATCH)})
    else:
        loop = textwrap.dedent(TWICE if shape == "twice" else TAMPER.format(policy=shape))
        make_repo(root, {**ignore, "tests/test_sum.py": ORIGINAL, ".loops/shape.yaml": loop})
    (root / "tmp").mkdir()
    return root


def env_of(root: Path) -> dict[str, str]:
    """pytest is this Python's; the pre-patch forks go to the project's own tmp/."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return run_env(PATH=path, TMPDIR=str(root / "tmp"))


def end_of(root: Path) -> dict[str, Any]:
    """The run's end (killwrite.record), the guards' records, the checkout's test files,
    and the scratch left: folders in tmp/, worktrees git knows of."""
    saved = json.loads((root / ".loops" / ".running" / "shape.state.json").read_text())
    context = saved.get("context", {})
    guards = {
        "tamper": [
            {k: r.get(k) for k in ("state", "policy", "passed", "findings", "reverted")}
            for r in context.get("_tamper_guard", [])
        ],
        "prepatch": [
            {k: r.get(k) for k in ("state", "policy", "verdict", "skipped_reason", "tests")}
            for r in context.get("_prepatch_check", [])
        ],
    }
    tests = sorted((root / "tests").iterdir())
    return {
        **killwrite.record(root, "shape"),
        "guards": guards,
        "tests": {p.name: p.read_text() for p in tests},
        "scratch": sorted(p.name for p in (root / "tmp").iterdir()),
        "worktrees": git(root, "worktree", "list", "--porcelain").count("\nworktree ") + 1,
    }


SHAPES = ("fail", "revert", "twice", "prepatch")


Reference = tuple[tuple[list[str], dict[str, Any]], killwrite.Drive]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Reference]:
    """The side effects and end of an uninterrupted drive of *shape*, and the drive: made
    once per shape in this process, shared by its `once` and `resume-killed-too` cases."""
    made: dict[str, Reference] = {}

    def reference(shape: str) -> Reference:
        if shape not in made:
            whole = project(tmp_path_factory.mktemp(f"whole-{shape}"), shape)
            ran = killwrite.drive(whole, "shape", env=env_of(whole))
            made[shape] = (killwrite.effects(whole), end_of(whole)), ran
        return made[shape]

    return reference


@pytest.mark.parametrize("then", [None, 2], ids=["once", "resume-killed-too"])
@pytest.mark.parametrize("shape", SHAPES)
def test_kill_at_every_write_of_a_guarded_run_resumes_to_the_same_verdict(
    tmp_path: Path, shape: str, then: int | None, uninterrupted: Callable[[str], Reference]
) -> None:
    began = time.monotonic()
    reference, ran = uninterrupted(shape)
    expected = {"fail": "tampered", "revert": "done", "twice": "done", "prepatch": "failed"}
    assert reference[1]["current_state"] == expected[shape], ran.outputs
    assert len(reference[1]["guards"]["tamper"]) == (
        0 if shape == "prepatch" else 4 if shape == "twice" else 1
    )
    assert reference[1]["scratch"] == []
    assert reference[1]["worktrees"] == 1

    def killed_at(k: int) -> str:
        root = project(tmp_path / f"k{k}", shape)
        try:
            done = killwrite.drive(root, "shape", kill_at=k, then_at=then, env=env_of(root))
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            return f"killed at write {k}: {exc}"
        got = killwrite.effects(root)
        if not killwrite.allowed(reference[0], got, done.rerun):
            return f"killed at write {k}: side effects {got}, expected {reference[0]}"
        now = end_of(root)
        if now != reference[1]:
            diff = {key: (now.get(key), v) for key, v in reference[1].items() if now.get(key) != v}
            return f"killed at write {k} ({done.kills} kills): differs (got, expected): {diff}"
        return ""

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(killed_at, range(1, ran.writes + 1)) if p]
    took = time.monotonic() - began
    print(f"{shape} ({then=}): {ran.writes} kill points, {took:.0f}s")
    assert not problems, "\n".join(problems)
