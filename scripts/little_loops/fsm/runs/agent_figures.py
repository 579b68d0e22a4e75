"""What each agent of a run cost, by model, and when a step went on with another agent (report)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.actions.registry import recorded
from little_loops.fsm.facts.events import Event
from little_loops.fsm.values.value_checks import is_finite

JUDGE = "judge"  # the row of the LLM judge's calls (`evaluate` events that cost)
KEEP_SWITCHES = 200  # the report lists the last this many `agent_switch` events


@dataclass
class AgentFigures:
    """One agent's part of a run: its actions, their cost and tokens, the cost by model."""

    actions: int = 0
    cost_usd: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    models: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "actions": self.actions,
            "cost_usd": round(self.cost_usd, 6),
            "tokens": self.tokens,
            "models": {name: round(cost, 6) for name, cost in self.models.items()},
        }


def agent_of(event: dict[str, Any]) -> str | None:
    """The agent an `action_start` ran (its `agent`; an older prompt's: claude), or None
    for a command."""
    agent = event.get("agent")
    if isinstance(agent, str) and agent:
        return agent
    kind = recorded(event.get("action_type"))
    return kind.name if kind is not None and kind.agent is not None else None


def _amount(value: object) -> float:
    """The dollars of an event's cost: 0 for none, and for what is no amount (NaN, inf, a
    negative: a damaged or foreign log), which would spoil the sums and `--json`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if is_finite(value) and value >= 0 else 0.0


def count(
    agents: dict[str, AgentFigures], agent: str, event: dict[str, Any], *, action: bool
) -> None:
    """Add an `action_complete` (*action*) or a judge's `evaluate` *event* to *agent*'s row."""
    cost, usage, models = event.get("cost_usd"), event.get("usage"), event.get("models")
    spent = _amount(cost)
    if not action and spent <= 0:
        return  # a verdict no model gave
    row = agents.setdefault(agent, AgentFigures())
    row.actions += 1 if action else 0
    row.cost_usd += spent
    if isinstance(usage, dict):
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                row.tokens[key] = row.tokens.get(key, 0) + value
    if isinstance(models, dict):
        for name, each in models.items():
            if isinstance(each, int | float) and not isinstance(each, bool):
                row.models[str(name)] = row.models.get(str(name), 0.0) + _amount(each)
    elif not action and isinstance(event.get("model"), str):
        row.models[event["model"]] = row.models.get(event["model"], 0.0) + spent


def switch_record(event: dict[str, Any]) -> dict[str, Any]:
    """An `agent_switch` event as the report keeps it."""
    keys = ("ts", "state", "from", "to", "reason", "resets")
    return {key: event[key] for key in keys if isinstance(event.get(key), str)}


class AgentBook:
    """A run's rows per agent and its switches, folded from its events one at a time."""

    def __init__(self) -> None:
        self.rows: dict[str, AgentFigures] = {}
        self.switches: deque[dict[str, Any]] = deque(maxlen=KEEP_SWITCHES)
        self.child_agent: str | None = None  # the agent of a sub-loop's latest action

    def add(self, kind: object, event: dict[str, Any], step_agent: str | None) -> None:
        """Take in *event* of the run itself; *step_agent*: the agent of its step."""
        if kind == Event.ACTION_COMPLETE and step_agent is not None:
            count(self.rows, step_agent, event, action=True)
        elif kind == Event.EVALUATE and "final_state" not in event:  # not a sub-loop's
            count(self.rows, JUDGE, event, action=False)
        elif kind == Event.AGENT_SWITCH:
            self.switches.append(switch_record(event))

    def add_nested(self, kind: object, event: dict[str, Any]) -> None:
        """A sub-loop's agents count in the rows of the run that started it (its cost is
        in its state's `evaluate` for the totals; the rows show whose it was)."""
        if kind == Event.ACTION_START:
            self.child_agent = agent_of(event)
        else:
            self.add(kind, event, self.child_agent)

    def to_dict(self) -> dict[str, Any]:
        return {name: row.to_dict() for name, row in self.rows.items()}
