"""Start a process on CPython's vfork path, its program looked up on PATH once per PATH."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

# stdin, stdout, stderr: a descriptor, subprocess.PIPE / DEVNULL / STDOUT, or None (ours)
Streams = tuple[int | None, int | None, int | None]


class ProgramPaths:
    """Where each program of a command line is, looked up on PATH once per PATH value.

    CPython searches PATH itself for a bare name: it builds every candidate in Python and
    the child tries `execve` on each until one works (a failed call per folder before the
    program's, with the parent suspended meanwhile). Given the full path, it makes one.
    A name is looked up again when PATH changes; when a start from the path found fails
    but CPython's own search works, the name is left to CPython from then on. A PATH with
    a relative entry is left to CPython too (what it finds depends on `cwd`).
    """

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: dict[tuple[str, str | None], str] = {}

    def lookup(self, name: str, path: str | None) -> str:
        """The full path of *name* on *path* (None: the default PATH), or "" to leave it."""
        key = (name, path)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = _search(name, path)
        return found

    def remember(self, name: str, path: str | None, found: str | None) -> None:
        """Set what `lookup` answers (None: look it up again next time)."""
        if found is None:
            self._found.pop((name, path), None)
        else:
            self._found[(name, path)] = found


class Overlay(Mapping[str, str]):
    """This process's environment with *extra* variables laid over it, for a child: handed to
    it as our environment's bytes (`os.environb`) plus the few converted ones, not as every
    variable encoded again at each start."""

    def __init__(self, extra: Mapping[str, str]) -> None:
        self.extra = dict(extra)

    def __getitem__(self, name: str) -> str:
        return self.extra[name] if name in self.extra else os.environ[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.extra
        yield from (name for name in os.environ if name not in self.extra)

    def __len__(self) -> int:
        return len(self.extra) + sum(1 for name in os.environ if name not in self.extra)

    def as_bytes(self) -> dict[bytes, bytes]:
        return {**_environb(), **{os_bytes(k): os_bytes(v) for k, v in self.extra.items()}}


def _environb() -> dict[bytes, bytes]:
    """A copy of our environment's bytes: of the dict behind `os.environb` (a C-level copy),
    not through its mapping methods (a Python call a variable, ~40x slower, at every step)."""
    data = getattr(os.environb, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environb)


def _env_bytes(env: Mapping[str, str] | None) -> dict[bytes, bytes] | None:
    if env is None:
        return None
    if isinstance(env, Overlay):
        return env.as_bytes()
    return {os_bytes(k): os_bytes(v) for k, v in env.items()}


def start(
    argv: Sequence[str],
    cwd: Path | None,
    env: Mapping[str, str] | None,
    fds: Streams,
    paths: ProgramPaths,
    *,
    session: bool = True,
) -> subprocess.Popen[bytes]:
    """Start *argv* with stdin, stdout and stderr on *fds* (descriptors, `subprocess.PIPE`
    and the like, or None: ours), as the leader of a new session unless not *session*.

    All other descriptors are closed in the child (`close_fds`, the default). No
    `preexec_fn`, user or group change, so CPython 3.11+ starts it with vfork rather than
    fork (`start_new_session` and `cwd` are done in the vforked child). Raises what
    `Popen` raises; a start from the path found that fails is tried again with CPython's
    own search, whose error (if any) is the one raised.
    """
    search = (os.environ if env is None else env).get("PATH")
    program = paths.lookup(argv[0], search)
    if not program:
        return _popen(argv, None, cwd, env, fds, session)
    try:
        return _popen(argv, program, cwd, env, fds, session)
    except OSError:
        pass
    try:
        proc = _popen(argv, None, cwd, env, fds, session)
    except OSError:
        paths.remember(argv[0], search, None)  # not the path's fault, e.g. a missing cwd
        raise
    paths.remember(argv[0], search, "")
    return proc


def _popen(
    argv: Sequence[str],
    executable: str | None,
    cwd: Path | None,
    env: Mapping[str, str] | None,
    fds: Streams,
    session: bool,
) -> subprocess.Popen[bytes]:
    stdin, stdout, stderr = fds
    return subprocess.Popen(
        [os_bytes(arg) for arg in argv],
        executable=executable,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=_env_bytes(env),
        start_new_session=session,
    )


def os_bytes(text: str) -> bytes:
    """*text* as the bytes a command line or an environment variable carries: in the
    locale's encoding as Python would pass it; in UTF-8 when that encoding cannot hold it
    (an emoji under a Latin-1, GBK or C locale), so text is never refused for the locale.
    Bytes Python read from the command line undecoded (surrogate escapes) go back as they
    came. ValueError for a NUL byte; UnicodeEncodeError for a lone surrogate."""
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape")
    if b"\0" in raw:
        raise ValueError("embedded null byte")
    return raw


def _search(name: str, path: str | None) -> str:
    """What CPython's child would run for *name*: the first executable file on *path*."""
    if not name or os.sep in name:
        return ""  # a path: CPython runs it as it is
    for folder in os.get_exec_path({} if path is None else {"PATH": path}):
        if not os.path.isabs(folder):
            return ""
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return ""


def try_once(argv: Sequence[str], timeout: float) -> tuple[int, bytes]:
    """Run *argv* to its end with no input (a preflight probe: `bwrap ... true`): its exit
    code and what it wrote to stderr. OSError when it cannot start, subprocess's
    TimeoutExpired after *timeout* seconds (the probe is ended)."""
    done = subprocess.run(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )
    return done.returncode, done.stderr
