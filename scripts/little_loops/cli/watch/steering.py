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


def stop(key: str, loops_dir: Path) -> tuple[int, str]:
    """`ll-loop stop KEY`: the run, its action and what it left running end."""
    from little_loops.cli.stop import stop_command

    return refused_or(key, loops_dir) or _said(
        lambda: stop_command(key, loops_dir=loops_dir, grace=STOP_GRACE_SECONDS)
    )


def answer(key: str, loops_dir: Path, approve: bool, note: str) -> tuple[int, str]:
    """`ll-loop approve|reject KEY --note NOTE`."""
    from little_loops.cli.approve import answer_command

    command = "approve" if approve else "reject"
    return refused_or(key, loops_dir) or _said(
        lambda: answer_command(key, command, note, loops_dir=loops_dir)
    )


def resume(key: str, loops_dir: Path) -> tuple[int, str]:
    """`ll-loop resume KEY --background`: a stopped or crashed run goes on, detached."""
    from little_loops.cli.options import RunOptions
    from little_loops.cli.resume import resume_command

    return refused_or(key, loops_dir) or _said(
        lambda: resume_command(key, RunOptions(), background=True, loops_dir=loops_dir)
    )


def refused_or(key: str, loops_dir: Path) -> tuple[int, str] | None:
    why = refused(key, loops_dir)
    return None if why is None else (1, why)


def html_report(key: str, loops_dir: Path) -> tuple[int, str]:
    """`ll-loop report KEY --html FILE` into a new file of the temp folder (the run's own
    folder is never written by looking): its path, to open in a browser."""
    from little_loops.cli.report import one_report
    from little_loops.cli.report_html import write_html

    try:
        report = one_report(key, None, loops_dir)
    except LoopError as exc:
        return 1, clean(f"ll-loop: error: {exc}")
    if report is None:
        return 1, f"run {clean(key)} has no events to report yet"
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in key)[:80]
    handle, name = tempfile.mkstemp(prefix=f"ll-loop-{safe}-", suffix=".html")
    os.close(handle)
    write_html([report], Path(name))
    return 0, f"HTML report written: {clean(name)} (open it in a browser)"
