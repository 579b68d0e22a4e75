"""The one path `run` and `resume` share: the progress display, the outcome and its code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from little_loops.cli.display import ProgressDisplay, use_color, use_live
from little_loops.cli.options import RunOptions
from little_loops.fsm.definition.model.run_keys import HANDOFF_SPAWN
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.outcomes import Outcome, outcome_of
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.processes.descendants import adopt_orphans
from little_loops.fsm.runs.atomic import json_bytes
from little_loops.fsm.runs.foreground import ForegroundRun, Told, run_in_foreground
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.scratch import make_run_dir
from little_loops.fsm.runs.state import LoopState

EVENTS_PER_HANDOFF = 8  # the events a resumed pass that hands off logs, at most (5 today)


def run_session(
    fsm: FSMLoop,
    loop_path: Path,
    options: RunOptions,
    loops_dir: Path,
    *,
    resume: bool = False,
    place: RunPlace | None = None,
    stop_pending: Callable[[], bool] | None = None,
    under_way: Callable[[], None] | None = None,
    unready: Mapping[str, str] | None = None,
) -> int:
    """Run (or resume) `fsm` in the foreground (in *place*'s worktree, if it has one);
    returns the exit code of its outcome.

    The progress display goes to stderr, with a note while `--queue` waits for the scope
    and when a resume begins; the result goes to stdout as JSON with `--json`. A run or
    resume whose *stop_pending* says a `stop` came while it started ends stopped at once;
    *under_way* is told once its signal handlers are in place.
    *unready*: the agents of fallback lists the preflight found unable to run here, and why.
    """
    err = sys.stderr
    ref = fsm.name if place is None else place.key(fsm.name)  # NAME@ID in a worktree
    where = ""
    if place is not None and place.in_worktree:
        where = f" in worktree {display_path(place.path or '')} (branch {place.branch})"
    if where and not resume and not options.quiet:
        print(f"ll-loop: run {ref}{where}", file=err)
    display = ProgressDisplay(
        err,
        max_iterations=fsm.max_iterations,
        loop_name=ref,
        color=use_color(err, options.no_color),
        live=use_live(err) and not options.quiet,
        quiet=options.quiet,
        verbose=options.verbose,
    )

    def restored(saved: LoopState) -> None:
        if not options.quiet:
            print(
                f"ll-loop: resuming loop '{ref}' at state '{saved.current_state}'"
                f" (iteration {saved.iteration}, {format_duration(saved.elapsed_ms)} elapsed)"
                + where,
                file=err,
            )

    def note(message: str) -> None:
        print(f"ll-loop: {one_line(message)}", file=err, flush=True)

    make_run_dir(fsm, loops_dir)  # made before the first step; made again on a resume
    adopt_orphans()  # what an action detaches (setsid, double fork) stays ours to end
    try:
        run = ForegroundRun(
            fsm,
            display_path(loop_path.resolve()),
            loops_dir,
            options,
            resume=resume,
            place=place,
            unready=unready,
        )
        result = run_in_foreground(run, Told(display, note, restored, stop_pending, under_way))
    finally:
        display.close()
    if options.as_json:
        sys.stdout.write(json_bytes(result.to_dict(), indent=2).decode("utf-8") + "\n")
        sys.stdout.flush()
    if result.terminated_by == Outcome.HANDOFF and fsm.on_handoff == HANDOFF_SPAWN:
        spawn_continuation(ref, fsm, loops_dir, place)
    return outcome_of(result.terminated_by).exit_code


def spawn_continuation(ref: str, fsm: FSMLoop, loops_dir: Path, place: RunPlace | None) -> None:
    """`on_handoff: spawn`: the run paused at a handoff goes on in a new process, `ll-loop
    resume REF` in the background (its next prompt gets the note in a fresh session)."""
    from little_loops.cli.background import child_argv
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.runs.background import start_detached
    from little_loops.fsm.runs.start_marker import RESUME, starting

    try:
        in_a_row = handoffs_in_a_row(ref, loops_dir, fsm.max_iterations)
    except (LoopError, OSError) as exc:  # its log unreadable: no unbounded chain on a guess
        said = one_line(str(exc))
        print(f"ll-loop: could not continue after the handoff: {said}", file=sys.stderr)
        return
    if in_a_row >= fsm.max_iterations:  # an agent that only ever hands off: no runaway chain
        print(
            f"ll-loop: context handoff: not continuing by itself: the run handed off "
            f"{in_a_row} times in a row without leaving its state (max_iterations "
            f"{fsm.max_iterations}); continue with: ll-loop resume {ref}",
            file=sys.stderr,
        )
        return
    root = None if place is None or not place.in_worktree else place.workdir
    argv = child_argv("resume", ref, RunOptions())
    stopped = (
        f"ll-loop: context handoff: not continuing: the run was stopped; continue with:"
        f" ll-loop resume {ref}"
    )
    try:
        # A resume of the run is on its way from here: `stop` finds this process by its
        # marker (and the next by the marker handed to it) and is honoured, never missed.
        with starting(ref, loops_dir, RESUME) as claim:
            if claim.stop_pending():
                print(stopped, file=sys.stderr)
                return
            started = start_detached(
                argv, ref, fsm.effective_scope(), loops_dir, wait=0, command="resume", root=root
            )
            claim.hand_over(started.pid)
    except LoopError as exc:
        print(f"ll-loop: could not continue after the handoff: {exc}", file=sys.stderr)
        return
    print(
        f"ll-loop: context handoff: continuing in the background (pid {started.pid});"
        f" follow: ll-loop status {ref} --follow",
        file=sys.stderr,
    )


def handoffs_in_a_row(key: str, loops_dir: Path, limit: int) -> int:
    """How many times (up to *limit*) the run of *key* has ended on a handoff since it last
    left a state (its latest `route` event) or was started afresh, read from its log's end."""
    from little_loops.fsm.runs.store import StatePersistence

    with StatePersistence(key, loops_dir) as store:
        events = store.tail_events(EVENTS_PER_HANDOFF * limit)
    count = 0
    for event in reversed(events):
        kind = event.get("event")
        if kind == "route" or (kind == "loop_start" and not event.get("resumed")):
            break
        if kind == "loop_complete" and event.get("terminated_by") == Outcome.HANDOFF:
            count += 1
    return count
