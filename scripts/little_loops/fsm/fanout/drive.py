"""One fan-out from start to merge: run (pool), joined (join), merged (merge), resumable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.fanout import JOIN_ALL, MERGE_NONE
from little_loops.fsm.facts.events import Event
from little_loops.fsm.fanout.branches import Branch, BranchRecord
from little_loops.fsm.fanout.join import Joined, Judge, join
from little_loops.fsm.fanout.merge import merge, tidy, to_merge
from little_loops.fsm.fanout.pool import (
    BRANCH_FINISH,
    BRANCH_START,
    STOP_REQUESTED,
    Emit,
    FanOut,
    FanOutSpec,
)

FANOUT_JOIN = Event.FANOUT_JOIN
FANOUT_MERGE = Event.FANOUT_MERGE


@dataclass(frozen=True)
class Plan:
    """A fan-out as its state declares it: what runs, how it joins and what it merges."""

    spec: FanOutSpec
    join: str = JOIN_ALL
    merge: str = MERGE_NONE
    score: str | None = None  # `join: best`: the command whose last number is the score
    judge: Judge | None = None  # `join: best` by the LLM judge (fanout/judge.py)
    score_env: Mapping[str, str] | None = None  # the values the score's `${...}` read


@dataclass(frozen=True)
class Ending:
    """How the fan-out ended: its verdict (None: stopped, to be resumed), every branch's
    record, the ones merged and those a merge refused, and why it ended early."""

    verdict: str | None
    records: tuple[BranchRecord, ...]
    merged: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    stopped_by: str | None = None
    cost_usd: float = 0.0
    joined: Joined | None = None  # the join, when it was made by this run (not before a crash)

    def figures(self) -> dict[str, Any]:
        """The fan-out as later states read it (`${fanout.STATE.*}`)."""
        return {
            "verdict": self.verdict or "",
            "reason": self.joined.reason if self.joined is not None else "",
            "picked": [r.key for r in self.joined.picked] if self.joined is not None else [],
            "stopped_by": self.stopped_by or "",
            "cost_usd": round(self.cost_usd, 6),
            "merged": list(self.merged),
            "refused": [{"key": key, "reason": why} for key, why in self.refused],
            "branches": [r.figures() | {"merged": r.merged or ""} for r in self.records],
        }


def prior_records(
    events: Iterable[Mapping[str, Any]], branches: Sequence[Branch], loops_dir: Path
) -> tuple[dict[int, BranchRecord], str | None]:
    """The records of a fan-out interrupted before, from its events (in order): each branch
    started, and how it ended when it did; and the commit its branches started from."""
    by_index = {b.index: b for b in branches}
    records: dict[int, BranchRecord] = {}
    base: str | None = None
    for event in events:
        index = event.get("index")
        if not isinstance(index, int) or index not in by_index:
            continue
        if event.get("event") == BRANCH_START:
            worktree = str(event.get("worktree") or "")
            records[index] = BranchRecord(
                by_index[index],
                str(event.get("run_id") or ""),
                str(event.get("key") or ""),
                str(event.get("branch") or "") or None,
                Path(worktree) if worktree else None,
            )
            base = str(event.get("base") or "") or base
        elif event.get("event") == BRANCH_FINISH and index in records:
            record = records[index]
            record.outcome = str(event.get("outcome") or "")
            record.verdict = str(event.get("verdict") or "")
            cost = event.get("cost_usd")
            record.cost_usd = float(cost) if isinstance(cost, int | float) else 0.0
            code = event.get("exit_code")
            record.exit_code = code if isinstance(code, int) else None
    return records, base


def fan_out(
    plan: Plan,
    emit: Emit,
    should_stop: Callable[[], bool] = lambda: False,
    before: Iterable[Mapping[str, Any]] = (),
) -> Ending:
    """Run *plan* to its end (from the events *before* of an interrupted run of it): a
    branch that ended is not run again, a join or merge recorded is not done again."""
    spec = plan.spec
    before = list(before)
    prior, base = prior_records(before, spec.branches, spec.loops_dir)
    pool = FanOut(spec, emit, should_stop, prior, base)
    ran = pool.run()
    if ran.stopped_by == STOP_REQUESTED:
        return Ending(None, tuple(ran.records), stopped_by=ran.stopped_by, cost_usd=ran.cost_usd)
    joined_before = _last(before, FANOUT_JOIN)
    if joined_before is not None:  # joined before the crash: the same verdict and pick
        keys = joined_before.get("picked") or []
        picked = tuple(r for r in ran.records if r.key in keys)
        verdict = str(joined_before.get("verdict") or "")
        joined = Joined(verdict, picked, str(joined_before.get("reason") or ""))
    else:
        joined = join(
            plan.join,
            ran.records,
            plan.score,
            spec.loops_dir.parent,
            plan.judge,
            pool.base,
            plan.score_env,
        )
        emit(
            FANOUT_JOIN,
            {
                "join": plan.join,
                "verdict": joined.verdict,
                "picked": [r.key for r in joined.picked],
                "reason": joined.reason,
                "stopped_by": ran.stopped_by or "",
            },
        )
    project = spec.loops_dir.parent
    merged_before = _last(before, FANOUT_MERGE)
    if merged_before is not None:
        merged = tuple(str(k) for k in merged_before.get("merged") or [])
        refused = tuple(
            (str(r.get("key")), str(r.get("reason")))
            for r in merged_before.get("refused") or []
            if isinstance(r, dict)
        )
        told = {**dict.fromkeys(merged, "merged"), **{k: f"not merged: {w}" for k, w in refused}}
        for record in ran.records:  # what the merge did with each, as the run before said
            record.merged = told.get(record.key, record.merged)
        tidy(merged, ran.records, project)  # what a kill before it left
        return Ending(
            joined.verdict,
            tuple(ran.records),
            merged,
            refused,
            ran.stopped_by,
            ran.cost_usd,
            joined,
        )
    done = merge(to_merge(plan.merge, ran.records, joined.picked), project, pool.base)
    merged = tuple(r.key for r in done.merged)
    refused = tuple((r.key, why) for r, why in done.refused)
    if plan.merge != MERGE_NONE:
        said = [{"key": key, "reason": why} for key, why in refused]
        emit(FANOUT_MERGE, {"merge": plan.merge, "merged": list(merged), "refused": said})
    tidy(merged, ran.records, project)
    return Ending(
        joined.verdict, tuple(ran.records), merged, refused, ran.stopped_by, ran.cost_usd, joined
    )


def _last(events: Iterable[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    found = None
    for event in events:
        if event.get("event") == name:
            found = event
    return found
