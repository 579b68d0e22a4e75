"""Write a file below a folder without following a symbolic link on the way or at its name."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path, PurePosixPath

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def write_below(top: Path, relative: str, data: bytes, mode: int) -> None:
    """Write *data* with *mode* to *relative* under *top*: each folder on the way is opened
    without following a link (a missing one is made), the bytes go to a new file beside the
    name, which is then renamed over it, so a link at the name is replaced, never written
    through. OSError when a folder on the way is a link or no folder, or *relative* leaves
    *top*."""
    path = PurePosixPath(relative)
    if path.is_absolute() or not path.parts or any(p in (".", "..") for p in path.parts):
        raise OSError(errno.EINVAL, f"not a path below the folder: {relative!r}")
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in path.parts[:-1]:
            try:
                inner = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(name, dir_fd=fd)
                inner = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        spare = f".{path.name}.ll-{secrets.token_hex(6)}"
        out = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                os.fchmod(out, mode)
            finally:
                os.close(out)
            os.replace(spare, path.name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError:
            os.unlink(spare, dir_fd=fd)
            raise
    finally:
        os.close(fd)
