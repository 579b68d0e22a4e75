"""Where a new run happens: the main checkout or a new worktree (`--worktree`, `--base`), its id."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.layout import files_key
from little_loops.fsm.runs.place import RunPlace

if TYPE_CHECKING:
    from little_loops.fsm.runs.start_marker import Starting


@dataclass(frozen=True)
class Where:
    """Where a run should happen: a new worktree or not, its base, and the run's id."""

    worktree: bool = False
    base: str | None = None
    run_id: str | None = None  # chosen by `for_loop` (or by the parent of a background run)

    def for_loop(self, fsm: FSMLoop, loops_dir: Path) -> Where:
        """With the loop's own `worktree: true` taken in, checked, and a run id chosen."""
        from little_loops.fsm.engine.commits import checkpoint_problem
        from little_loops.fsm.runs.place import id_taken, new_run_id

        worktree = self.worktree or fsm.worktree
        if self.base is not None and not worktree:
            raise LoopDefinitionError("--base REF needs --worktree (or worktree: true)")
        problem = checkpoint_problem(fsm, worktree)
        if problem is not None:
            raise LoopDefinitionError(problem)
        if self.run_id is not None and id_taken(loops_dir, fsm.name, self.run_id):
            raise LoopDefinitionError(
                f"loop '{fsm.name}' already has a run or a worktree with id '{self.run_id}'"
                f" (see ll-loop list --running and ll-loop worktree list)"
            )
        if worktree and self.base is not None:
            # Checked before anything starts: a background run's parent refuses a bad REF
            # itself, not by reading its child's log in time (a loaded machine starts late).
            from little_loops.fsm.runs.worktrees import main_repo, resolve_commit

            resolve_commit(main_repo(loops_dir), self.base)
        run_id = self.run_id or new_run_id(loops_dir, fsm.name)
        return Where(worktree, self.base, run_id)

    def key(self, loop_name: str) -> str:
        """The run's key (what its files are named by)."""
        return files_key(loop_name, self.run_id, self.worktree)

    def argv(self) -> list[str]:
        """These as `ll-loop run` flags (a background run is started with them)."""
        out = ["--worktree"] if self.worktree else []
        if self.base is not None:
            out.append(f"--base={self.base}")  # one word: a REF like `-x` is not an option
        return out + (["--run-id", self.run_id] if self.run_id else [])

    @contextlib.contextmanager
    def make_place(
        self, loop_name: str, loops_dir: Path, on_note: Callable[[str], None] | None = None
    ) -> Iterator[RunPlace]:
        """The run's place for the block (`claim_place` without its claim)."""
        with self.claim_place(loop_name, loops_dir, on_note) as (place, _):
            yield place

    @contextlib.contextmanager
    def claim_place(
        self, loop_name: str, loops_dir: Path, on_note: Callable[[str], None] | None = None
    ) -> Iterator[tuple[RunPlace, Starting]]:
        """The run's place for the block, and its start-up marker (`Starting`: `stop` finds
        the run by it before its state is saved, and its `stop_pending` says whether a stop
        came meanwhile). With `worktree`, the worktree and its branch are made now, all or
        nothing: the marker is written first, and when the block ends before the run's first
        event (a refusal, an error) they are removed again (*on_note* hears it). A kill
        meanwhile leaves the marker for the next command to roll back by."""
        from little_loops.fsm.runs.start_marker import RUN, Starting

        assert self.run_id is not None  # for_loop chose one
        if not self.worktree:
            claim = Starting(self.key(loop_name), loops_dir, RUN)
            try:
                yield RunPlace(self.run_id), claim
            finally:
                claim.close()
            return
        from little_loops.fsm.facts.layout import run_key, worktree_branch, worktree_path
        from little_loops.fsm.runs.locks import project_root
        from little_loops.fsm.runs.worktrees import (
            create_worktree,
            main_repo,
            resolve_commit,
            workdir_in,
        )

        sha = resolve_commit(main_repo(loops_dir), self.base)
        path = worktree_path(Path(loops_dir), loop_name, self.run_id)
        branch = worktree_branch(loop_name, self.run_id)
        made = {"path": str(path), "branch": branch, "base": sha}
        claim = Starting(run_key(loop_name, self.run_id), loops_dir, RUN, made)
        try:
            worktree = create_worktree(loops_dir, loop_name, self.run_id, sha)
            claim.made = True
            workdir = workdir_in(worktree, project_root(loops_dir))
            yield (
                RunPlace(self.run_id, worktree.path, workdir, worktree.branch, worktree.base_sha),
                claim,
            )
        finally:
            for note in claim.close():
                if on_note is not None:
                    on_note(note)

    def left_out(self, loops_dir: Path) -> str | None:
        """A note when this checkout has changes a new worktree does not get (it starts
        from a commit): they stay here, untouched."""
        if not self.worktree:
            return None
        from little_loops.fsm.processes.gitcmd import status_lines
        from little_loops.fsm.runs.worktrees import main_repo

        changed = status_lines(main_repo(loops_dir))
        if not changed:
            return None
        start = self.base or "HEAD"
        return (
            f"{len(changed)} uncommitted change(s) in this checkout are not in the worktree"
            f" (it starts from {start}); they stay here, untouched"
        )


def ready_to_start(
    fsm: FSMLoop, where: Where, loops_dir: Path, on_note: Callable[[str], None] | None = None
) -> Where:
    """*where* decided for a new run of *fsm* (`Where.for_loop`), once nothing stops it: not
    started from inside a live run's worktree, and earlier runs whose worktree is gone
    forgotten (their ids free again), as are start-ups killed before their first event
    (their worktree rolled back: *on_note* hears it)."""
    from little_loops.fsm.facts.layout import PARENT_ENV
    from little_loops.fsm.runs.place import refuse_inside_live_worktree
    from little_loops.fsm.runs.start_marker import forget_dead_starts
    from little_loops.fsm.runs.which import forget_finished

    for note in forget_dead_starts(loops_dir, fsm.name):
        if on_note is not None:
            on_note(note)
    where = where.for_loop(fsm, loops_dir)
    refuse_inside_live_worktree(loops_dir)
    # Earlier worktree runs whose worktree is gone, but not by a fan-out's branch: its
    # siblings that ended are read by the fan-out, then tidied by it.
    if PARENT_ENV not in os.environ:
        forget_finished(loops_dir, fsm.name)
    return where
