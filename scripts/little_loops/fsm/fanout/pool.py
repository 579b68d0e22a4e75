"""Run a fan-out's branches, `max_concurrency` at a time, each a child `ll-loop run`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import (
    RUN_ID_ALPHABET,
    RUN_ID_LENGTH,
    run_files,
    run_key,
    worktree_branch,
    worktree_path,
)
from little_loops.fsm.fanout import children
from little_loops.fsm.fanout.branches import (
    FAILURE,
    STOPPED,
    SUCCESS,
    Branch,
    BranchRecord,
    ll_loop,
    run_command,
)
from little_loops.fsm.processes.gitcmd import git

BRANCH_START = Event.BRANCH_START
BRANCH_FINISH = Event.BRANCH_FINISH
POLL = 0.05  # seconds between looks at the running children

Emit = Callable[[str, dict[str, Any]], None]

# How a fan-out stopped early (None: every branch ran to its end).
STOP_ANY = "any"  # `join: any` had its success
STOP_BUDGET = "budget"  # the shared max_cost_usd was reached
STOP_TIMEOUT = "timeout"
STOP_REQUESTED = "stopped"  # a stop or Ctrl-C


@dataclass(frozen=True)
class FanOutSpec:
    """What to run: the branches, how many at once, whether the first success ends it,
    the shared budget and deadline (seconds from now), and the project (*loops_dir*)."""

    branches: Sequence[Branch]
    loops_dir: Path
    max_concurrency: int | None = None
    stop_on_success: bool = False
    max_cost_usd: float | None = None
    timeout_s: float | None = None
    grace_s: float = children.STOP_GRACE


@dataclass
class FanOutResult:
    """Each branch's record (in branch order) and why the fan-out ended early, if it did."""

    records: list[BranchRecord]
    stopped_by: str | None = None
    base: str | None = None
    cost_usd: float = field(default=0.0)


