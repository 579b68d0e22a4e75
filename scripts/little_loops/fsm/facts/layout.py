"""Every file name under `.loops/.running/` and `.loops/.history/`: made here, nowhere else."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.facts.errors import LoopDefinitionError

LOOPS_DIR_NAME = ".loops"
RUNNING_DIR = ".running"
HISTORY_DIR = ".history"  # finished runs: `.history/<loop>/<run id>/`, the run files copied
WORKTREES_DIR = ".worktrees"  # the git worktrees of `--worktree` runs: `.worktrees/<name>@<id>/`
RUN_DIRS = "runs"  # under `.running/`: each run's scratch folder, `${context.run_dir}`
MEMORY_DIR = "tmp"  # diff_stall's memory of the last diff
THEIR_RUN_DIRS = "runs"  # `.loops/runs/<loop>-<time>/`: little-loops' run folders (`--compat`)
GITIGNORE = ".gitignore"
RUNNING_GITIGNORE = "# Run files of ll-loop: never committed.\n*\n"  # inside `.running/`
# `.loops/.gitignore` as `ll-loop init` writes it: `.running/`, `.history/`, `.worktrees/`.
LOOPS_GITIGNORE = (
    f"# ll-loop keeps each run's files in {RUNNING_DIR}/, finished runs in {HISTORY_DIR}/ and"
    f" the worktrees of --worktree runs in {WORKTREES_DIR}/: never commit them.\n"
    f"{RUNNING_DIR}/\n{HISTORY_DIR}/\n{WORKTREES_DIR}/\n"
)
RUN_KEY_SEPARATOR = "@"  # a run's key: `<name>` in the main checkout, `<name>@<run id>` else
RUN_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
# The environment variable a run's actions carry (`<loop>:<pid of ll-loop>`): how a resume
# finds what a crashed run left running (runs/orphans.py).
RUN_MARKER_ENV = "LL_LOOP_RUN"
# What a fan-out's child run carries instead: its parent's marker (the child is a run of its
# own, which a resume of its parent waits for, and a stop of its dead parent ends).
PARENT_MARKER_ENV = "LL_LOOP_PARENT"
# Tells a child the pid of the fan-out that started it: it runs under that run's scope lock
# (runs/locks.py lets it in only when that pid is its parent process and holds a claim).
PARENT_ENV = "LL_LOOP_FANOUT_PARENT"
# Tells a background run the pid and start time of the `ll-loop` that started it: a stop
# request naming that process is its own (runs/start_marker.py).
LAUNCHER_ENV = "LL_LOOP_LAUNCHER"
RUN_ID_LENGTH = 4  # a run's short id: RUN_ID_LENGTH characters of RUN_ID_ALPHABET
RUN_ID_REGEX = rf"[a-z0-9]{{{RUN_ID_LENGTH}}}"  # RUN_ID_PATTERN, compiled on first use
RUN_SUMMARY = "run.json"  # an archived run's summary: id, times, outcome, passes, cost
LOOP_DEFINITION = "loop.json"  # the loop an archived run ran, as data (its report's graph)
ARCHIVE_PARTIAL = ".partial-"  # an entry being written: `.partial-<run id>.<pid>[.old]`
STATE_SUFFIX = ".state.json"  # the run's state (LoopState), replaced atomically
EVENTS_SUFFIX = ".events.jsonl"  # the run's events, one JSON line each, append-only
# An older part of the events, rotated out of EVENTS_SUFFIX: `<name>.events.<n>.jsonl`.
EVENTS_SEGMENT = ".events.{n}.jsonl"
LOCK_SUFFIX = ".lock"  # the run's scope claim (a LockRecord)
LOG_SUFFIX = ".log"  # stdout and stderr of a background run
APPROVAL_SUFFIX = ".approval.json"  # the answer to a run's approval question (approve/reject)
# The answer the run took, kept until the next question's answer: a second one is refused.
APPROVAL_TAKEN_SUFFIX = APPROVAL_SUFFIX + ".taken"
OPTIONS_SUFFIX = ".options.json"  # the run flags (-n, --max-cost, ...) resume goes on with
# The loop the run runs, as data, written when it starts (or resumes): its report's graph,
# whatever the loop came from (a `.loops/` file, `library:NAME`, a path). Archived as
# LOOP_DEFINITION.
DEFINITION_SUFFIX = ".loop.json"
# A process starting (or resuming) the run, before its first event: its pid, and the worktree
# a `run --worktree` makes, so that a later command can roll back what a kill left.
STARTING_SUFFIX = ".starting.json"
# `ll-loop stop` of a run found not running: a run or resume started before it honours it.
STOP_REQUEST_SUFFIX = ".stop.json"
OUTPUT_SUFFIX = ".out"  # the full stdout of a state's action (a Claude session's transcript)
ERROR_SUFFIX = ".err"  # the full stderr of that action, next to its OUTPUT_SUFFIX file
PROMPT_SUFFIX = ".prompt"  # the prompt of an agent that reads stdin or a file, next to its .out
STEP_SUFFIXES = (OUTPUT_SUFFIX, ERROR_SUFFIX, PROMPT_SUFFIX)  # the files of one step
TEMP_SUFFIX = ".tmp"  # a write_atomic temp file: `.<name>.<pid in 8 hex digits>.tmp`
MUTEX_NAME = ".scopes.lock"  # the flock all scope claims take; never deleted
# In a repository's common git dir, never deleted: the flock of one `worktree merge` at a time.
MERGE_LOCK = f"ll-loop-merge{LOCK_SUFFIX}"
FILE_NAME_MAX = 255  # bytes in one file name (NAME_MAX of Linux's and macOS's file systems)
# Leaves room for the longest suffix plus a temp-file tail within a FILE_NAME_MAX file name.
MAX_NAME_BYTES = 200

# Not kept in the state part of an output file name: a `.` there would make `x` + `a.b` and
# `x.a` + `b` the same `x.a.b.out`.
_UNSAFE = r"[^A-Za-z0-9_-]+"
STATE_NAME_CAP = 80  # characters of a state's name its files keep (then `~` and a hash)
_DIGEST_LENGTH = 8  # hex digits of that hash


def find_loops_dir(start: Path | None = None) -> Path | None:
    """The nearest `.loops` in `start` (the current directory) or a parent, as git finds `.git`.

    The first `.loops` found is the one, even when it is not a folder (its error then names
    it). None when there is none up to `/`.
    """
    here = Path.cwd() if start is None else Path(start).absolute()
    for folder in (here, *here.parents):
        candidate = folder / LOOPS_DIR_NAME
        if os.path.lexists(candidate):
            return candidate
    return None


def default_loops_dir() -> Path:
    """The `.loops` all commands use: `find_loops_dir()`, else `.loops` in the current folder."""
    found = find_loops_dir()
    return found if found is not None else Path.cwd() / LOOPS_DIR_NAME


def running_dir(loops_dir: Path | None = None) -> Path:
    """`<loops_dir>/.running` (the `default_loops_dir()` when None)."""
    return (Path(loops_dir) if loops_dir is not None else default_loops_dir()) / RUNNING_DIR


def make_running_dir(running: Path) -> Path:
    """Create the `.running/` folder `running` if needed, ignored by git: a `.gitignore`
    holding `*` inside it (it ignores itself too, and no file of the user's is touched).

    A `.running` that is a symbolic link is refused (NotOurFile). The `.gitignore` is best
    effort: when it cannot be written (a full disk), none is left and the run file written
    next says what is wrong.
    """
    if running.is_symlink():  # its files would be written wherever it points
        from little_loops.fsm.facts.runfile import refused

        raise refused(running, "a symbolic link")
    running.mkdir(parents=True, exist_ok=True)
    ignore = running / GITIGNORE
    if os.path.lexists(ignore):
        return running
    try:
        with open(ignore, "x", encoding="utf-8") as out:
            out.write(RUNNING_GITIGNORE)
    except FileExistsError:
        pass
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(ignore)
    return running


def validate_loop_name(name: str) -> str:
    """Return `name` if it can name files under `.running/`, else raise LoopDefinitionError."""
    problem = None
    if not name:
        problem = "it is empty"
    elif "/" in name or "\\" in name:
        problem = "it contains a path separator"
    elif name.startswith("."):
        problem = "it starts with '.'"
    elif any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        problem = "it contains a control character"
    elif len(name.encode("utf-8", errors="surrogatepass")) > MAX_NAME_BYTES:
        problem = f"it is longer than {MAX_NAME_BYTES} bytes"
    if problem:
        raise LoopDefinitionError(f"loop name {name!r} cannot be used as a file name: {problem}")
    return name


def archive_dir(loops_dir: Path, loop_name: str) -> Path:
    """Where the finished runs of `loop_name` are kept: `<loops_dir>/.history/<loop_name>/`."""
    return loops_dir / HISTORY_DIR / loop_name


def partial_entry(folder: Path, run_id: str, pid: int | None = None) -> Path:
    """The folder an archive entry is written in before it is renamed to `<run id>`."""
    return folder / f"{ARCHIVE_PARTIAL}{run_id}.{os.getpid() if pid is None else pid}"


@dataclass(frozen=True)
class RunFiles:
    """The files of one loop's run under `<loops_dir>/.running/` (the name is not checked),
    or, given a *folder*, those of an archived run (the same names in that folder).

    *loop_name* is the run's key (`run_key`, `LoopState.key`): the loop's name, or
    `<name>@<id>` for a run in a worktree; archived files are named by the loop's name."""

    loop_name: str
    loops_dir: Path
    folder: Path | None = None
    # The names of the rotated parts in the folder (`rotated_parts`), listed once by a reader
    # of many runs (`watch`'s list), so that each run's are not looked for in the whole
    # folder again; never a writer's (None: look).
    parts_listed: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def running_dir(self) -> Path:
        return self.folder if self.folder is not None else self.loops_dir / RUNNING_DIR

    def _file(self, suffix: str) -> Path:
        return self.running_dir / f"{self.loop_name}{suffix}"

    @property
    def state(self) -> Path:
        return self._file(STATE_SUFFIX)

    @property
    def events(self) -> Path:
        return self._file(EVENTS_SUFFIX)

    def events_segment(self, number: int) -> Path:
        """The rotated part number `number` (1 is the oldest) of the events."""
        return self._file(EVENTS_SEGMENT.format(n=number))

    def events_segments(self) -> list[int]:
        """The numbers of the rotated parts of the events that exist, oldest first."""
        head, tail = EVENTS_SEGMENT.split("{n}")
        prefix, found = f"{self.loop_name}{head}", []
        try:  # one pass over the names, no pattern: a folder of 2,000 runs reads it per run
            listed: Iterable[str] = (
                os.listdir(self.running_dir) if self.parts_listed is None else self.parts_listed
            )
        except OSError:
            return []
        names = [name for name in listed if name.startswith(prefix)]
        for name in names:
            if not name.endswith(tail) or len(name) <= len(prefix) + len(tail):
                continue
            number = name[len(prefix) : -len(tail)]
            if number.isascii() and number.isdigit() and not number.startswith("0"):
                found.append(int(number))
        return sorted(found)

    @property
    def lock(self) -> Path:
        return self._file(LOCK_SUFFIX)

    @property
    def log(self) -> Path:
        return self._file(LOG_SUFFIX)

    @property
    def options(self) -> Path:
        return self._file(OPTIONS_SUFFIX)

    @property
    def approval(self) -> Path:
        return self._file(APPROVAL_SUFFIX)

    @property
    def approval_taken(self) -> Path:
        return self._file(APPROVAL_TAKEN_SUFFIX)

    @property
    def definition(self) -> Path:
        return self._file(DEFINITION_SUFFIX)

    @property
    def starting(self) -> Path:
        return self._file(STARTING_SUFFIX)

    @property
    def stop_request(self) -> Path:
        return self._file(STOP_REQUEST_SUFFIX)


def rotated_parts(names: Iterable[str]) -> frozenset[str]:
    """Those of *names* (a folder's) that may be rotated parts of a run's events."""
    head, tail = EVENTS_SEGMENT.split("{n}")
    return frozenset(
        name
        for name in names
        if name.endswith(tail) and head in name and name[: -len(tail)].rpartition(".")[2].isdigit()
    )


def glob_escape(text: str) -> str:
    """*text* as a literal in a glob pattern (`[`, `*` and `?` are pattern characters)."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def run_files(loop_name: str, loops_dir: Path | None = None) -> RunFiles:
    """The run files of `loop_name` under `loops_dir` (the `default_loops_dir()` when None)."""
    return RunFiles(loop_name, Path(loops_dir) if loops_dir is not None else default_loops_dir())


def mutex_file(running: Path) -> Path:
    """The flock file that serialises the scope claims in the `.running/` folder `running`."""
    return running / MUTEX_NAME


def _named(running: Path, suffix: str) -> list[tuple[str, Path]]:
    """(loop name, path) of each `<name><suffix>` in `running`, by name; dot files skipped."""
    if not running.is_dir():
        return []
    found = []
    for path in sorted(running.glob(f"*{suffix}")):
        name = path.name[: -len(suffix)]
        if not name.startswith("."):
            found.append((name, path))
    return found


def state_files(running: Path) -> list[tuple[str, Path]]:
    """(loop name, state file) of every run with a state file in `running`, by name."""
    return _named(running, STATE_SUFFIX)


def starting_files(running: Path) -> list[tuple[str, Path]]:
    """(run key, marker) of every run on its way up in `running`, by key."""
    return _named(running, STARTING_SUFFIX)


def lock_files(running: Path) -> list[tuple[str, Path]]:
    """(loop name, lock file) of every scope claim in `running`, by name (the mutex skipped)."""
    return _named(running, LOCK_SUFFIX)


def output_files(running: Path, loop_name: str) -> list[Path]:
    """The `.out`, `.err` and `.prompt` files of `loop_name`'s steps in `running`."""
    prefix, found = f"{loop_name}.", []
    try:
        candidates = sorted(running.glob(f"{glob_escape(prefix)}*"))
    except OSError:
        return []
    for path in candidates:
        middle, dot, suffix = path.name[len(prefix) :].rpartition(".")
        # A state part never holds a `.`: `x.a.b.out` is loop `x.a`'s, not loop `x`'s.
        if dot and f".{suffix}" in STEP_SUFFIXES and middle and "." not in middle:
            found.append(path)
    return found


def output_file_name(loop_name: str, state_name: str, *, hashed: bool = True) -> str:
    """`<loop>.<state>.out`, with the state name made safe for one file name.

    State names are free text (`x/../../y` is a valid name), so anything but letters,
    digits, `_` and `-` becomes `_` (a `.` too: `x` + `a.b` must not meet `x.a` + `b`), the
    length is capped, and a changed name gets `~` and a short hash, which no unchanged name
    can have, so two states of two loops never share a file. With *hashed* False, the hash
    is zeros of its length (for measuring a name, without loading hashlib).
    """
    safe = re.sub(_UNSAFE, "_", state_name)[:STATE_NAME_CAP] or "_"
    if safe != state_name:
        digest = "0" * _DIGEST_LENGTH
        if hashed:
            import hashlib  # only for unsafe state names; keeps `--help` and `validate` lean

            text = state_name.encode("utf-8", "surrogatepass")
            digest = hashlib.sha1(text).hexdigest()[:_DIGEST_LENGTH]
        safe = f"{safe}~{digest}"
    return f"{loop_name}.{safe}{OUTPUT_SUFFIX}"


def stderr_file(output_path: Path) -> Path:
    """Where stderr goes of the action whose stdout goes to *output_path*: `x.out` → `x.err`."""
    return output_path.with_name(output_path.name.removesuffix(OUTPUT_SUFFIX) + ERROR_SUFFIX)


def action_output_file(output_dir: Path, pid: int | None = None) -> Path:
    """Where a runner keeps the cut-short output of an action whose request names no file."""
    return output_dir / f"action-{os.getpid() if pid is None else pid}{OUTPUT_SUFFIX}"


def temp_file(path: Path, pid: int | None = None) -> Path:
    """The temp file `write_atomic(path, ...)` writes first: one per process, never shared."""
    return path.parent / f".{path.name}.{os.getpid() if pid is None else pid:08x}{TEMP_SUFFIX}"


def leftover_temp_files(path: Path) -> list[Path]:
    """The temp files of `write_atomic(path, ...)` calls that a crash cut short."""
    # Exactly what temp_file makes: ".<name>." + 8 characters + ".tmp", so the temp
    # files of a loop whose name merely starts with this one are not matched.
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}{re.escape(TEMP_SUFFIX)}")
    try:
        candidates = list(path.parent.glob(f".{path.name}.*{TEMP_SUFFIX}"))
    except OSError:
        return []
    return [leftover for leftover in candidates if pattern.fullmatch(leftover.name)]


