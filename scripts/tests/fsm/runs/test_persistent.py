"""PersistentExecutor: state and events on disk, resume with everything intact."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.fake_claude import fake_claude
from support.fakerun import fake_run
from support.loops import prompt_loop

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.executor import ActionResult
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.persistence import PersistentExecutor, StatePersistence


def counting_loop() -> FSMLoop:
    """measure (captures n) → bump → measure ... until n >= 3."""
    return FSMLoop(
        name="count",
        initial="measure",
        states={
            "measure": StateConfig(
                action="cat n 2>/dev/null || echo 0", capture="n", on_success="decide"
            ),
            "decide": StateConfig(
                action='[ "${captured.n.output}" -ge 3 ]', on_success="done", on_failure="bump"
            ),
            "bump": StateConfig(
                action="echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n", next="measure"
            ),
            "done": StateConfig(terminal=True),
        },
        max_iterations=10,
    )


class StopAt:
    """Event callback that asks for shutdown when a given state is entered the Nth time."""

    def __init__(self, state: str, nth: int) -> None:
        self.state, self.nth, self.seen = state, nth, 0
        self.executor: PersistentExecutor | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        if event["event"] == "state_enter" and event["state"] == self.state:
            self.seen += 1
            if self.seen == self.nth and self.executor is not None:
                self.executor.request_shutdown("stopped")


def test_run_saves_state_and_events(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    runner = DefaultActionRunner(cwd=tmp_path)
    result = PersistentExecutor(counting_loop(), loops_dir=loops, action_runner=runner).run()
    assert result.terminated_by == "terminal"
    store = StatePersistence("count", loops)
    state = store.load_state()
    assert state is not None
    assert (state.status, state.current_state, state.terminated_by) == (
        "completed",
        "done",
        "terminal",
    )
    assert state.captured["n"]["output"] == "3"
    assert state.pid == os.getpid()
    events = store.read_events()
    assert events[0]["event"] == "loop_start"
    assert events[-1]["event"] == "loop_complete"
    for line in store.events_file.read_text().splitlines():
        json.loads(line)
    assert (loops / ".running" / "count.measure.out").read_text() == "3\n"


def test_stop_then_resume_keeps_captures_iterations_and_elapsed(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    stopper = StopAt("bump", 2)
    first = PersistentExecutor(
        counting_loop(),
        loops_dir=loops,
        action_runner=DefaultActionRunner(cwd=tmp_path),
        event_callback=stopper,
    )
    stopper.executor = first
    stopped = first.run()
    assert (stopped.terminated_by, stopped.final_state) == ("stopped", "bump")
    saved = StatePersistence("count", loops).load_state()
    assert saved is not None
    assert (saved.status, saved.current_state, saved.iteration) == ("stopped", "bump", 2)
    assert saved.captured["n"]["output"] == "1"

    second = PersistentExecutor(
        counting_loop(), loops_dir=loops, action_runner=DefaultActionRunner(cwd=tmp_path)
    )
    result = second.resume()
    assert result.terminated_by == "terminal"
    assert result.captured["n"]["output"] == "3"
    assert result.iterations == 4  # passes continue from 2, not from 0
    assert result.duration_ms >= saved.elapsed_ms
    kinds = [e["event"] for e in StatePersistence("count", loops).read_events()]
    assert kinds.count("loop_start") == 2  # one log across the stop and the resume


def test_resume_without_saved_run(tmp_path: Path) -> None:
    with pytest.raises(LoopRuntimeError, match="^loop 'count' has no saved run to resume; "):
        PersistentExecutor(counting_loop(), loops_dir=tmp_path / ".loops").resume()


def test_resume_of_completed_run_is_refused(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    PersistentExecutor(
        counting_loop(), loops_dir=loops, action_runner=DefaultActionRunner(cwd=tmp_path)
    ).run()
    with pytest.raises(LoopRuntimeError) as info:
        PersistentExecutor(counting_loop(), loops_dir=loops).resume()
    assert str(info.value) == (
        "loop 'count' completed; nothing to resume, start it again with 'll-loop run count'"
    )


def test_resume_of_live_run_is_refused(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    store = StatePersistence("count", loops)
    store.initialize()
    from little_loops.fsm.processes.pids import process_start_ticks
    from little_loops.fsm.runs.state import LoopState

    writer = fake_run(loops, "count")
    try:
        store.save_state(
            LoopState(
                loop_name="count",
                current_state="bump",
                pid=writer.pid,
                pid_start=process_start_ticks(writer.pid),
            )
        )
        with pytest.raises(LoopRuntimeError, match=rf"still running \(pid {writer.pid}\)"):
            PersistentExecutor(counting_loop(), loops_dir=loops).resume()
    finally:
        writer.kill()
        writer.wait()


def test_handoff_is_resumable_and_passes_the_note_on(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    fsm = FSMLoop(
        name="handoff",
        initial="work",
        states={
            "work": StateConfig(action="/ll:work", on_success="done", on_failure="done"),
            "done": StateConfig(terminal=True),
        },
    )
    fsm.llm.enabled = False
    prompts: list[str] = []

    class Claude:
        def run(self, request: ActionRequest) -> ActionResult:
            action = request.action
            prompts.append(action)
            if len(prompts) == 1:
                return ActionResult("half done\nCONTEXT_HANDOFF: finish b.py\n", "", 0, 1)
            return ActionResult("all done", "", 0, 1)

    first = PersistentExecutor(fsm, loops_dir=loops, action_runner=Claude()).run()
    assert first.terminated_by == "handoff"
    saved = StatePersistence("handoff", loops).load_state()
    assert saved is not None
    assert (saved.status, saved.continuation) == ("awaiting_continuation", "finish b.py")
    second = PersistentExecutor(fsm, loops_dir=loops, action_runner=Claude()).resume()
    assert second.terminated_by == "terminal"
    assert prompts[1] == "Continue from this handoff note: finish b.py\n\n/ll:work"


def test_a_huge_capture_keeps_a_bounded_tail_in_the_state_file(tmp_path: Path) -> None:
    # 1 MB of output, captured and evaluated: `captured` and `prev` keep the last 64 KiB
    # each, the state file stays small, and the .out file has every byte.
    from little_loops.fsm.engine.records import SAVED_TEXT_LIMIT

    fsm = FSMLoop(
        name="big",
        initial="shout",
        states={
            "shout": StateConfig(
                action="head -c 1000000 /dev/zero | tr '\\0' x; echo END; echo oops >&2",
                capture="loud",
                on_success="done",
                on_failure="done",
            ),
            "done": StateConfig(terminal=True),
        },
    )
    loops = tmp_path / ".loops"
    runner = DefaultActionRunner(cwd=tmp_path)
    result = PersistentExecutor(fsm, loops_dir=loops, action_runner=runner).run()
    assert result.terminated_by == "terminal"
    out_file = loops / ".running" / "big.shout.out"
    assert out_file.stat().st_size == 1_000_004
    state = StatePersistence("big", loops).load_state()
    assert state is not None
    loud = state.captured["loud"]
    assert loud["output"] == "x" * (SAVED_TEXT_LIMIT - 3) + "END"
    assert loud["stderr"] == "oops\n"
    assert loud["truncated"] is True
    assert loud["output_path"] == str(out_file)
    assert state.prev_result is not None
    assert state.prev_result["output"] == loud["output"]
    assert result.captured["loud"] == loud  # the run itself sees what a resume would see
    assert (loops / ".running" / "big.state.json").stat().st_size < 3 * SAVED_TEXT_LIMIT


def record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the files fsynced from now on (the fsync still happens)."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_start_and_end_are_fsynced_and_quick_states_at_most_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = record_fsyncs(monkeypatch)
    fsm = FSMLoop(
        name="quick",
        initial="a",
        states={"a": StateConfig(action="true", on_success="$current")},
        max_iterations=20,
    )
    loops = tmp_path / ".loops"
    runner = DefaultActionRunner(cwd=tmp_path)
    result = PersistentExecutor(fsm, loops_dir=loops, action_runner=runner).run()
    assert result.terminated_by == "max_iterations"
    state_saves = [p for p in synced if ".quick.state.json." in p]
    folder = [p for p in synced if p == str(loops / ".running")]
    # loop_start and loop_complete; the 20 state entries take well under a second
    assert len(state_saves) == len(folder) == 2
    assert StatePersistence("quick", loops).load_state() is not None


# --- a stop at any moment, then resume, behaves like an uninterrupted run ----------------


class AlwaysRunner:
    """check fails, everything else succeeds: deterministic routes for any interleaving."""

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        return ActionResult("", "", 1 if action.startswith("check") else 0, 0)


LOOPS = {
    "retry": {
        "name": "retry",
        "initial": "check",
        "max_iterations": 3,
        "backoff": 5,
        "states": {
            "check": {"action": "check", "on_failure": "fix", "on_success": "done"},
            "fix": {"action": "fix", "next": "check"},
            "done": {"terminal": True},
        },
    },
    "maintain": {
        "name": "maintain",
        "initial": "check",
        "max_iterations": 4,
        "backoff": 5,
        "maintain": True,
        "states": {
            "check": {"action": "ok", "on_success": "all_valid"},
            "other": {"action": "ok2", "on_success": "all_valid"},
            "all_valid": {"action": "report", "terminal": True, "on_maintain": "other"},
        },
    },
    "current": {
        "name": "current",
        "initial": "check",
        "max_iterations": 3,
        "backoff": 5,
        "states": {
            "check": {"action": "check", "route": {"failure": "$current", "success": "done"}},
            "done": {"terminal": True},
        },
    },
}


class StopAtEvent:
    """Event callback that asks for a stop at the k-th event."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.seen: list[dict[str, Any]] = []
        self.executor: PersistentExecutor | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        self.seen.append(event)
        if len(self.seen) == self.k and self.executor is not None:
            self.executor.request_shutdown("stopped")