def project_base(loops_dir: Path) -> str | None:
    """The commit every branch starts from (HEAD of the project), or None outside git."""
    top = loops_dir.parent
    found = git(top, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return found.out.strip() if found.ok and found.out.strip() else None


def _free_id(loops_dir: Path, loop: str, taken: set[str]) -> str:
    for _ in range(100):
        raw = os.urandom(RUN_ID_LENGTH)
        run_id = "".join(RUN_ID_ALPHABET[byte % len(RUN_ID_ALPHABET)] for byte in raw)
        key = run_key(loop, run_id)
        files = run_files(key, loops_dir)
        paths = (files.state, files.lock, worktree_path(loops_dir, loop, run_id))
        if key not in taken and not any(os.path.lexists(p) for p in paths):
            return run_id
    raise RuntimeError(f"no free run id for loop '{loop}' after 100 tries")


class FanOut:
    """One fan-out run: `run()` drives it to its end; *prior* holds the records of a run
    interrupted before (from its events), so a resume re-runs no ended branch."""

    def __init__(
        self,
        spec: FanOutSpec,
        emit: Emit,
        should_stop: Callable[[], bool] = lambda: False,
        prior: Mapping[int, BranchRecord] | None = None,
        base: str | None = None,
    ) -> None:
        self.spec = spec
        self.emit = emit
        self.should_stop = should_stop
        self.base = base if base is not None or prior else project_base(spec.loops_dir)
        self.records: dict[int, BranchRecord] = dict(prior or {})
        self.running: dict[int, children.Child] = {}
        self.deadline = None if spec.timeout_s is None else time.monotonic() + spec.timeout_s

    def run(self) -> FanOutResult:
        """Run the branches to their end (or the fan-out's); every child ended on return."""
        stopped_by: str | None = None
        try:
            self._adopt()
            pending = [b for b in self.spec.branches if not self._ended(b.index)]
            pending = [b for b in pending if b.index not in self.running]
            while True:
                self._reap()
                stopped_by = self._why_stop()
                if stopped_by is not None:
                    break
                limit = self.spec.max_concurrency or len(self.spec.branches) or 1
                while pending and len(self.running) < limit and self._may_start(pending[0]):
                    self._start(pending.pop(0))
                if not pending and not self.running:
                    break
                time.sleep(POLL)
        except BaseException:  # Ctrl-C, or a bug: no child outlives us; a resume goes on
            self._stop_all(final=False)
            raise
        # A stop leaves its branches unended, to be resumed; any other early end ends them.
        self._stop_all(final=stopped_by != STOP_REQUESTED)
        records = [self.records[b.index] for b in self.spec.branches if b.index in self.records]
        spent = sum(r.cost_usd for r in records)
        return FanOutResult(records, stopped_by, self.base, spent)

    def _ended(self, index: int) -> bool:
        record = self.records.get(index)
        return record is not None and record.ended

    def _why_stop(self) -> str | None:
        if self.should_stop():
            return STOP_REQUESTED
        if self.spec.stop_on_success and any(r.verdict == SUCCESS for r in self.records.values()):
            return STOP_ANY
        limit = self.spec.max_cost_usd
        if limit is not None and self._spent() >= limit:
            return STOP_BUDGET
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return STOP_TIMEOUT
        return None

    def _spent(self) -> float:
        total = 0.0
        for index, record in self.records.items():
            if index in self.running:
                record.cost_usd = children.spent_by(children.saved(self.spec.loops_dir, record.key))
            total += record.cost_usd
        return total

    def _may_start(self, branch: Branch) -> bool:
        """Outside a repository, runs of one loop share their files: one at a time."""
        if self.base is not None:
            return True
        return all(self.records[i].branch.loop != branch.loop for i in self.running)

    def _start(self, branch: Branch, record: BranchRecord | None = None) -> None:
        loops_dir = self.spec.loops_dir
        if record is None:
            taken = {r.key for r in self.records.values()}
            run_id = _free_id(loops_dir, branch.loop, taken)
            in_git = self.base is not None
            record = BranchRecord(
                branch,
                run_id,
                run_key(branch.loop, run_id) if in_git else branch.loop,
                worktree_branch(branch.loop, run_id) if in_git else None,
                worktree_path(loops_dir, branch.loop, run_id) if in_git else None,
            )
            self.records[branch.index] = record
            # Recorded before the child starts: a resume finds its id even if we die now.
            self.emit(BRANCH_START, {**record.figures(), "run_id": run_id, "base": self.base})
            argv = run_command(record, self.base)
        else:
            argv = ll_loop("resume", record.key)
        record.started = time.time()
        try:
            child = children.start(argv, loops_dir.parent, run_files(record.key, loops_dir).log)
        except (OSError, ValueError) as exc:  # its log a link, a NUL in a value, too long
            why = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
            self._finish(record, None, {"status": f"not started: {why}"})
            return
        record.pid = child.pid
        self.running[branch.index] = child

    def _adopt(self) -> None:
        """A resume: each branch started but not ended before goes on from its own files —
        watched while its process lives, resumed (`ll-loop resume`) when it stopped or died,
        taken as ended when it ended meanwhile, started again when it never wrote a step."""
        for index, record in sorted(self.records.items()):
            if record.ended:
                continue
            state = children.saved(self.spec.loops_dir, record.key)
            status = state.get("status")
            commands = [run_command(record, self.base), ll_loop("resume", record.key)]
            pid = children.find_running(commands)
            if pid is not None:  # still at it (started, or resumed, by the run before)
                record.pid = pid
                self.running[index] = children.Child(pid)
            elif status in ("completed", "failed"):
                self._finish(record, None, state)
            elif state:  # stopped, interrupted or crashed: it goes on from its own log
                self._start(record.branch, record)
            else:  # its start wrote nothing: it never ran; started anew (a fresh id)
                self.records.pop(index)

    def _reap(self) -> None:
        for index, child in list(self.running.items()):
            code = child.poll()
            if code is None:
                continue
            del self.running[index]
            record = self.records[index]
            self._finish(record, code, children.saved(self.spec.loops_dir, record.key))

    def _finish(
        self, record: BranchRecord, code: int | None, state: dict[str, Any], cut: bool = False
    ) -> None:
        """Record *record*'s end (exit *code*, None: unknown; *cut*: stopped by us)."""
        status = state.get("status")
        record.exit_code = code if code is not None and code >= 0 else None
        record.outcome = str(state.get("terminated_by") or status or f"exit {code}")
        if record.exit_code is not None:
            # Exit 0 is a success only with the end the child saved: one that could not
            # save it (a full disk) exits 0 too, and its work may be half done.
            good = record.exit_code == 0 and status == "completed"
            if record.exit_code == 0 and not good:
                record.outcome = f"exit 0, its end not saved (its state: {status or 'unreadable'})"
        else:
            good = status == "completed" and state.get("terminated_by") == "terminal"
        record.verdict = SUCCESS if good else FAILURE
        if cut or (status in ("stopped", "interrupted") and not good):
            record.verdict = STOPPED
        record.cost_usd = children.spent_by(state)
        record.finished = time.time()
        self.emit(BRANCH_FINISH, {**record.figures(), "exit_code": record.exit_code})

    def _stop_all(self, *, final: bool) -> None:
        """End every running child's process tree; *final*: record each as stopped (else
        it stays started, and a resume resumes it)."""
        for index, child in list(self.running.items()):
            children.stop(child, self.spec.grace_s)
            del self.running[index]
            record = self.records[index]
            if final:
                self._finish(record, None, children.saved(self.spec.loops_dir, record.key), True)
