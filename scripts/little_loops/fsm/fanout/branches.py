"""A fan-out's branches: what each child runs, where, and how it ended (its record)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A branch's verdict: it succeeded, failed, or was stopped before its end (by `join: any`,
# the shared budget, a stop or Ctrl-C).
SUCCESS = "success"
FAILURE = "failure"
STOPPED = "stopped"

# What the fan-out's own events carry of a branch (the names of `${fanout.STATE.N.*}`).
RECORD_KEYS = (
    "index",
    "item",
    "loop",
    "key",
    "branch",
    "worktree",
    "outcome",
    "verdict",
    "cost_usd",
)


@dataclass(frozen=True)
class Branch:
    """One child of a fan-out: loop *loop* (the loop's name: its runs' files and branches
    are named by it) run with *bindings* (`--set KEY=VALUE`); *item* is the map item (or
    the branch's label) it stands for; *source*, what `ll-loop run` is given when it is not
    *loop* (a shipped loop's file)."""

    index: int
    loop: str
    bindings: Mapping[str, str] = field(default_factory=dict)
    item: str = ""
    source: str = ""
    options: tuple[str, ...] = ()  # more `ll-loop run` options (`--max-cost` of a prompt's)


@dataclass
class BranchRecord:
    """A branch as it runs and ends: its run (`LOOP@ID`), git branch and worktree (None
    outside a repository), process, and once ended its outcome, verdict and cost."""

    branch: Branch
    run_id: str
    key: str
    git_branch: str | None
    worktree: Path | None
    pid: int | None = None
    outcome: str | None = None  # the child's `terminated_by` (or its status) once ended
    verdict: str | None = None  # SUCCESS, FAILURE or STOPPED once ended
    cost_usd: float = 0.0
    exit_code: int | None = None
    started: float | None = None
    finished: float | None = None
    score: float | None = None  # `join: best`: what its score command printed
    merged: str | None = None  # what the merge did with it, one line

    @property
    def ended(self) -> bool:
        return self.verdict is not None

    def figures(self) -> dict[str, Any]:
        """The branch as events and `${fanout.*}` show it."""
        return {
            "index": self.branch.index,
            "item": self.branch.item,
            "loop": self.branch.loop,
            "key": self.key,
            "branch": self.git_branch or "",
            "worktree": str(self.worktree or ""),
            "outcome": self.outcome or "",
            "verdict": self.verdict or "",
            "cost_usd": round(self.cost_usd, 6),
        }


# The one-state child loop a prompt branch (`{agent: NAME, prompt: TEXT}`) runs as.
PROMPT_LOOP = Path(__file__).with_name("prompt.yaml")
PROMPT_LOOP_NAME = "prompt"  # its name (a run is named by its file)


def prompt_branch(index: int, agent: str, prompt: str, max_cost_usd: float | None) -> Branch:
    """The branch that gives *prompt* to *agent* (a name, or a comma-separated fallback list),
    run with the fan-out's budget as its own (a spend it cannot count stops it, as in any
    budgeted run)."""
    bindings = {"agent": agent, "prompt": prompt}
    options = () if max_cost_usd is None else ("--max-cost", repr(max_cost_usd))
    return Branch(index, PROMPT_LOOP_NAME, bindings, f"{agent} prompt", str(PROMPT_LOOP), options)


def ll_loop(*args: str) -> list[str]:
    """The command line of `ll-loop ARGS...` with this interpreter (a child uses the same
    package as its parent)."""
    return [sys.executable, "-m", "little_loops.cli", *args]


def run_command(record: BranchRecord, base: str | None) -> list[str]:
    """`ll-loop run LOOP --run-id ID [--worktree --base SHA] --set KEY=VALUE...`."""
    argv = ll_loop("run", record.branch.source or record.branch.loop, "--run-id", record.run_id)
    if record.worktree is not None and base:
        argv += ["--worktree", "--base", base]
    argv += list(record.branch.options)
    for key, value in record.branch.bindings.items():
        argv += ["--set", f"{key}={value}"]
    return argv
