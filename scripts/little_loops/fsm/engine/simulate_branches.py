"""A fan-out state in a rehearsal: its branches' scripted verdicts, joined as a run joins them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from little_loops.fsm.definition.model.fanout import (
    JOIN_ANY,
    JOIN_BEST,
    FanOutConfig,
    MapConfig,
    fan_out_of,
)
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.verdict_words import canonical_verdict
from little_loops.fsm.fanout.branches import FAILURE, STOPPED, SUCCESS, Branch, BranchRecord
from little_loops.fsm.fanout.join import join

BRANCH_VERDICTS = (SUCCESS, FAILURE, STOPPED)  # what a branch can end with


def branch_labels(config: FanOutConfig) -> list[str] | None:
    """How each branch is named (a map's item, a parallel branch's loop), in branch order;
    None for a map whose items are only known when it runs."""
    if isinstance(config, MapConfig):
        items = config.items
        return [str(item) for item in items] if isinstance(items, list) else None
    return [str(b.get("loop")) for b in getattr(config, "branches", [])]


def check_branch_script(fsm: FSMLoop, script: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """*script* (fan-out state -> a verdict per branch) with each verdict in our words;
    LoopDefinitionError naming the problem when a state is no fan-out state, a verdict is
    not one a branch ends with, or the count is not the state's number of branches."""
    checked: dict[str, list[str]] = {}
    for name, given in script.items():
        state = fsm.states.get(name)
        config = None if state is None else fan_out_of(state)
        if config is None:
            fans = [n for n, s in fsm.states.items() if fan_out_of(s) is not None]
            which = f" (its fan-out states: {', '.join(fans)})" if fans else " (it has none)"
            raise LoopDefinitionError(
                f"--branch-verdicts: '{name}' is not a fan-out state of loop '{fsm.name}'{which}"
            )
        verdicts = [canonical_verdict(v) for v in given]
        wrong = next((v for v in verdicts if v not in BRANCH_VERDICTS), None)
        if wrong is not None:
            raise LoopDefinitionError(
                f"--branch-verdicts: '{wrong}' is not how a branch ends"
                f" ({', '.join(BRANCH_VERDICTS)})"
            )
        labels = branch_labels(config)
        if labels is not None and len(labels) != len(verdicts):
            raise LoopDefinitionError(
                f"--branch-verdicts: state '{name}' has {len(labels)} branches"
                f" ({', '.join(labels)}), given {len(verdicts)} verdicts"
            )
        checked[name] = verdicts
    return checked


def joined(config: FanOutConfig, verdicts: Sequence[str]) -> str:
    """The fan-out's verdict for its branches ending with *verdicts*, by its `join:`.
    `best` runs no score command in a rehearsal: any successful branch stands for the best."""
    records = []
    for index, verdict in enumerate(verdicts):
        record = BranchRecord(Branch(index, ""), "", "", None, None)
        record.verdict = verdict
        records.append(record)
    how = JOIN_ANY if config.join == JOIN_BEST else config.join
    return join(how, records, None, Path(".")).verdict  # all, any: no score, no folder