def _routes(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["from"], e["to"], e["verdict"]) for e in events if e["event"] == "route"]


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_stop_at_any_event_then_resume_matches_an_uninterrupted_run(
    tmp_path: Path, name: str
) -> None:
    fsm = FSMLoop.from_dict(LOOPS[name])
    whole: list[dict[str, Any]] = []
    expected = PersistentExecutor(
        fsm,
        loops_dir=tmp_path / "whole",
        action_runner=AlwaysRunner(),
        event_callback=whole.append,
        sleep=lambda s: None,
    ).run()
    for k in range(1, len(whole) - 1):
        loops = tmp_path / f"stop{k}"
        stopper = StopAtEvent(k)
        first = PersistentExecutor(
            fsm,
            loops_dir=loops,
            action_runner=AlwaysRunner(),
            sleep=lambda s: None,
            event_callback=stopper,
        )
        stopper.executor = first
        seen = stopper.seen
        stopped = first.run()
        if stopped.terminated_by != "stopped":
            continue  # the stop came too late to matter
        rest: list[dict[str, Any]] = []
        result = PersistentExecutor(
            fsm,
            loops_dir=loops,
            action_runner=AlwaysRunner(),
            sleep=lambda s: None,
            event_callback=rest.append,
        ).resume()
        assert _routes(seen) + _routes(rest) == _routes(whole), f"stop at event {k}"
        assert (result.terminated_by, result.iterations) == (
            expected.terminated_by,
            expected.iterations,
        ), f"stop at event {k} ({seen[-1]['event']})"


