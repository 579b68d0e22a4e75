"""The answer to a run's approval question: written by `approve`/`reject`, taken by the run."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.engine.rules.approval import ANSWER_COMMANDS
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import make_running_dir, run_files
from little_loops.fsm.facts.outcomes import can_resume
from little_loops.fsm.facts.runfile import NotOurFile, read_run_file
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
    on none. Returns the question answered."""
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
    }
    path = run_files(loop_name, loops_dir).approval
    make_running_dir(path.parent)
    write_atomic(path, json_bytes(data, indent=2) + b"\n")
    return question


def take_answer(
    loop_name: str, loops_dir: Path, question: dict[str, Any], *, keep: bool = False
) -> Answer | None:
    """The answer to *question* if one was written (the file is then removed, unless
    *keep*); an answer to an earlier question is removed and not taken."""
    path = run_files(loop_name, loops_dir).approval
    try:
        data = json.loads(read_run_file(path))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # being replaced, or unreadable: asked again at the next look
    except NotOurFile:
        return None  # a planted link or FIFO is never read: the question stays open
    if not isinstance(data, dict):
        data = {}
    verdict, note = data.get("verdict"), data.get("note")
    fits = (
        data.get("state") == question.get("state")
        and data.get("asked_at") == question.get("asked_at")
        and verdict in (APPROVED, REJECTED)
    )
    if not fits or not keep:
        with contextlib.suppress(OSError):
            os.unlink(path)
    if not fits:
        return None
    return Answer(
        str(verdict),
        note if isinstance(note, str) else "",
        str(question.get("state")),
        str(question.get("asked_at")),
    )


def remove_answer(loop_name: str, loops_dir: Path) -> None:
    """Remove the answer the run took (its log has it now)."""
    with contextlib.suppress(OSError):
        os.unlink(run_files(loop_name, loops_dir).approval)
