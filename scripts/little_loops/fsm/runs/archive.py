"""The run archive: each finished run's files kept under `.loops/.history/<loop>/<run id>/`."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import (
    ARCHIVE_PARTIAL,
    HISTORY_DIR,
    LOOP_DEFINITION,
    RUN_SUMMARY,
    RunFiles,
    archive_dir,
    output_files,
    partial_entry,
)
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.owned import make_history_dir
from little_loops.fsm.facts.runfile import display_path, open_run_file, read_run_file
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.atomic import json_bytes

# An archived step output keeps at most its last this many bytes (a cut one says so first).
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
CRASHED = "crashed"  # the outcome of a run whose process died before it could end it
_RUN_ID = re.compile(r"^\d{8}-\d{6}(-\d+)?$")
_COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class ArchivedRun:
    """One finished run as `ll-loop runs` lists it (the entry's `run.json`)."""

    run_id: str
    loop: str
    started_at: str
    ended_at: str
    duration_ms: int
    outcome: str  # the run's terminated_by, `stopped`/`interrupted`, or CRASHED
    status: str
    final_state: str
    passes: int
    cost_usd: float
    id: str = ""  # the run's short id (NAME@ID while it ran); "" for runs from before ids

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> ArchivedRun:
        """The summary in a parsed `run.json`; ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        kinds: dict[str, tuple[type, ...]] = {
            "duration_ms": (int,),
            "passes": (int,),
            "cost_usd": (int, float),
        }
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            if name == "id" and name not in data:
                continue  # a run archived before run ids
            value = data.get(name)
            wanted = kinds.get(name, (str,))
            if isinstance(value, bool) or not isinstance(value, wanted):
                raise ValueError(f"{name!r} is missing or of the wrong type")
            if isinstance(value, float) and not math.isfinite(value):  # NaN: no JSON out
                raise ValueError(f"{name!r} is not a finite number")
            values[name] = value
        if not _RUN_ID.match(values["run_id"]):
            raise ValueError(f"run id {values['run_id']!r} is not one ll-loop makes")
        return cls(**values)


def run_id_base(started_at: str) -> str:
    """`20260115-103000` for a run started at `2026-01-15T10:30:00.001+00:00` (its own clock)."""
    try:
        when = datetime.fromisoformat(started_at)
    except ValueError:
        when = datetime.now().astimezone()
    return when.strftime("%Y%m%d-%H%M%S")


def archive_run(
    files: RunFiles,
    state: dict[str, Any],
    keep: int,
    max_age_days: float | None = None,
    definition: dict[str, Any] | None = None,
) -> ArchivedRun | None:
    """Copy the run in *files* (its saved *state*, as the state file's JSON, and the loop it
    ran, as data: the one it kept at its start, else *definition*) into the archive,
    replacing an earlier copy of the same run (a resumed run is archived again when it ends),
    then drop the runs past *keep* and *max_age_days*. None when *keep* is 0.

    The entry is written in a partial folder and renamed into place, so a reader sees the
    old entry or the new one, never half of one. OSError and NotOurFile pass through."""
    if keep <= 0:
        return None
    loop = str(state.get("loop_name") or files.loop_name)  # files: maybe `<name>@<id>`
    folder = make_history_dir(files.loops_dir, loop)
    _tidy(folder)
    run_id = _free_id(folder, str(state.get("started_at", "")))
    summary = _summary(run_id, loop, state)
    partial = partial_entry(folder, run_id)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        _copy_files(files, partial, _started(state), loop)
        kept = read_definition(files.definition)  # the loop as the run started it
        definition = kept if kept is not None else definition
        if definition is not None:
            (partial / LOOP_DEFINITION).write_bytes(json_bytes(definition) + b"\n")
        (partial / RUN_SUMMARY).write_bytes(json_bytes(summary.to_dict(), indent=2) + b"\n")
        _put_in_place(partial, folder / run_id)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    prune(folder, keep, max_age_days)
    return summary


def _summary(run_id: str, loop: str, state: dict[str, Any]) -> ArchivedRun:
    status = str(state.get("status", ""))
    crashed = status == Status.RUNNING
    outcome = CRASHED if crashed else str(state.get("terminated_by") or status)
    elapsed, passes, spent = state.get("elapsed_ms"), state.get("iteration"), state.get("cost_usd")
    cost = float(spent) if isinstance(spent, int | float) and not isinstance(spent, bool) else 0.0
    return ArchivedRun(
        run_id=run_id,
        loop=loop,
        started_at=str(state.get("started_at", "")),
        ended_at=str(state.get("updated_at", "")),
        duration_ms=elapsed if type(elapsed) is int else 0,
        outcome=outcome,
        status=CRASHED if crashed else status,
        final_state=str(state.get("current_state", "")),
        passes=passes if type(passes) is int else 0,
        cost_usd=cost,
        id=str(state.get("run_id") or ""),
    )


def _started(state: dict[str, Any]) -> float:
    try:
        return datetime.fromisoformat(str(state.get("started_at"))).timestamp()
    except ValueError:
        return 0.0


def _free_id(folder: Path, started_at: str) -> str:
    """The run id for a run started at *started_at*: its start second, `-2`, `-3` ... when
    another run of the loop started in the same second; the same id for the same run."""
    base = run_id_base(started_at)
    for number in range(1, 10_000):
        run_id = base if number == 1 else f"{base}-{number}"
        entry = folder / run_id
        if not os.path.lexists(entry):
            return run_id
        try:
            if _read_summary(entry).started_at == started_at:
                return run_id
        except (OSError, ValueError, LoopRuntimeError):
            continue  # a damaged entry keeps its id; this run takes another
    raise LoopRuntimeError(f"{display_path(folder)}: too many runs started at {base}")


def _copy_files(files: RunFiles, into: Path, started: float, loop: str) -> None:
    """The run's state, events (with their rotated parts), flags, background log and the
    outputs of its steps (those written since it started: older ones are an earlier run's),
    named by the *loop*'s name (a worktree run's files are named `<name>@<id>...`)."""

    def kept(path: Path) -> Path:
        return into / (loop + path.name[len(files.loop_name) :])

    sources = [files.state, *map(files.events_segment, files.events_segments()), files.events]
    for path in [*sources, files.options]:
        _copy(path, kept(path), None)
    _copy(files.log, kept(files.log), MAX_OUTPUT_BYTES)  # appended to by every run
    for path in output_files(files.running_dir, files.loop_name):
        with contextlib.suppress(OSError):
            if os.lstat(path).st_mtime < started:
                continue
        _copy(path, kept(path), MAX_OUTPUT_BYTES)


def _copy(source: Path, target: Path, limit: int | None) -> None:
    """Copy *source* (a run file: never through a link) to *target*; the last *limit* bytes
    of a longer file, after a line saying how much was cut. A missing source is skipped."""
    try:
        fd = open_run_file(source, os.O_RDONLY)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as reader, open(target, "xb") as writer:
        size = os.fstat(reader.fileno()).st_size
        if limit is not None and size > limit:
            reader.seek(size - limit)
            reader.readline()  # start on a whole line
            writer.write(f"[ll-loop: the first {reader.tell()} bytes were not kept]\n".encode())
        while chunk := reader.read(_COPY_CHUNK):
            writer.write(chunk)


def _put_in_place(partial: Path, entry: Path) -> None:
    """Rename *partial* to *entry*; an earlier *entry* is moved aside first, then removed."""
    aside = partial.with_name(partial.name + ".old")
    if os.path.lexists(entry):
        os.rename(entry, aside)
    os.rename(partial, entry)
    shutil.rmtree(aside, ignore_errors=True)


def _tidy(folder: Path) -> None:
    """Remove what a killed archiver left: partial folders of dead processes; an entry moved
    aside whose replacement never arrived is put back."""
    for leftover in folder.glob(f"{ARCHIVE_PARTIAL}*"):
        name = leftover.name[len(ARCHIVE_PARTIAL) :]
        old = name.endswith(".old")
        run_id, _, pid = name.removesuffix(".old").rpartition(".")
        if pid.isdigit() and int(pid) != os.getpid() and pid_alive(int(pid)):
            continue
        entry = folder / run_id
        if old and _RUN_ID.match(run_id) and not os.path.lexists(entry):
            with contextlib.suppress(OSError):
                os.rename(leftover, entry)
                continue
        shutil.rmtree(leftover, ignore_errors=True)


def prune(folder: Path, keep: int, max_age_days: float | None = None) -> list[str]:
    """Remove the oldest entries past *keep*, and those that ended over *max_age_days* ago;
    the ids removed. Damaged entries count too, by their folder's time."""
    entries = sorted(_entries(folder), key=lambda item: item[1])
    doomed = [path for path, _ in entries[: max(0, len(entries) - keep)]]
    if max_age_days is not None:
        cutoff = time.time() - max_age_days * 86400
        doomed += [path for path, when in entries if when < cutoff and path not in doomed]
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)
    return [path.name for path in doomed]


