"""Files written whole or not at all: atomic (and durable) replaces, and JSON as UTF-8 bytes."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import leftover_temp_files, temp_file
from little_loops.fsm.facts.runfile import kind_of
from little_loops.fsm.processes.pids import pid_alive


def write_atomic(
    path: Path, data: str | bytes, *, durable: bool = True, private: bool = True
) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never a part of one.

    Run files are *private* (0600); a file made for the user (a report) follows the umask.

    Atomic always (a temp file renamed over `path`), so no crash of this process leaves a
    half-written file. `durable` also fsyncs the data before the rename and the folder
    after it, so the new file survives a power cut or a kernel crash too.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # One temp name per process (its pid in 8 hex digits): cheaper than mkstemp's random
    # name, and two processes never share it. Same shape as remove_leftover_temp_files expects.
    tmp = str(temp_file(path))
    # A file (or a planted link) left at the temp name goes first; then the temp file is
    # created anew (O_EXCL), never opened through a link. Run files stay private (0600).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600 if private else 0o666)
    except OSError as exc:
        raise _about(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _about(exc, path) from None
        raise
    if not durable:
        return
    # Make the rename itself durable; not every file system allows fsync on a directory.
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_user_file(path: Path, data: str | bytes) -> None:
    """Write a file the user named (`--html FILE`, `-o FILE`): replaced atomically like
    `write_atomic`, except that a character device or a FIFO there (`/dev/stdout`,
    `/dev/null`, followed through a link) is written to, never replaced by a file of ours.

    LoopRuntimeError before anything is written when it is a FIFO nobody reads (the write
    would wait for ever) or anything else that is not a file: a directory, a socket, a disk."""
    import stat

    try:
        kind = os.stat(path).st_mode
    except OSError:
        kind = 0
    if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
        if kind and not stat.S_ISREG(kind):
            raise _not_writable(path, kind)
        write_atomic(path, data, durable=False, private=False)
        return
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # Non-blocking: a FIFO without a reader says so (ENXIO) rather than wait for one for
    # ever; and a terminal named here does not become our controlling one.
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO and stat.S_ISFIFO(kind):
            raise LoopRuntimeError(
                f"cannot write {path}: a FIFO nobody reads (start its reader first)"
            ) from None
        raise _about(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            kind = os.fstat(fd).st_mode  # what was opened: the path may have changed since
            if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
                raise _not_writable(path, kind)
            os.set_blocking(fd, True)
            handle.write(raw)
    except OSError as exc:
        raise _about(exc, path) from None


def _not_writable(path: Path, mode: int) -> LoopRuntimeError:
    return LoopRuntimeError(f"cannot write {path}: is {kind_of(mode)}, not a file")


def _about(exc: OSError, path: Path) -> OSError:
    """*exc* naming the file being replaced (a write or fsync error names no file at all)."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def remove_leftover_temp_files(path: Path) -> None:
    """Delete the temp files of `write_atomic(path, ...)` calls that a crash cut short.

    Only for a writer that no other process writes `path` with at the same moment (the
    temp file of a write in progress would go too).
    """
    with contextlib.suppress(OSError):
        for leftover in leftover_temp_files(path):
            leftover.unlink(missing_ok=True)


def remove_dead_temp_files(path: Path) -> None:
    """Delete the temp files of `write_atomic(path, ...)` calls whose process is gone (a
    file that several processes may write: a live writer's temp file stays)."""
    for leftover in leftover_temp_files(path):
        writer = _writer(path, leftover)
        if writer is not None and not pid_alive(writer):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _writer(path: Path, leftover: Path) -> int | None:
    """The pid whose `temp_file(path)` *leftover* is, or None."""
    try:
        pid = int(leftover.name.rsplit(".", 2)[-2], 16)
    except ValueError:
        return None
    return pid if temp_file(path, pid) == leftover else None


# One compact encoder for every event line: json.dumps would build a new one per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# Its C encoder, made once (JSONEncoder.encode makes one per call, through two Python
# calls). No check for cycles: a line is made of the run's data (parsed JSON, the
# executor's fields), which holds none; a cycle would be a RecursionError, not a ValueError.
_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without the C module
_C_COMPACT = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None, _COMPACT.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
)


def json_bytes(value: Any, indent: int | None = None) -> bytes:
    """UTF-8 JSON; strings holding undecodable bytes (lone surrogates) are escaped, not lost."""
    separators = None if indent else (",", ":")
    try:
        if not indent:
            if _C_COMPACT is None:
                return _COMPACT.encode(value).encode("utf-8")
            return "".join(_C_COMPACT(value, 0)).encode("utf-8")
        text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, indent=indent, separators=separators).encode("ascii")
