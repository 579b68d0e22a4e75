"""The shared run path: scope locks (refuse, --queue)."""

from __future__ import annotations

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

HOLDER = """\
    name: holder
    initial: a
    scope: [src]
    states:
      a:
        action: touch started; {wait}
        next: done
      done:
        terminal: true
"""
OTHER = """\
    name: other
    initial: a
    scope: [src/api]
    states:
      a:
        action: echo other ran
        next: done
      done:
        terminal: true
"""


def test_overlapping_scope_is_refused_naming_the_holder(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("holder", HOLDER.format(wait=f"sleep {marker}"))
    loop_project.write("other", OTHER)
    proc = llproc.start(loop_project.root, "run", "holder")
    try:
        llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the holder")
        result = loop_project.run("run", "other")
        assert result.code == ExitCode.FAILED
        assert result.err == (
            f"ll-loop: error: scope 'src/api' of loop 'other' overlaps 'src' held by loop"
            f" 'holder' (pid {proc.pid}); wait with --queue or stop it with 'll-loop stop holder'\n"
        )
        again = loop_project.run("run", "holder")
        assert again.err == (
            f"ll-loop: error: loop 'holder' is already running (pid {proc.pid}); wait with"
            " --queue or stop it with 'll-loop stop holder'\n"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=scaled(5))


def test_queue_waits_with_a_note_then_runs(loop_project: LoopProject) -> None:
    # The holder holds 'src' long enough (longer on a slower machine) for `other` to queue.
    loop_project.write("holder", HOLDER.format(wait=f"sleep {scaled(0.6):.2f}"))
    loop_project.write("other", OTHER)
    proc = llproc.start(loop_project.root, "run", "holder")
    llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the holder")
    result = loop_project.run("run", "other", "--queue")
    assert proc.wait(timeout=scaled(5)) == ExitCode.OK
    assert result.code == ExitCode.OK
    assert result.err.startswith(
        f"ll-loop: queued: scope 'src/api' of loop 'other' overlaps 'src' held by loop"
        f" 'holder' (pid {proc.pid}); waiting for it to finish\n[1/50] a → echo other ran\n"
    )
