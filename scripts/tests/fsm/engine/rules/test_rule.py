"""Every rule keeps to the Rule protocol: its slice dumps into snapshot fields and restores."""

from __future__ import annotations

from dataclasses import fields

from support.engine_parts import loop, parts

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot

FSM = loop(
    {"work": StateConfig(action="true", on_success="done"), "done": StateConfig(terminal=True)}
)


def test_each_rule_dumps_only_snapshot_fields_and_restores_them_unchanged() -> None:
    run, _ = parts(FSM)
    names = {f.name for f in fields(ExecutorSnapshot)}
    snap = ExecutorSnapshot(
        **run.position.dump(), **{k: v for r in run.rules() for k, v in r.dump().items()}
    )
    for rule in run.rules():
        before = rule.dump()
        assert set(before) <= names, type(rule).__name__
        rule.restore(snap)
        assert rule.dump() == before, type(rule).__name__
