"""Join a fan-out's branches into one verdict: `all`, `any`, or `best` by a score or the judge."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.fanout import JOIN_ALL, JOIN_ANY, JOIN_BEST, JOINS
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.fanout.branches import FAILURE, SUCCESS, BranchRecord
from little_loops.fsm.fanout.judge import Judgement
from little_loops.fsm.processes.containment import CONTAINMENT

# `join: best` by the judge: the successful branches and the commit they started from in,
# its pick (or why it has none) out.
Judge = Callable[[Sequence[BranchRecord], str | None], Judgement]

SCORE_TIMEOUT = 600.0  # seconds a score command may take in one branch
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Joined:
    """The fan-out's verdict and the branches it picked: every successful one (`all`,
    `any`), or the best one (`best`); for `best`, why (the judge's reason, or the scores'
    tie) and the judge's evaluation details."""

    verdict: str
    picked: tuple[BranchRecord, ...]
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def join(
    how: str,
    records: Sequence[BranchRecord],
    score: str | None,
    here: Path,
    judge: Judge | None = None,
    base: str | None = None,
    score_env: Mapping[str, str] | None = None,
) -> Joined:
    """Join *records* by *how* (`all`, `any`, `best`); *score* is `best`'s bash command,
    run in each successful branch's worktree (*here* outside a repository), or *judge* the
    LLM judge that picks among them from their changes since *base* (its `error` verdict: it
    could not)."""
    green = tuple(r for r in records if r.verdict == SUCCESS)
    if how == JOIN_ALL:
        whole = len(green) == len(records)  # a map of no items has nothing left to do
        return Joined(SUCCESS if whole else FAILURE, green)
    if how == JOIN_ANY:
        return Joined(SUCCESS if green else FAILURE, green[:1])
    if how != JOIN_BEST:
        raise ValueError(f"join: {how!r} is not one of {', '.join(JOINS)}")
    if judge is not None:
        if not green:
            return Joined(FAILURE, (), "no branch succeeded")
        judged = judge(green, base)
        if judged.picked is None:
            return Joined(ERROR_VERDICT, (), judged.reason, judged.details)
        return Joined(SUCCESS, (judged.picked,), judged.reason, judged.details)
    scored = []
    for record in green:
        where = record.worktree or here
        record.score = None if score is None else run_score(score, where, env=score_env)
        if record.score is not None:
            scored.append(record)
    if not scored:
        return Joined(FAILURE, ())
    best = max(scored, key=lambda r: (r.score, -r.branch.index))
    tied = [r.key for r in scored if r.score == best.score]
    reason = f"score {best.score:g}"
    if len(tied) > 1:
        reason += f", tied with {', '.join(k for k in tied if k != best.key)}: the first wins"
    return Joined(SUCCESS, (best,), reason)


def run_score(
    command: str,
    where: Path,
    timeout: float = SCORE_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> float | None:
    """The last number *command* (`bash -c`, in *where*, with *env* added: the values its
    `${...}` references read) printed on its standard output;
    None when it failed, printed no number or ran out of time (its process group ended)."""
    if not where.is_dir():
        return None
    child = CONTAINMENT.start(
        ["bash", "-c", command],
        cwd=where,
        env={**os.environ, **(env or {})},
        streams=(subprocess.DEVNULL, subprocess.PIPE, subprocess.DEVNULL),
    )
    process = child.process
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.reap()  # SIGKILL to its process group and what it left: no score
        process.communicate()
        return None
    if process.returncode != 0:
        return None
    found = _NUMBER.findall(out.decode("utf-8", "replace"))
    try:
        value = float(found[-1]) if found else None
    except ValueError:
        return None
    return value if value is not None and value == value and abs(value) != float("inf") else None
