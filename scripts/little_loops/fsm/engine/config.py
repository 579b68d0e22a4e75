"""How an executor is set up: one ExecutorConfig passed at construction, never fields poked."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Answers the question of an approval: (verdict, note), or None while none is given.
Answers = Callable[[dict[str, Any]], tuple[str, str] | None]


@dataclass(frozen=True)
class ExecutorConfig:
    """The options of one run's executor (a sub-loop's child gets its parent's)."""

    llm_client: Any = None  # the LLM judge's client (None: made when first needed)
    output_dir: Path | None = None  # where actions stream their output files
    output_key: str | None = None  # output files are `<key>.<state>.out`; None: the loop's name
    sleep: Callable[[float], None] | None = None  # waits (backoff, retry); None: a stop ends them
    worktree: Path | None = None  # a worktree run's top level: commit:/rollback: work there
    cwd: Path | None = None  # where its actions run (a sub-loop's `worktree:`); None: the runner's
    # The run's working tree (its worktree in a worktree run) and its `.loops/`: what a
    # sandboxed step may write and what it may only read (None: the current folder / none).
    workdir: Path | None = None
    loops_dir: Path | None = None
    stall_cwd: Path | None = None  # where the stall detector no_change_passes reads git
    wait_approval: bool = False  # wait for an approval's answer in this process
    answers: Answers | None = None  # where an approval's answer is read (runs/approvals.py)
    # Called once the answer taken is in the run's log: its source may forget it now.
    answer_kept: Callable[[], None] | None = None
    before_wait: Callable[[], None] | None = None  # called before the run waits (flush the log)
    depth: int = 0  # 0: the run's own loop; 1: a sub-loop's child; 2: its child ...
    # The agents of fallback lists that cannot run here (the preflight found), by name, with
    # the reason of the switch (`not_installed`, `not_ready`):
    # a step goes on with the next agent of its list and never starts one of them.
    unready: Mapping[str, str] = field(default_factory=dict)

    def child_key(self, parent: str, child: str) -> str | None:
        """The output key of a sub-loop *child* of loop *parent*: a worktree run's files
        (`<name>@<id>`) keep the id, so those of parallel runs of one parent never meet."""
        key = self.output_key
        if key is not None and key.startswith(parent) and key != parent:
            return child + key[len(parent) :]
        return None