def run_key(loop_name: str, run_id: str | None) -> str:
    """What a run's files are named by: `<name>`, or `<name>@<run id>` given a *run_id*."""
    return loop_name if run_id is None else f"{loop_name}{RUN_KEY_SEPARATOR}{run_id}"


def files_key(loop_name: str, run_id: str | None, in_worktree: bool) -> str:
    """The key a run's files are named by: its id is in it only for a run in a worktree (a
    run in the main checkout keeps the `<name>.*` files of versions before run ids)."""
    return run_key(loop_name, run_id if in_worktree else None)


def split_run_key(key: str) -> tuple[str, str | None]:
    """(loop name, run id or None) of a run key or a `NAME@ID` typed by a user: the part after
    the last `@` is an id only when it looks like one (a loop may have `@` in its name)."""
    name, separator, run_id = key.rpartition(RUN_KEY_SEPARATOR)
    if separator and name and _run_id_pattern().fullmatch(run_id):
        return name, run_id
    return key, None


WORKTREE_BRANCH = "ll/{name}/{run_id}"  # the branch a `--worktree` run makes and works on


def worktree_branch(loop_name: str, run_id: str) -> str:
    """The branch of run *run_id* of *loop_name*: `ll/<name>/<id>`."""
    return WORKTREE_BRANCH.format(name=loop_name, run_id=run_id)


