"""What `watch`'s keys do to a run: stop, answer, resume, the HTML report. No Textual here."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from little_loops.cli.watch.board import clean, read_only
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.layout import RUN_ID_PATTERN, run_key, split_run_key

STOP_GRACE_SECONDS = 5.0


def _said(work: Callable[[], int]) -> tuple[int, str]:
    """Run a command's function, its words to stdout and stderr kept (the screen is the
    view's): its exit code and its last line."""
    words = io.StringIO()
    try:
        with contextlib.redirect_stderr(words), contextlib.redirect_stdout(words):
            code = work()
    except LoopError as exc:
        return 1, clean(f"ll-loop: error: {exc}")
    lines = [line for line in words.getvalue().splitlines() if line.strip()]
    return code, clean(lines[-1] if lines else "done")


def refused(key: str, loops_dir: Path) -> str | None:
    """Why *key* may only be looked at (its files are another user's), else None."""
    if read_only(key, loops_dir):
        return f"read-only: the files of run {clean(key)} belong to another user"
    return None


def run_id_of(key: str, loops_dir: Path) -> str | None:
    """The id of the run saved under *key* now (None: no run there, or none readable)."""
    from little_loops.fsm.runs.store import StatePersistence

    with contextlib.suppress(LoopError, OSError), StatePersistence(key, loops_dir) as store:
        state = store.load_state()
        return None if state is None else state.run_id
    return None


def named(key: str, run_id: str | None) -> str:
    """How a command is told the run a key press named: `NAME@ID` (that run and no other)
    when it has an id, else its key."""
    if run_id is None or not RUN_ID_PATTERN.fullmatch(run_id):
        return key
    return run_key(split_run_key(key)[0], run_id)


def gone(key: str, loops_dir: Path, run_id: str | None) -> str | None:
    """Why the run a question named is not the one under *key* any more, else None: an
    answer acts on the run it named, or on none."""
    if run_id is None:
        return None
    now = run_id_of(key, loops_dir)
    if now == run_id:
        return None
    if now is None:
        return f"run {clean(key)} ({clean(run_id)}) is gone; nothing done"
    return f"run {clean(key)} is now another run ({clean(now)}, not {clean(run_id)}); nothing done"


def _on(
    key: str, loops_dir: Path, run_id: str | None, work: Callable[[str], int]
) -> tuple[int, str]:
    """*work* (a command's function) on the run *key* names, told it by `named`: refused
    when its files are another user's, or it is no longer the run *run_id*."""
    why = refused(key, loops_dir) or gone(key, loops_dir, run_id)
    if why is not None:
        return 1, why
    return _said(lambda: work(named(key, run_id)))


def stop(key: str, loops_dir: Path, run_id: str | None = None) -> tuple[int, str]:
    """`ll-loop stop KEY`: the run, its action and what it left running end."""
    from little_loops.cli.stop import stop_command

    return _on(
        key, loops_dir, run_id,
        lambda ref: stop_command(ref, loops_dir=loops_dir, grace=STOP_GRACE_SECONDS),
    )  # fmt: skip


def answer(
    key: str, loops_dir: Path, approve: bool, note: str, run_id: str | None = None
) -> tuple[int, str]:
    """`ll-loop approve|reject KEY --note NOTE`."""
    from little_loops.cli.approve import answer_command

    command = "approve" if approve else "reject"
    return _on(
        key, loops_dir, run_id, lambda ref: answer_command(ref, command, note, loops_dir=loops_dir)
    )


def resume(key: str, loops_dir: Path, run_id: str | None = None) -> tuple[int, str]:
    """`ll-loop resume KEY --background`: a stopped or crashed run goes on, detached."""
    from little_loops.cli.options import RunOptions
    from little_loops.cli.resume import resume_command

    return _on(
        key, loops_dir, run_id,
        lambda ref: resume_command(ref, RunOptions(), background=True, loops_dir=loops_dir),
    )  # fmt: skip


def html_report(key: str, loops_dir: Path, run_id: str | None = None) -> tuple[int, str]:
    """`ll-loop report KEY --html FILE` into a new file of the temp folder (the run's own
    folder is never written by looking): its path, to open in a browser."""
    from little_loops.cli.report import one_report
    from little_loops.cli.report_html import write_html

    why = gone(key, loops_dir, run_id)
    if why is not None:
        return 1, why
    try:
        report = one_report(named(key, run_id), None, loops_dir)
    except LoopError as exc:
        return 1, clean(f"ll-loop: error: {exc}")
    if report is None:
        return 1, f"run {clean(key)} has no events to report yet"
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in key)[:80]
    handle, name = tempfile.mkstemp(prefix=f"ll-loop-{safe}-", suffix=".html")
    os.close(handle)
    write_html([report], Path(name))
    return 0, f"HTML report written: {clean(name)} (open it in a browser)"