def _entries(folder: Path) -> Iterator[tuple[Path, float]]:
    """(entry folder, when it ended) of every entry in a loop's archive folder."""
    try:
        children = list(folder.iterdir())
    except OSError:
        return
    for child in children:
        if not _RUN_ID.match(child.name) or not child.is_dir() or child.is_symlink():
            continue
        try:
            when = datetime.fromisoformat(_read_summary(child).ended_at).timestamp()
        except (OSError, ValueError, LoopRuntimeError):
            with contextlib.suppress(OSError):
                when = child.stat().st_mtime
        yield child, when


def _read_summary(entry: Path) -> ArchivedRun:
    """The summary of the entry folder *entry*; ValueError (or OSError) when unreadable."""
    raw = read_run_file(entry / RUN_SUMMARY)
    try:
        return ArchivedRun.from_dict(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def list_runs(loops_dir: Path, loop_name: str) -> tuple[list[ArchivedRun], list[str]]:
    """The archived runs of *loop_name*, oldest first, and a warning for each entry that
    cannot be read (it is skipped)."""
    runs, warnings = [], []
    for entry, _ in _entries(archive_dir(loops_dir, loop_name)):
        try:
            # The folders say which loop and run it is, whatever its run.json claims.
            summary = replace(_read_summary(entry), loop=loop_name, run_id=entry.name)
            runs.append(summary)
        except (OSError, ValueError, LoopRuntimeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            warnings.append(
                f"{display_path(entry)}: skipped, its {RUN_SUMMARY} is unreadable ({why})"
            )
    runs.sort(key=lambda run: (run.started_at, run.run_id))
    return runs, warnings


def archived_definition(folder: Path) -> dict[str, Any] | None:
    """The loop definition an archived run in *folder* kept, or None (none, or unreadable)."""
    return read_definition(folder / LOOP_DEFINITION)


def read_definition(path: Path) -> dict[str, Any] | None:
    """The loop definition a run kept in the file *path*, or None (none, or unreadable)."""
    try:
        data = json.loads(read_run_file(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError, LoopRuntimeError):
        return None
    return data if isinstance(data, dict) else None


def archived_loops(loops_dir: Path) -> list[str]:
    """The names of the loops that have an archive folder, by name."""
    try:
        children = list((loops_dir / HISTORY_DIR).iterdir())
    except OSError:
        return []
    return sorted(p.name for p in children if p.is_dir() and not p.is_symlink())


def find_run(loops_dir: Path, loop_name: str, run_ref: str) -> tuple[ArchivedRun, RunFiles]:
    """The archived run *run_ref* names (a run id or the start of one, the run's short id;
    `last` for the latest) and its files; LoopRuntimeError saying what there is when it
    names none or several."""
    runs, _ = list_runs(loops_dir, loop_name)
    if run_ref == "last":
        matches = runs[-1:]
    else:
        matches = [run for run in runs if run_ref in (run.run_id, run.id)] or [
            run for run in runs if run.run_id.startswith(run_ref)
        ]
    if len(matches) != 1:
        ids = ", ".join(run.run_id for run in runs[-5:]) or "none yet"
        what = "several runs" if matches else "no run"
        raise LoopRuntimeError(
            f"loop '{loop_name}' has {what} '{run_ref}' in its archive (latest: {ids};"
            f" see ll-loop runs {loop_name})"
        )
    run = matches[0]
    folder = archive_dir(loops_dir, loop_name) / run.run_id
    return run, RunFiles(loop_name, loops_dir, folder=folder)