def worktrees_dir(loops_dir: Path) -> Path:
    """`<loops_dir>/.worktrees/`: the worktrees of `--worktree` runs (create it with
    make_running_dir, which also makes git ignore it)."""
    return Path(loops_dir) / WORKTREES_DIR


def worktree_path(loops_dir: Path, loop_name: str, run_id: str) -> Path:
    """The worktree of run *run_id* of *loop_name*: `<loops_dir>/.worktrees/<name>@<id>/`."""
    return worktrees_dir(loops_dir) / run_key(loop_name, run_id)


def name_bytes(name: str) -> int:
    """The length of *name* in a file name: its UTF-8 bytes."""
    return len(name.encode("utf-8", errors="surrogatepass"))


def run_file_names(loop_name: str) -> list[str]:
    """Every file name a run of *loop_name* makes of its name, at their longest: those of a
    run in a worktree (`NAME@ID`, its folder too), a late rotated part of its events, and
    the temp file of each atomic write."""
    key = run_key(loop_name, "x" * RUN_ID_LENGTH)
    suffixes = [STATE_SUFFIX, EVENTS_SUFFIX, EVENTS_SEGMENT.format(n=10**6), LOCK_SUFFIX]
    suffixes += [LOG_SUFFIX, APPROVAL_SUFFIX, OPTIONS_SUFFIX, DEFINITION_SUFFIX]
    suffixes += [STARTING_SUFFIX, STOP_REQUEST_SUFFIX]
    names = [key, *(f"{key}{suffix}" for suffix in suffixes)]
    return [*names, *(temp_file(Path(name), 0).name for name in names[1:])]


def state_file_names(loop_name: str, state_name: str | None = None) -> list[str]:
    """The file names a run of *loop_name* makes of the state *state_name* (its action's
    stdout and stderr), at their longest: in a worktree, whose runs' keys carry an id.
    Without a state name: the longest any state's can be (a name past the cap, changed)."""
    name = "x" * (STATE_NAME_CAP + 1) if state_name is None else state_name
    key = run_key(loop_name, "x" * RUN_ID_LENGTH)
    output = output_file_name(key, name, hashed=state_name is not None)
    return [output, stderr_file(Path(output)).name]


if TYPE_CHECKING:
    RUN_ID_PATTERN: re.Pattern[str]  # a run's short id (RUN_ID_REGEX)


@cache
def _run_id_pattern() -> re.Pattern[str]:
    return re.compile(RUN_ID_REGEX)


def __getattr__(name: str) -> re.Pattern[str]:
    """`RUN_ID_PATTERN`, compiled on first use: a command that reads no run id (validate)
    compiles nothing at import."""
    if name == "RUN_ID_PATTERN":
        return _run_id_pattern()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
