"""SIGKILL at every write of a run's event log, then `ll-loop resume`: the same side effects
and the same end as the uninterrupted run, for loops with captures, stalls, retries, an
approval, a sub-loop and a step cap.

Each loop runs once uninterrupted (the reference: its side effects, the lines its actions
append to effects.txt, and its end: status, outcome, captures, prev, counts, routes). Then
for every K from 1 to the number of writes the reference made, it runs again killed (strace,
support/killwrite.py) as its K-th write begins, and is resumed until it ends; its question is
answered once, with `ll-loop approve` between the kill and the resume (also when the killed
run had asked it but not yet stopped on it). The rule the engine promises: an action whose
`action_complete` was written never runs again; one killed before that (its `action_start`
the last event written) may run once more. A second pass (`then`) also kills the first
resume as its 2nd write begins, right after its own `loop_start`.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import killwrite
from support.gitrepo import make_repo

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(killwrite.STRACE is None, reason="needs strace (scripts/dev setup)"),
]

CAPTURES = """\
name: shape
initial: count
max_iterations: 6
states:
  count:
    action: 'echo "count ${state.iteration}" >> effects.txt; printf "%s\\n\\n" ${state.iteration}'
    capture: n
    evaluate:
      type: output_numeric
      operator: lt
      target: 2
    on_success: note
    on_failure: report
  note:
    action: 'echo "note ${captured.n.output} ${prev.verdict}" >> effects.txt'
    next: count
  report:
    action: 'echo "report ${captured.n.output}" >> effects.txt'
    terminal: true
"""

# The output ends in newlines: a resume that judged it chomped would count a new streak.
SAME_RESULT = """\
name: shape
initial: poll
max_iterations: 10
states:
  poll:
    action: "echo poll >> effects.txt; printf 'same\\\\n\\\\n'"
    evaluate:
      type: output_contains
      pattern: "same\\n\\n"
    on_success: poll
    on_failure: out
    stall:
      same_result: 3
      on_stall: out
  out:
    action: "echo out >> effects.txt"
    terminal: true
"""

# progress.txt changes in the first two passes only; effects.txt is ignored by git.
NO_CHANGE = """\
name: shape
initial: work
max_iterations: 10
stall:
  no_change_passes: 2
  on_stall: out
states:
  work:
    action: >-
      echo "work ${state.iteration}" >> effects.txt;
      [ ${state.iteration} -gt 2 ] || echo ${state.iteration} > progress.txt
    next: work
  out:
    action: "echo out >> effects.txt"
    terminal: true
"""

# Fails (exit 75) on its first two attempts, by the lines it left: a retried attempt.
RETRIES = """\
name: shape
initial: flaky
states:
  flaky:
    action: 'echo flaky >> effects.txt; [ $(grep -c flaky effects.txt) -ge 3 ] || exit 75'
    retry:
      on: [75]
      max_attempts: 4
      interval: 0
    on_success: done
    on_failure: failed
  done:
    action: "echo done >> effects.txt"
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""

APPROVAL = """\
name: shape
initial: build
states:
  build:
    action: "echo build >> effects.txt"
    next: ask
  ask:
    action_type: approval
    action: "ship it?"
    on_success: ship
    on_failure: failed
  ship:
    action: "echo ship >> effects.txt"
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""

SUBLOOP = """\
name: shape
initial: pre
states:
  pre:
    action: "echo pre >> effects.txt"
    next: sub
  sub:
    loop: inner
    capture: inner
    on_success: post
    on_failure: failed
  post:
    action: 'echo "post ${captured.inner.output}" >> effects.txt'
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""

INNER = """\
name: inner
initial: c1
states:
  c1:
    action: "echo c1 >> effects.txt; echo one"
    capture: first
    next: c2
  c2:
    action: 'echo "c2 ${captured.first.output}" >> effects.txt'
    next: c3
  c3:
    action: "echo c3 >> effects.txt"
    next: end
  end:
    terminal: true
"""

# Ends at its step cap, through the cap's route: a step killed and run again is one step.
MAX_STEPS = """\
name: shape
initial: work
max_steps: 5
on_max_steps: summary
states:
  work:
    action: 'echo "work ${state.iteration}" >> effects.txt'
    next: check
  check:
    action: "echo check >> effects.txt"
    next: work
  summary:
    action: "echo summary >> effects.txt"
    next: done
  done:
    terminal: true
"""

SHAPES = {
    "captures": CAPTURES,
    "same_result": SAME_RESULT,
    "no_change": NO_CHANGE,
    "retries": RETRIES,
    "approval": APPROVAL,
    "subloop": SUBLOOP,
    "max_steps": MAX_STEPS,
}


def project(root: Path, shape: str) -> Path:
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "shape.yaml").write_text(SHAPES[shape])
    (root / ".loops" / "inner.yaml").write_text(INNER)
    if shape == "no_change":
        make_repo(root, {".gitignore": ".loops/\neffects.txt\n"})
    return root


def check(root: Path, reference: tuple[list[str], dict[str, object]], done: killwrite.Drive) -> str:
    """What differs from the reference (empty when nothing does)."""
    lines, end = reference
    got = killwrite.effects(root)
    if not killwrite.allowed(lines, got, done.rerun):
        return f"side effects {got} (may rerun {done.rerun}), expected {lines}"
    now = killwrite.record(root, "shape")
    if now != end:
        diff = {k: (now[k], end[k]) for k in end if now.get(k) != end[k]}
        return f"end differs (got, expected): {diff}"
    return ""


Reference = tuple[tuple[list[str], dict[str, object]], killwrite.Drive]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Reference]:
    """The side effects and end of an uninterrupted drive of *shape*, and the drive: made
    once per shape in this process, shared by its `once` and `resume-killed-too` cases."""
    made: dict[str, Reference] = {}

    def reference(shape: str) -> Reference:
        if shape not in made:
            whole = project(tmp_path_factory.mktemp(f"whole-{shape}"), shape)
            ran = killwrite.drive(whole, "shape")
            made[shape] = (killwrite.effects(whole), killwrite.record(whole, "shape")), ran
        return made[shape]

    return reference


@pytest.mark.parametrize("then", [None, 2], ids=["once", "resume-killed-too"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_kill_at_every_write_resumes_to_the_same_end(
    tmp_path: Path, shape: str, then: int | None, uninterrupted: Callable[[str], Reference]
) -> None:
    began = time.monotonic()
    reference, ran = uninterrupted(shape)
    assert reference[0], ran.outputs

    def killed_at(k: int) -> str:
        root = project(tmp_path / f"k{k}", shape)
        try:
            done = killwrite.drive(root, "shape", kill_at=k, then_at=then)
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            return f"killed at write {k}: {exc}"
        problem = check(root, reference, done)
        return f"killed at write {k} ({done.kills} kills): {problem}" if problem else ""

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(killed_at, range(1, ran.writes + 1)) if p]
    took = time.monotonic() - began
    print(f"{shape} ({then=}): {ran.writes} kill points, {took:.0f}s")
    assert not problems, "\n".join(problems)
