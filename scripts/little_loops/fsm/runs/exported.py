"""An `ll-loop export` file unpacked within bounds: a regular file, capped sizes, a deadline.

`report --from` reads files someone else made. A regular file is opened, and a pipe (a FIFO,
`<(...)`) is copied into a temporary file first, within the caps and the deadline (a device,
a socket or a directory is refused before it is read from). It is decompressed as
a stream, and every byte tarfile asks of that stream is counted: all of them against the
unpacked total, those of extended headers (GNU long names and links, pax headers, which
tarfile reads whole into memory) against their own caps, checked *before* they are read.
Global pax headers (which tarfile keeps and copies into every later member) are refused;
ll-loop export writes none. The whole read has a deadline.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import stat
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.pipe import (
    Deadline,
    NoTempFile,
    PipeRefused,
    read_deadline,
    spool,
    temp_writes,
)
from little_loops.fsm.facts.runfile import kind_of

# What `report --from` reads of a file: members `<loop>/<run id>/<file name>`, regular files
# only, each at most MEMBER_BYTES and all together at most TOTAL_BYTES once unpacked.
_MEMBER = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,199})/(\d{8}-\d{6}(?:-\d+)?)/([^/\0]{1,255})$")
MEMBER_BYTES = 64 * 1024 * 1024
TOTAL_BYTES = 1024 * 1024 * 1024
MAX_MEMBERS = 100_000
HEADER_BYTES = 1024 * 1024  # one extended header (a long name, a pax record set), at most
ALL_HEADER_BYTES = 16 * 1024 * 1024  # all extended headers of a file together, at most
_CHUNK = 64 * 1024
_PER_MEMBER = 2 * tarfile.BLOCKSIZE  # a member's header and padding, past its data


class _Stream(Protocol):
    """What is read of the (decompressed) file."""

    def read(self, size: int = -1, /) -> bytes: ...


_MAGIC: tuple[tuple[bytes, Callable[[IO[bytes]], _Stream]], ...] = (
    (b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"BZh", bz2.BZ2File),
    (b"\xfd7zXZ\x00", lzma.LZMAFile),
)


class _Refused(Exception):
    """Why the file is not read further (the caller names the file)."""


class _Counted:
    """The decompressed stream as tarfile reads it: forward only, every byte counted, the
    caps and the deadline checked before each read."""

    def __init__(self, stream: _Stream, deadline: Deadline) -> None:
        self._stream = stream
        self._deadline = deadline
        self._at = 0
        self.header_bytes = 0
        self.in_member = False  # reading a member's data (not a header) on our own

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        target = offset if whence == os.SEEK_SET else self._at + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR) or target < self._at:
            raise _Refused("it asks to be read backwards")
        while self._at < target:  # skipped data is unpacked all the same: it counts
            if not self._read(min(_CHUNK, target - self._at)):
                break
        return self._at

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            raise _Refused("it asks to be read whole")
        if not self.in_member and size > tarfile.BLOCKSIZE:
            if size > HEADER_BYTES:
                raise _Refused(f"a header of {size:,} bytes (more than 1 MiB)")
            self.header_bytes += size
            if self.header_bytes > ALL_HEADER_BYTES:
                raise _Refused("more than 16 MiB of long-name and pax headers")
        return self._read(size)

    def _read(self, size: int) -> bytes:
        if self._deadline.left() < 0:
            raise _Refused(_late(self._deadline))
        if self._at + size > TOTAL_BYTES + ALL_HEADER_BYTES + MAX_MEMBERS * _PER_MEMBER:
            raise _Refused(f"more than {MAX_MEMBERS:,} files or 1 GiB unpacked")
        data = self._stream.read(size)
        self._at += len(data)
        return data


def open_regular(source: Path, deadline: Deadline | None = None) -> IO[bytes]:
    """*source* opened for reading if it is a regular file (a link to one is fine), or a
    copy of what a pipe (a FIFO, `<(...)`) gives until its writer ends, by *deadline*
    (`read_deadline()` when none is given); LoopRuntimeError naming what it is otherwise,
    before anything is read from it."""
    try:
        before = os.stat(source)
        if not stat.S_ISREG(before.st_mode) and not stat.S_ISFIFO(before.st_mode):
            raise _kind(source, before.st_mode)
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise LoopRuntimeError(f"{source}: no such file") from None
    except OSError as exc:
        raise LoopRuntimeError(f"{source}: cannot read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode):
        try:
            return _spooled(source, fd, read_deadline() if deadline is None else deadline)
        finally:
            os.close(fd)
    if not stat.S_ISREG(mode):  # swapped between the stat and the open
        os.close(fd)
        raise _kind(source, mode)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _spooled(source: Path, fd: int, deadline: Deadline) -> IO[bytes]:
    """What the pipe *fd* gives until its writer ends, copied (`pipe.spool`): at most
    TOTAL_BYTES, by *deadline*."""

    def bad(why: str) -> LoopRuntimeError:
        return LoopRuntimeError(f"{source}: not a run exported by ll-loop export ({why})")

    try:
        copy = spool(fd, deadline, TOTAL_BYTES)
    except PipeRefused as exc:
        raise bad(_late(deadline) if exc.late else "more than 1 GiB") from None
    except NoTempFile as exc:  # no fault of the pipe's: not "not a run exported"
        raise LoopRuntimeError(f"{source}: {exc}") from None
    if copy.seek(0, os.SEEK_END) == 0:
        copy.close()
        raise bad("nothing was written to it")
    copy.seek(0)
    return copy


def _kind(source: Path, mode: int) -> LoopRuntimeError:
    return LoopRuntimeError(f"{source}: is {kind_of(mode)}, not a file ll-loop export wrote")


def _late(deadline: Deadline) -> str:
    return f"{deadline.missed()} (all the files together)"


def unpack_export(source: Path, into: Path, deadline: Deadline) -> list[tuple[str, str]]:
    """Unpack the run files in the export *source* under *into*, by *deadline*; the (loop,
    run id) pairs found. LoopRuntimeError naming *source* when it is not an export ll-loop
    can read.

    Only members shaped `<loop>/<run id>/<name>` that are regular files are unpacked, by
    our own writes (never tarfile's extraction): no link, device, absolute path or `..`
    can reach outside *into*, and the sizes are capped."""

    def bad(why: str) -> LoopRuntimeError:
        return LoopRuntimeError(f"{source}: not a run exported by ll-loop export ({why})")

    with open_regular(source, deadline) as raw:
        try:
            return _unpack(raw, into, deadline, bad)
        except FileExistsError:
            raise bad("a file is in it twice") from None
        except NoTempFile as exc:
            raise LoopRuntimeError(f"{source}: {exc}") from None
        except _Refused as exc:
            raise bad(str(exc)) from None
        except RecursionError:
            raise bad("headers chained too deep") from None
        except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
            raise bad(str(exc) or type(exc).__name__) from None


def _unpack(raw: IO[bytes], into: Path, deadline: Deadline, bad: Any) -> list[tuple[str, str]]:
    magic = raw.read(6)
    raw.seek(0)
    opener = next((make for prefix, make in _MAGIC if magic.startswith(prefix)), None)
    stream: _Stream = raw if opener is None else opener(raw)
    counted = _Counted(stream, deadline)
    found: list[tuple[str, str]] = []
    total = members = 0
    with tarfile.open(fileobj=counted, mode="r:") as tar:  # type: ignore[call-overload]
        while (member := tar.next()) is not None:
            tar.members.clear()  # tarfile keeps every member read: we need none of them
            if tar.pax_headers:
                raise bad("a global pax header; ll-loop export writes none")
            # Every member counts, even one skipped: reading past it unpacks it too.
            members += 1
            total += max(0, member.size)
            if total > TOTAL_BYTES or members > MAX_MEMBERS:
                raise _Refused(f"more than {MAX_MEMBERS:,} files or 1 GiB unpacked")
            match = _MEMBER.match(member.name)
            if not member.isfile() or match is None:
                continue
            loop, run_id, name = match.groups()
            if name in (".", ".."):
                raise bad(f"{member.name}: not a file name")
            if member.size > MEMBER_BYTES:
                raise bad(f"{member.name}: more than 64 MiB")
            _write_member(tar, counted, member, into / loop / run_id / name)
            if (loop, run_id) not in found:
                found.append((loop, run_id))
    if not found:
        raise bad("no run files in it")
    return found


def _write_member(tar: tarfile.TarFile, counted: _Counted, member: Any, target: Path) -> None:
    """Copy the data of *member* to the new file *target*, a chunk at a time."""
    reader = tar.extractfile(member)
    if reader is None:
        return
    counted.in_member = True
    try:
        with reader, _new_file(target) as out:
            while chunk := reader.read(_CHUNK):
                with temp_writes():  # (a full disk is no fault of the file)
                    out.write(chunk)
            with temp_writes():
                out.flush()
    finally:
        counted.in_member = False


def _new_file(target: Path) -> IO[bytes]:
    """The new file *target*, open for writing: FileExistsError when it is there already
    (the export holds a member twice), NoTempFile when it cannot be made."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return open(target, "xb")  # noqa: SIM115 (the caller closes it)
    except FileExistsError:
        raise
    except OSError as exc:
        raise NoTempFile(exc) from None