def test_a_stop_during_the_continued_prompt_keeps_the_handoff_note(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    fsm = FSMLoop(
        name="handoff",
        initial="work",
        states={
            "work": StateConfig(action="/ll:work", on_success="done", on_failure="done"),
            "done": StateConfig(terminal=True),
        },
    )
    fsm.llm.enabled = False
    prompts: list[str] = []
    holder: dict[str, PersistentExecutor] = {}

    class Claude:
        def run(self, request: ActionRequest) -> ActionResult:
            action = request.action
            prompts.append(action)
            if len(prompts) == 1:
                return ActionResult("CONTEXT_HANDOFF: step 3 of 7\n", "", 0, 1)
            if len(prompts) == 2:
                holder["run"].request_shutdown("interrupted")  # Ctrl-C mid-prompt
            return ActionResult("done", "", 0, 1)

    assert (
        PersistentExecutor(fsm, loops_dir=loops, action_runner=Claude()).run().terminated_by
        == "handoff"
    )
    holder["run"] = PersistentExecutor(fsm, loops_dir=loops, action_runner=Claude())
    assert holder["run"].resume().terminated_by == "interrupted"
    assert (
        PersistentExecutor(fsm, loops_dir=loops, action_runner=Claude()).resume().terminated_by
        == "terminal"
    )
    assert prompts[2] == prompts[1] == "Continue from this handoff note: step 3 of 7\n\n/ll:work"


# --- moved from test_spend.py ---


class TestBudget:
    def test_spend_is_saved_and_survives_resume(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_claude(tmp_path, monkeypatch, cost=0.25)
        loops = tmp_path / ".loops"
        fsm = prompt_loop(max_iterations=2)
        first = PersistentExecutor(
            fsm, loops_dir=loops, action_runner=DefaultActionRunner(cwd=tmp_path)
        )
        assert first.run().terminated_by == "max_iterations"
        state = StatePersistence("spender", loops).load_state()
        assert state is not None
        assert state.cost_usd == pytest.approx(0.5)
        assert state.usage["claude_output_tokens"] == 160


# --- the event log is the record: held events, rotation, fsync policy ---------------------


def spin(n: int, backoff: float | None = None) -> FSMLoop:
    return FSMLoop(
        name="spin",
        initial="a",
        states={"a": StateConfig(action="true", capture="c", on_success="$current")},
        max_iterations=n,
        backoff=backoff,
    )


def test_the_log_alone_rebuilds_the_run_at_every_event_written(tmp_path: Path) -> None:
    """Whatever the state file says, the snapshot of loop_start plus the log is the run."""
    loops = tmp_path / ".loops"
    seen: list[tuple[int, int]] = []
    pe = PersistentExecutor(
        counting_loop(), loops_dir=loops, action_runner=DefaultActionRunner(cwd=tmp_path)
    )
    pe.persistence.initialize()

    def check(event: dict[str, Any]) -> None:
        if event["event"] in ("action_start", "action_complete"):  # written, not held
            store = StatePersistence("count", loops)
            state = store.load_state()
            assert state is not None
            assert (state.current_state, state.iteration) == (
                pe.executor.current_state,
                pe.executor.passes.iteration,
            )
            assert state.captured == pe.executor.captured
            seen.append((state.iteration, len(state.captured)))

    pe._user_callback = check
    assert pe.run().terminated_by == "terminal"
    assert len(seen) > 10


def test_held_events_are_written_before_a_backoff_wait(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    during_wait: list[str] = []

    def sleep(seconds: float) -> None:
        during_wait.append(StatePersistence("spin", loops).read_events()[-1]["event"])

    runner = DefaultActionRunner(cwd=tmp_path)
    PersistentExecutor(spin(3, backoff=5), loops_dir=loops, action_runner=runner, sleep=sleep).run()
    assert during_wait == ["route", "route"]


def test_a_long_run_rotates_its_log_and_resumes_across_the_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from little_loops.fsm.runs import eventlog, persistent

    monkeypatch.setattr(persistent, "SEGMENT_BYTES", 4000)
    loops = tmp_path / ".loops"
    stopper = StopAtEvent(400)
    first = PersistentExecutor(
        spin(150), loops_dir=loops, action_runner=AlwaysRunner(), event_callback=stopper
    )
    stopper.executor = first
    assert first.run().terminated_by == "stopped"
    store = StatePersistence("spin", loops)
    parts = store.log.files.events_segments()
    assert len(parts) == eventlog.SEGMENTS_KEPT
    assert parts[0] > 1  # the oldest parts were dropped
    stopped = store.load_state()
    assert stopped is not None
    result = PersistentExecutor(spin(150), loops_dir=loops, action_runner=AlwaysRunner()).resume()
    assert (result.terminated_by, result.iterations) == ("max_iterations", 150)
    assert store.tail_events(1)[0]["event"] == "loop_complete"
    assert stopped.iteration < 150


def test_a_crash_between_rotating_and_the_next_snapshot_loses_nothing(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    runner = DefaultActionRunner(cwd=tmp_path)
    PersistentExecutor(spin(5), loops_dir=loops, action_runner=runner).run()
    store = StatePersistence("spin", loops)
    done = store.load_state()
    assert done is not None
    store.log.rotate()  # as a rotation does, after its snapshot: then the process died
    assert store.load_state() == done
    store.log.append({"event": "x", "ts": "t", "saved": {"iteration": 99}})
    after = store.load_state()
    assert after is not None
    assert after.iteration == 99  # the new part is read after the rotated one


def test_the_log_is_fsynced_at_the_start_the_end_and_at_most_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = record_fsyncs(monkeypatch)
    loops = tmp_path / ".loops"
    PersistentExecutor(spin(50), loops_dir=loops, action_runner=AlwaysRunner()).run()
    log_syncs = [p for p in synced if p.endswith("spin.events.jsonl")]
    assert 2 <= len(log_syncs) <= 3  # 50 quick steps take well under a second
    from little_loops.fsm.runs import persistent

    monkeypatch.setattr(persistent, "DURABLE_INTERVAL_S", 0.0)
    synced.clear()
    PersistentExecutor(spin(50), loops_dir=loops, action_runner=AlwaysRunner()).run()
    assert len([p for p in synced if p.endswith("spin.events.jsonl")]) >= 100


def test_an_end_that_cannot_be_written_is_said_and_the_run_stays_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loops = tmp_path / ".loops"
    store = StatePersistence("count", loops)
    write = store.append_event

    def full_at_the_end(event: dict[str, Any], *, hold: bool = False) -> Any:
        if event.get("event") == "loop_complete":
            raise OSError(28, "No space left on device")
        return write(event, hold=hold)

    monkeypatch.setattr(store, "append_event", full_at_the_end)
    notes: list[str] = []
    runner = DefaultActionRunner(cwd=tmp_path)
    executor = PersistentExecutor(
        counting_loop(), store, action_runner=runner, on_note=notes.append
    )
    result = executor.run()
    assert result.terminated_by == "terminal"
    assert len(notes) == 1
    assert (
        "count.events.jsonl: cannot write the end of the run (No space left on device," in notes[0]
    )
    assert notes[0].endswith("resume it once that is fixed: ll-loop resume count")
    saved = StatePersistence("count", loops).load_state()
    assert saved is not None
    assert saved.status == "running"  # the log's last word: resumable


def test_a_killed_write_of_the_kept_loop_leaves_no_temp_file_behind(tmp_path: Path) -> None:
    # kill -9 while `.count.loop.json` was being written left its temp file; the next run of
    # the loop (it holds the loop's lock) removes it, as it does for the state file's.
    from little_loops.fsm.facts.layout import RunFiles, temp_file

    loops = tmp_path / ".loops"
    running = loops / ".running"
    running.mkdir(parents=True)
    definition = RunFiles("count", loops, running).definition
    dead = temp_file(definition, 0x7FFFFFF0)
    dead.write_bytes(b'{"half": ')
    runner = DefaultActionRunner(cwd=tmp_path)
    PersistentExecutor(counting_loop(), loops_dir=loops, action_runner=runner).run()
    assert not dead.exists()
    assert json.loads(definition.read_text())["name"] == "count"


def test_the_context_is_copied_for_the_log_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context is saved with the run's events (the guards add to it in place): it is
    copied again when it changed, not at each of the 40 events written, and a change made
    in place mid-run is saved."""
    fsm = FSMLoop(
        name="spin",
        initial="work",
        states={"work": StateConfig(action="true", on_success="$current", on_failure="$current")},
        max_iterations=20,
        context={"big": [{"n": n} for n in range(1000)], "log": []},
    )
    copies: list[object] = []
    real = copy.deepcopy

    def counted(value: Any, memo: Any = None) -> Any:
        if value is fsm.context:
            copies.append(value)
        return real(value, memo)

    class AddsOnce:
        """A runner whose tenth action adds to the context in place, as a guard does."""

        calls = 0

        def run(self, request: ActionRequest) -> ActionResult:
            self.calls += 1
            if self.calls == 10:
                fsm.context["log"].append("tenth")
            return ActionResult("", "", 0, 1)

    monkeypatch.setattr(copy, "deepcopy", counted)
    loops = tmp_path / ".loops"
    result = PersistentExecutor(fsm, loops_dir=loops, action_runner=AddsOnce()).run()
    assert result.iterations == 20
    state = StatePersistence("spin", loops).load_state()
    assert state is not None
    assert state.context["log"] == ["tenth"]
    lines = [json.loads(line) for line in (loops / ".running/spin.events.jsonl").open()]
    saved = [e["event"] for e in lines if "tenth" in json.dumps(e.get("saved", {}))]
    assert saved[0] == "action_complete"  # with the tenth action's end, not only the run's
    assert len(copies) == 4, len(copies)  # the start, the first event, the change, the end
