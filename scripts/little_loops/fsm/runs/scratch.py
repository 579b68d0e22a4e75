"""Each run's own scratch folder, `${context.run_dir}`: where it is, made before the first step.

A new run that reads it (or whose evaluators or sub-loops may) gets
`.loops/.running/runs/<loop>@<run id>/` (unless a value for `run_dir` is
given: `--set run_dir=PATH` or the loop's own context), written with a trailing `/` as
little-loops writes it, so `${context.run_dir}file` and `${context.run_dir}/file` both
work. Under `--compat` every run gets one where little-loops makes it,
`.loops/runs/<loop>-<time>/`. The path is kept in the run's context, so a resumed run goes
on in the same folder; nothing removes it (the run's files under `.running/` are git-ignored).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY, reads_context, runner_values
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.evaluators.registry import SPECS
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import (
    RUN_DIRS,
    RUNNING_DIR,
    THEIR_RUN_DIRS,
    make_running_dir,
    run_key,
    running_dir,
)
from little_loops.fsm.facts.owned import make_own_folder, own_parts

THEIR_TIME = "%Y%m%dT%H%M%S"  # the time in the name of one of them


def run_dir_path(loops_dir: Path, loop_name: str, run_id: str) -> Path:
    """The scratch folder of run *run_id* of *loop_name*."""
    return Path(loops_dir) / RUNNING_DIR / RUN_DIRS / run_key(loop_name, run_id)


def their_run_dir_path(loops_dir: Path, loop_name: str, run_id: str) -> Path:
    """little-loops' folder for a run started now (`--compat`): `.loops/runs/<loop>-<time>/`
    (a loop in a folder of `.loops/` as `oracles-gate`), made here so that no other run
    takes it; `-<run id>` is added when a run started in the same second has it already,
    so two runs never share one (two at once included). LoopRuntimeError when
    `.loops/runs` is a link (the folder would be outside)."""
    stem = f"{loop_name.replace('/', '-')}-{datetime.now().strftime(THEIR_TIME)}"
    if (Path(loops_dir) / THEIR_RUN_DIRS).is_symlink():  # its folders would be elsewhere
        raise LoopRuntimeError(
            f"{Path(loops_dir) / THEIR_RUN_DIRS} is a link: a run's folder is made in .loops/ only"
        )
    folder = Path(loops_dir) / THEIR_RUN_DIRS / stem
    try:
        folder.parent.mkdir(exist_ok=True)
        folder.mkdir()
    except FileExistsError:  # taken (mkdir is the claim: a test of it first is a race)
        return folder.with_name(f"{stem}-{run_id}")
    except OSError:
        pass  # make_run_dir says why it cannot be made
    return folder


def with_run_dir(fsm: FSMLoop, loops_dir: Path, run_id: str | None) -> FSMLoop:
    """*fsm* with `run_dir` in its context, and the other values a run starts with
    (metadata.runner_values); a value given already is kept. Under `--compat` every run
    gets one, where little-loops makes it."""
    data = fsm.to_dict()
    added = runner_values(fsm.context, fsm.input_key, data)
    if not fsm.context.get(RUN_DIR_KEY) and run_id is not None:
        if fsm.theirs:
            added[RUN_DIR_KEY] = f"{their_run_dir_path(loops_dir, fsm.name, run_id).resolve()}/"
        elif needs_run_dir(fsm, data):
            # The project's folder made absolute, its own folders never followed: a planted
            # link is refused when the folder is made, and its target is never saved.
            added[RUN_DIR_KEY] = f"{run_dir_path(Path(loops_dir).resolve(), fsm.name, run_id)}/"
    return dataclasses.replace(fsm, context={**fsm.context, **added}) if added else fsm


def needs_run_dir(fsm: FSMLoop, data: dict[str, Any]) -> bool:
    """Whether a run of *fsm* gets a scratch folder: when it reads `${context.run_dir}`, an
    evaluator of it keeps its history there by default, or it runs sub-loops (which share
    it); other runs leave `.running/` as it was."""
    if reads_context(data, RUN_DIR_KEY):
        return True
    for state in fsm.states.values():
        if state.loop is not None:
            return True
        spec = SPECS.get(state.effective_evaluate().type)
        if spec is not None and any(RUN_DIR_KEY in str(v) for v in spec.defaults.values()):
            return True
    return False


def make_run_dir(fsm: FSMLoop, loops_dir: Path) -> None:
    """Make the run's scratch folder (again, on a resume); `.running/` is made (and
    checked) first, as for every run file. LoopRuntimeError if the folder cannot be made,
    NotOurFile when a folder of ours on the way to it is a symbolic link."""
    folder = fsm.context.get(RUN_DIR_KEY)
    if not isinstance(folder, str) or not folder:
        return
    make_running_dir(running_dir(loops_dir))
    try:
        if own_parts(folder, loops_dir) is not None:  # ours: no folder on the way is a link
            make_own_folder(folder, loops_dir)
        else:  # the user's own choice (`--set run_dir=PATH`)
            Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LoopRuntimeError(
            f"cannot make the run's folder {folder} ({exc.strerror or exc})"
        ) from None
