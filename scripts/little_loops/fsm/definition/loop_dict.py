"""A loop model written back as plain data, keys in reading order (`FSMLoop.to_dict`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from little_loops.fsm.definition.metadata import kept
from little_loops.fsm.definition.run_keys import RUN_LOOP_KEYS
from little_loops.fsm.values.fields import non_default_items as _non_default_items

if TYPE_CHECKING:
    from little_loops.fsm.definition.model import FSMLoop


def loop_to_dict(self: FSMLoop) -> dict[str, Any]:
    """The loop as plain data, keys in reading order: name, initial, context, states,
    then settings; fields left at their defaults are dropped."""
    rest = _non_default_items(self)
    out: dict[str, Any] = {"name": self.name}
    if self.paradigm is not None:
        out["paradigm"] = self.paradigm
    out["initial"] = self.initial
    if self.context:
        out["context"] = self.context
    if self.parameters:
        out["parameters"] = {name: p.to_dict() for name, p in self.parameters.items()}
    out["states"] = {name: state.to_dict() for name, state in self.states.items()}
    for key in (
        "scope",
        "max_iterations",
        "backoff",
        "timeout",
        "idle_timeout",
        "max_cost_usd",
        "maintain",
        "worktree",
        "commit",
        "agent",
        "max_steps",
        "on_max_steps",
        "on_max_iterations",
        "artifact_versioning",
    ):
        if key in rest:
            out[key] = rest[key]
    out.update((key, rest[key]) for key in RUN_LOOP_KEYS if key in rest)
    llm = self.llm.to_dict()
    if llm:
        out["llm"] = llm
    archive = self.archive.to_dict()
    if archive:
        out["archive"] = archive
    if self.stall is not None:
        out["stall"] = self.stall.to_dict()
    out.update((key, dict(block)) for key, block in self.options.items() if block)
    if self.agents:
        out["agents"] = {name: agent.to_dict() for name, agent in self.agents.items()}
    if self.notify is not None:
        out["notify"] = self.notify.to_dict()
    if self.retry is not None:
        out["retry"] = self.retry.to_dict()
    if self.circuit is not None:
        out["circuit"] = self.circuit.to_dict()
    rate_limit = self.rate_limit.to_dict()
    if rate_limit:
        out["rate_limit"] = rate_limit
    out.update(kept(rest), **self.lint_ok)
    return out
