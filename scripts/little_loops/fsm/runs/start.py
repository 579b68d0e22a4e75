"""Starting a run: in the main checkout or a new worktree (`--worktree`, `--base`), and its id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.layout import files_key
from little_loops.fsm.runs.place import RunPlace


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

    def make_place(self, loop_name: str, loops_dir: Path) -> RunPlace:
        """The run's place; with `worktree`, the worktree and its branch are made now."""
        if not self.worktree:
            return RunPlace(self.run_id)
        from little_loops.fsm.runs.locks import project_root
        from little_loops.fsm.runs.worktrees import create_worktree, workdir_in

        assert self.run_id is not None  # for_loop chose one
        made = create_worktree(loops_dir, loop_name, self.run_id, self.base)
        workdir = workdir_in(made, project_root(loops_dir))
        return RunPlace(self.run_id, made.path, workdir, made.branch, made.base_sha)

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


def ready_to_start(fsm: FSMLoop, where: Where, loops_dir: Path) -> Where:
    """*where* decided for a new run of *fsm* (`Where.for_loop`), once nothing stops it: not
    started from inside a live run's worktree, and earlier runs whose worktree is gone
    forgotten (their ids free again)."""
    from little_loops.fsm.runs.place import refuse_inside_live_worktree
    from little_loops.fsm.runs.which import forget_finished

    where = where.for_loop(fsm, loops_dir)
    refuse_inside_live_worktree(loops_dir)
    forget_finished(loops_dir, fsm.name)  # earlier worktree runs whose worktree is gone
    return where
