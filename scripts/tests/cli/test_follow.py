"""`ll-loop status NAME --follow`: another terminal's view of a background run, to its end."""

from __future__ import annotations

import threading

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

GATED = """\
    name: gated
    initial: a
    max_iterations: 1
    states:
      a:
        action: "echo waiting; until [ -f go ]; do sleep 0.05; done; echo nope >&2; exit 1"
        on_success: done
        on_failure: b
      b:
        action: echo again
        next: a
      done:
        terminal: true
"""


def test_follow_shows_a_background_run_and_exits_with_its_code(
    loop_project: LoopProject,
) -> None:
    loop_project.write("gated", GATED)
    started = llproc.ll_loop(loop_project.root, "run", "gated", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    follow = llproc.start(loop_project.root, "status", "gated", "--follow")
    seen: list[str] = []

    def read() -> None:
        assert follow.stderr is not None
        for line in follow.stderr:
            seen.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        llproc.wait_for(lambda: "[1/1] a → echo waiting;" in "".join(seen), what="state line")
        assert follow.poll() is None  # the run waits for `go`: following goes on
        (loop_project.root / "go").touch()
        # The run stops at max_iterations (exit 3); following exits with the same code.
        assert follow.wait(timeout=scaled(20)) == ExitCode.MAX_ITERATIONS
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
    reader.join(scaled(5))
    text = "".join(seen)
    assert "       ✗ failure (exit 1)" in text
    assert "         stderr │ nope" in text
    assert "[1/1] b → echo again" in text
    assert "Loop stopped: max_iterations reached in a (1 iteration" in text


def test_follow_of_an_ended_run_shows_it_and_its_code(loop_project: LoopProject) -> None:
    loop_project.write("gated", GATED)
    (loop_project.root / "go").touch()
    assert llproc.ll_loop(loop_project.root, "run", "gated").returncode == ExitCode.MAX_ITERATIONS
    follow = llproc.ll_loop(loop_project.root, "status", "gated", "--follow")
    assert follow.returncode == ExitCode.MAX_ITERATIONS
    assert "[1/1] a → echo waiting;" in follow.stderr
    assert follow.stderr.rstrip().splitlines()[-1].startswith("Loop stopped: max_iterations")
