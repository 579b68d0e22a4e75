"""A fan-out state's `parallel:` and `map:` blocks as dataclasses (loaded when a file has one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Its keys, their checks and docs (fanout_keys.py, which validate reads without the
# dataclasses below), named here too.
from little_loops.fsm.definition.model.fanout_keys import BRANCH_KEYS as BRANCH_KEYS
from little_loops.fsm.definition.model.fanout_keys import CHILD_LOOP as CHILD_LOOP
from little_loops.fsm.definition.model.fanout_keys import CHILD_LOOP_PATTERN as CHILD_LOOP_PATTERN
from little_loops.fsm.definition.model.fanout_keys import DEFAULT_ITEM_KEY as DEFAULT_ITEM_KEY
from little_loops.fsm.definition.model.fanout_keys import (
    DEFAULT_JUDGE_QUESTION as DEFAULT_JUDGE_QUESTION,
)
from little_loops.fsm.definition.model.fanout_keys import (
    DEFAULT_MAX_CONCURRENCY as DEFAULT_MAX_CONCURRENCY,
)
from little_loops.fsm.definition.model.fanout_keys import FANOUT_STATE_KEYS as FANOUT_STATE_KEYS
from little_loops.fsm.definition.model.fanout_keys import JOIN_ALL as JOIN_ALL
from little_loops.fsm.definition.model.fanout_keys import JOIN_ANY as JOIN_ANY
from little_loops.fsm.definition.model.fanout_keys import JOIN_BEST as JOIN_BEST
from little_loops.fsm.definition.model.fanout_keys import JOINS as JOINS
from little_loops.fsm.definition.model.fanout_keys import KEYS as KEYS
from little_loops.fsm.definition.model.fanout_keys import MAP_KEYS as MAP_KEYS
from little_loops.fsm.definition.model.fanout_keys import MAP_LOOP as MAP_LOOP
from little_loops.fsm.definition.model.fanout_keys import MERGE_BEST as MERGE_BEST
from little_loops.fsm.definition.model.fanout_keys import MERGE_GREEN as MERGE_GREEN
from little_loops.fsm.definition.model.fanout_keys import MERGE_NONE as MERGE_NONE
from little_loops.fsm.definition.model.fanout_keys import MERGES as MERGES
from little_loops.fsm.definition.model.fanout_keys import NOT_WITH_CHILD as NOT_WITH_CHILD
from little_loops.fsm.definition.model.fanout_keys import NOT_WITH_FANOUT as NOT_WITH_FANOUT
from little_loops.fsm.definition.model.fanout_keys import PARALLEL_KEYS as PARALLEL_KEYS
from little_loops.fsm.definition.model.fanout_keys import branch_label as branch_label
from little_loops.fsm.definition.model.fanout_keys import branch_problem as branch_problem
from little_loops.fsm.definition.model.fanout_keys import child_loop_problem as child_loop_problem
from little_loops.fsm.definition.model.fanout_keys import fan_out_of as fan_out_of
from little_loops.fsm.definition.model.fanout_keys import fanout_key_problems as fanout_key_problems


@dataclass
class FanOutConfig:
    """A fan-out's settings, as `parallel:` or `map:` writes them."""

    max_concurrency: int | None = None
    join: str = JOIN_ALL
    merge: str = MERGE_NONE
    score: str | None = None
    judge: bool | str | None = None  # `join: best` by the LLM judge: True, or its question
    max_cost_usd: float | None = None

    @property
    def judge_question(self) -> str | None:
        """What the judge is asked (None: no judge)."""
        if not self.judge:
            return None
        return self.judge if isinstance(self.judge, str) else DEFAULT_JUDGE_QUESTION

    def _common(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.max_concurrency is not None:
            out["max_concurrency"] = self.max_concurrency
        if self.join != JOIN_ALL:
            out["join"] = self.join
        if self.merge != MERGE_NONE:
            out["merge"] = self.merge
        if self.score is not None:
            out["score"] = self.score
        if self.judge:
            out["judge"] = self.judge
        if self.max_cost_usd is not None:
            out["max_cost_usd"] = self.max_cost_usd
        return out


def _common_of(data: Mapping[str, Any]) -> dict[str, Any]:
    cost = data.get("max_cost_usd")
    return {
        "max_concurrency": data.get("max_concurrency"),
        "join": data.get("join") or JOIN_ALL,
        "merge": data.get("merge") or MERGE_NONE,
        "score": data.get("score"),
        "judge": data.get("judge") or None,
        "max_cost_usd": None if cost is None else float(cost),
    }


@dataclass
class ParallelConfig(FanOutConfig):
    """`parallel:`: its branches, each a loop and its `with:` values."""

    branches: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ParallelConfig:
        branches = [dict(b) for b in data.get("branches") or [] if isinstance(b, Mapping)]
        return cls(branches=branches, **_common_of(data))

    def to_dict(self) -> dict[str, Any]:
        return {"branches": [dict(b) for b in self.branches], **self._common()}


@dataclass
class MapConfig(FanOutConfig):
    """`map:`: the items (a list, or `${...}` text), the child loop, the item's context key
    in the child (`as:`), and the child's other `with:` values."""

    items: list[Any] | str = field(default_factory=list)
    loop: str = ""
    prompt: str | None = None  # no loop: each item an agent given this prompt
    as_: str = DEFAULT_ITEM_KEY
    with_: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MapConfig:
        items = data.get("items")
        return cls(
            items=list(items) if isinstance(items, list) else str(items or ""),
            loop=str(data.get("loop") or ""),
            prompt=None if data.get("prompt") is None else str(data.get("prompt")),
            as_=str(data.get("as") or DEFAULT_ITEM_KEY),
            with_=dict(data.get("with") or {}),
            **_common_of(data),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"items": self.items}
        if self.prompt is not None:
            out["prompt"] = self.prompt
        else:
            out["loop"] = self.loop
        if self.as_ != DEFAULT_ITEM_KEY:
            out["as"] = self.as_
        if self.with_:
            out["with"] = dict(self.with_)
        return {**out, **self._common()}


FANOUT_ACTION_TYPE = "fanout"  # how simulate and the plan name a fan-out state's work


def fan_out_text(config: FanOutConfig) -> str:
    """A fan-out in one line, as `--dry-run` and `simulate` show it."""
    if isinstance(config, MapConfig):
        items = config.items
        count = f"{len(items)} items" if isinstance(items, list) else f"the items of {items}"
        what = f"map {count} over loop {config.loop} (as {config.as_})"
        if config.prompt is not None:
            what = f"map {count} as agents, each given the prompt"
    else:
        loops = [branch_label(b) for b in getattr(config, "branches", [])]
        what = f"parallel {len(loops)} branches: {', '.join(loops)}"
    at_once = config.max_concurrency or f"{DEFAULT_MAX_CONCURRENCY} (the default)"
    how = f"{at_once} at once, join {config.join}, merge {config.merge}"
    if config.max_cost_usd is not None:
        how += f", max_cost_usd {config.max_cost_usd:g}"
    return f"{what}; {how}"
