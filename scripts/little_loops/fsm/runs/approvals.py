"""The answer to a run's approval question: written by `approve`/`reject`, taken by the run.

The first answer to a question wins: writing one, checking for an earlier one and the run
taking one all happen under an exclusive `flock` on the run's `.running/` folder, and a
taken answer is kept aside (`<name>.approval.json.taken`) until the next question, so a
second `approve` or `reject` (at the same moment, or after the run took the first) is
refused naming the first, never counted silently.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.engine.rules.approval import ANSWER_COMMANDS
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import make_running_dir, run_files
from little_loops.fsm.facts.outcomes import can_resume
from little_loops.fsm.facts.runfile import NotOurFile, read_run_file
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.runs.atomic import json_bytes, write_atomic
from little_loops.fsm.runs.state import LoopState

APPROVED = "success"  # the verdict `ll-loop approve` gives the approval state
REJECTED = "failure"  # the verdict `ll-loop reject` gives it
_MAX_NOTE = 64 * 1024


@dataclass(frozen=True)
class Answer:
    """An answer: the verdict, the person's note, and the question it answers (asked_at)."""

    verdict: str
    note: str
    state: str
    asked_at: str


def answers_for(
    loop_name: str, loops_dir: Path
) -> Callable[[dict[str, Any]], tuple[str, str] | None]:
    """What a run of *loop_name* asks for the answer to its question: (verdict, note). The
    answer's file stays until remove_answer: the run removes it once its log has the answer
    (a crash in between must not lose it)."""

    def answer(question: dict[str, Any]) -> tuple[str, str] | None:
        found = take_answer(loop_name, loops_dir, question, keep=True)
        return None if found is None else (found.verdict, found.note)

    return answer


def how_to_answer(loop_name: str) -> str:
    """The commands that answer a question of loop *loop_name* (as the display says them)."""
    return ANSWER_COMMANDS.replace("NAME", loop_name)


def pending_question(state: LoopState) -> dict[str, Any] | None:
    """The question the saved run *state* waits on, or None when it waits on none."""
    if not can_resume(state.status, state.terminated_by):
        return None  # a finished run waits on nothing, whatever it last asked
    return state.approval


def write_answer(
    loop_name: str, loops_dir: Path, state: LoopState, verdict: str, note: str
) -> dict[str, Any]:
    """Answer the question the saved run *state* waits on; LoopRuntimeError when it waits
    on none, or when it was answered already (naming that answer). Returns the question."""
    question = pending_question(state)
    if question is None:
        raise LoopRuntimeError(
            f"loop '{loop_name}' is not awaiting approval (status: {state.status})"
        )
    if len(note) > _MAX_NOTE:
        raise LoopRuntimeError(f"--note is longer than {_MAX_NOTE} characters")
    data = {
        "verdict": verdict,
        "note": note,
        "state": question.get("state"),
        "asked_at": question.get("asked_at"),
        "answered_at": iso_now(),
        "answered_by": _who(),
    }
    files = run_files(loop_name, loops_dir)
    path, taken = files.approval, files.approval_taken
    make_running_dir(path.parent)
    with _answers_locked(path.parent):
        for earlier in (path, taken):
            found = _read(earlier)
            if found is not None and _fits(found, question):
                raise LoopRuntimeError(_already(loop_name, found, verdict))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(taken)  # an earlier question's: this one is answered now
        write_atomic(path, json_bytes(data, indent=2) + b"\n")
    return question


def _already(loop_name: str, first: dict[str, Any], verdict: str) -> str:
    """The one line refusing a second answer: what the first one was, when and by whom."""
    said = "approved" if first.get("verdict") == APPROVED else "rejected"
    this = "approve" if verdict == APPROVED else "reject"
    when, who = first.get("answered_at"), first.get("answered_by")
    by = (f" at {when}" if isinstance(when, str) else "") + (
        f" by {who}" if isinstance(who, str) and who else ""
    )
    note = first.get("note")
    noted = f" (note: {note})" if isinstance(note, str) and note else ""
    return one_line(
        f"state '{first.get('state')}' of loop '{loop_name}' was already {said}{by}{noted};"
        f" the first answer counts, this {this} was not recorded"
    )


def _who() -> str:
    """The name of the user answering (their login name; else their uid)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


@contextlib.contextmanager
def _answers_locked(running: Path) -> Iterator[None]:
    """An exclusive flock on the `.running/` folder *running* for the block (answers only
    take it, and each holds it for one read and one write)."""
    fd = os.open(running, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, Any] | None:
    """The answer in *path*: None when there is none, or it cannot be read as one."""
    try:
        data = json.loads(read_run_file(path))
    except (OSError, ValueError, NotOurFile):
        return None  # missing, unreadable, or a planted link or FIFO: never read
    return data if isinstance(data, dict) else {}


def _take(path: Path, taken: Path, question: dict[str, Any], keep: bool) -> dict[str, Any] | None:
    """The answer in *path* if it answers *question*, moved aside to *taken* unless *keep*
    (under the lock)."""
    data = _read(path)
    if data is None:
        return None  # unreadable: asked again at the next look
    if not _fits(data, question):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None
    if not keep:
        os.replace(path, taken)
    return data


def _fits(data: dict[str, Any], question: dict[str, Any]) -> bool:
    """Whether the answer *data* answers *question* (not an earlier one)."""
    return (
        data.get("state") == question.get("state")
        and data.get("asked_at") == question.get("asked_at")
        and data.get("verdict") in (APPROVED, REJECTED)
    )


def take_answer(
    loop_name: str, loops_dir: Path, question: dict[str, Any], *, keep: bool = False
) -> Answer | None:
    """The answer to *question* if one was written (it is then kept aside as taken, so a
    later answer to the same question is refused; with *keep* it stays where it is until
    remove_answer); an answer to an earlier question is removed and not taken."""
    files = run_files(loop_name, loops_dir)
    path = files.approval
    if not os.path.lexists(path):
        return None  # the common case while waiting: no lock taken
    try:
        with _answers_locked(path.parent):
            data = _take(path, files.approval_taken, question, keep)
    except OSError:
        return None  # no `.running/` folder: asked again at the next look
    if data is None:
        return None
    note = data.get("note")
    return Answer(
        str(data.get("verdict")),
        note if isinstance(note, str) else "",
        str(question.get("state")),
        str(question.get("asked_at")),
    )


def remove_answer(loop_name: str, loops_dir: Path) -> None:
    """Put the answer the run took aside as taken, now that its log has it (a later answer
    to the same question is still refused)."""
    files = run_files(loop_name, loops_dir)
    if not os.path.lexists(files.approval):
        return
    with contextlib.suppress(OSError), _answers_locked(files.approval.parent):
        os.replace(files.approval, files.approval_taken)
