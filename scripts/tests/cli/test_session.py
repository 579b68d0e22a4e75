"""The shared run path: scope locks (refuse, --queue), overrides and their record for resume."""

from __future__ import annotations

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.cli import build_parser
from little_loops.cli.options import RunOptions, options_from_args
from little_loops.cli.session import apply_overrides, save_overrides, saved_overrides
from little_loops.fsm.definition.model import FSMLoop, LLMConfig, StateConfig
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


def _loop() -> FSMLoop:
    return FSMLoop(name="x", initial="a", states={"a": StateConfig(terminal=True)})


def test_apply_overrides_leaves_the_loop_unchanged() -> None:
    fsm = _loop()
    changed = apply_overrides(
        fsm, RunOptions(max_iterations=3, no_llm=True, llm_model="claude-test-model")
    )
    assert (changed.max_iterations, changed.llm) == (
        3,
        LLMConfig(enabled=False, model="claude-test-model"),
    )
    assert (fsm.max_iterations, fsm.llm) == (50, LLMConfig())
    assert apply_overrides(fsm, RunOptions()) == fsm


def test_model_flag_is_the_model_of_every_claude_state() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "claude": {"model": "loop-model", "tools": ["Read"]},
            "states": {
                "a": {"action": "A", "action_type": "prompt", "claude": {"model": "own"}},
                "b": {"action": "B", "action_type": "prompt", "claude": {"effort": "low"}},
                "c": {"action": "C", "action_type": "prompt"},
            },
        }
    )
    changed = apply_overrides(fsm, RunOptions(model="cli-model"))
    assert changed.claude == {"model": "cli-model", "tools": ["Read"]}
    assert changed.states["a"].claude == {"model": "cli-model"}
    assert changed.states["b"].claude == {"effort": "low"}  # the loop's model applies
    assert changed.states["c"].claude is None
    assert fsm.states["a"].claude == {"model": "own"}  # the loaded loop is not changed


def test_overrides_recorded_for_resume(loop_project: LoopProject) -> None:
    save_overrides(
        "x", loop_project.loops, RunOptions(max_iterations=3, llm_model="m", max_cost=1.5)
    )
    restored = saved_overrides("x", loop_project.loops, RunOptions(quiet=True))
    assert restored == RunOptions(max_iterations=3, llm_model="m", max_cost=1.5, quiet=True)
    assert (
        apply_overrides(
            FSMLoop.from_dict({"name": "x", "initial": "a", "states": {"a": {"terminal": True}}}),
            restored,
        ).max_cost_usd
        == 1.5
    )
    # Flags given again win over the record.
    again = saved_overrides("x", loop_project.loops, RunOptions(max_iterations=9))
    assert again.max_iterations == 9
    assert saved_overrides("none", loop_project.loops, RunOptions()) == RunOptions()


def test_options_become_the_same_run_flags() -> None:
    options = RunOptions(
        max_iterations=3,
        no_llm=True,
        llm_model="m",
        model="claude-c",
        queue=True,
        quiet=True,
        as_json=True,
    )
    assert options.argv() == [
        "--max-iterations",
        "3",
        "--no-llm",
        "--llm-model",
        "m",
        "--model",
        "claude-c",
        "--queue",
        "--quiet",
        "--json",
    ]
    # ... which the run parser turns back into the same options (background forwarding).
    args = build_parser().parse_args(["run", "x", *options.argv()])
    assert options_from_args(args) == options
