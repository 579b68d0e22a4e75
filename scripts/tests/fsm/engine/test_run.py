"""A run's parts: the rules in their one order, each owning its own fields of the snapshot."""

from __future__ import annotations

from dataclasses import fields

from support.engine_parts import Exits, loop, parts

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.run import Stopping
from little_loops.fsm.facts.outcomes import Outcome

FSM = loop(
    {"work": StateConfig(action="true", on_success="done"), "done": StateConfig(terminal=True)}
)


def test_the_position_and_the_rules_own_every_snapshot_field_once() -> None:
    run, _ = parts(FSM)
    owners: dict[str, str] = {}
    for part in (run.position, *run.rules()):
        for key in part.dump():
            assert key not in owners, f"{key}: {owners.get(key)} and {type(part).__name__}"
            owners[key] = type(part).__name__
    assert set(owners) == {f.name for f in fields(ExecutorSnapshot)}


def test_waiting_flushes_first_then_sleeps() -> None:
    said: list[str] = []
    config = ExecutorConfig(
        sleep=lambda s: said.append(f"sleep {s}"), before_wait=lambda: said.append("flush")
    )
    run, _ = parts(FSM, Exits(), config)
    run.wait(2.0)
    assert said == ["flush", "sleep 2.0"]


def test_entering_emits_state_enter_and_counts_the_state_in_the_pass() -> None:
    run, emitted = parts(FSM)
    run.enter()
    assert run.position.entered
    assert run.position.pass_states == ("work",)
    assert emitted.seen == [("state_enter", {"state": "work", "iteration": 0})]
    assert run.context().state_name == "work"


def test_a_stop_is_asked_once_with_its_reason() -> None:
    stopping = Stopping()
    assert stopping.asked() is None
    stopping.request(Outcome.STOPPED)
    assert stopping.asked() == Outcome.STOPPED
