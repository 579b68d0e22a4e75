"""Join a fan-out's branches into one verdict: `all`, `any`, or the `best` by a score command."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.definition.fanout import JOIN_ALL, JOIN_ANY, JOIN_BEST, JOINS
from little_loops.fsm.fanout.branches import FAILURE, SUCCESS, BranchRecord

SCORE_TIMEOUT = 600.0  # seconds a score command may take in one branch
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Joined:
    """The fan-out's verdict and the branches it picked: every successful one (`all`,
    `any`), or the best one (`best`)."""

    verdict: str
    picked: tuple[BranchRecord, ...]


def join(how: str, records: Sequence[BranchRecord], score: str | None, here: Path) -> Joined:
    """Join *records* by *how* (`all`, `any`, `best`); *score* is `best`'s bash command,
    run in each successful branch's worktree (*here* outside a repository)."""
    green = tuple(r for r in records if r.verdict == SUCCESS)
    if how == JOIN_ALL:
        whole = len(green) == len(records)  # a map of no items has nothing left to do
        return Joined(SUCCESS if whole else FAILURE, green)
    if how == JOIN_ANY:
        return Joined(SUCCESS if green else FAILURE, green[:1])
    if how != JOIN_BEST:
        raise ValueError(f"join: {how!r} is not one of {', '.join(JOINS)}")
    scored = []
    for record in green:
        record.score = None if score is None else run_score(score, record.worktree or here)
        if record.score is not None:
            scored.append(record)
    if not scored:
        return Joined(FAILURE, ())
    best = max(scored, key=lambda r: (r.score, -r.branch.index))
    return Joined(SUCCESS, (best,))


def run_score(command: str, where: Path, timeout: float = SCORE_TIMEOUT) -> float | None:
    """The last number *command* (`bash -c`, in *where*) printed on its standard output;
    None when it failed, printed no number or ran out of time (its process group ended)."""
    if not where.is_dir():
        return None
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=where,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
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
