"""`sandbox:` a step confined by bubblewrap or a wrapper of the user's: its command line.

`sandbox: bwrap` runs the step's command under `bwrap`: the whole file system read-only,
the run's working tree (its worktree with `--worktree`) writable, `.loops/` read-only (a
step cannot edit its loop, run state or event log), a private /tmp, $HOME an empty tmpfs but
for what the step's agent needs (its kind's `home.paths`, read-only but for `home.writes`:
its sessions, logs and login, never its settings), well-known secret places masked
(unreadable: a step that reaches one is refused, and told) unless `allow:`ed, its own pid
namespace (it cannot signal ll-loop; one that tries is told) and, with
`network: off`, no network. `sandbox: {command: [...]}` hands the step's exact command line
to the user's own wrapper (podman, docker, firejail) as its last arguments.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.sandbox_key import BWRAP, Sandbox

# What the preflight says when bubblewrap cannot run, one line each naming the fix.
INSTALL_BWRAP = (
    "bwrap (bubblewrap) is not on PATH; install it: apt-get install bubblewrap "
    "(Debian/Ubuntu) or dnf install bubblewrap (Fedora), or run with --no-sandbox"
)
USERNS_HINT = (
    "user namespaces are off for this user: sudo sysctl -w kernel.unprivileged_userns_clone=1 "
    "(Debian) or kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04), "
    "or run with --no-sandbox"
)
OLD_BWRAP = (
    "bubblewrap 0.5 or later is needed (--perms hides the secret places); upgrade it, "
    "or run with --no-sandbox"
)
# Secret places under $HOME, masked even when `readable:`/`writable:` would show them.
SECRET_PLACES: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".docker",
    ".gnupg",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/git/credentials",
    ".password-store",
    ".vault-token",
)
# Sockets on the file system that speak for the user or for root (a read-only mount does not
# stop a connect(), nor does `network: off`): hidden, a folder by an empty one. The ssh agent's
# socket ($SSH_AUTH_SOCK) is hidden too unless `allow:` shows ~/.ssh.
SOCKET_PLACES: tuple[str, ...] = (
    "/run/user",  # $XDG_RUNTIME_DIR: the session bus, gpg and ssh agents, podman, wayland
    "/run/dbus",
    "/run/docker.sock",
    "/run/docker",
    "/run/podman",
    "/run/containerd",
    "/run/snapd.socket",
    "/run/systemd/private",
    "/run/systemd/journal",
)
# Where programs live under $HOME (pyenv, nvm, pipx, uv, rustup ...): shown read-only, so a
# venv whose python links into ~/.pyenv, or an agent installed with npm into ~/.nvm, starts.
# Never a folder that holds credentials (~/.cargo/credentials.toml: only ~/.cargo/bin).
TOOL_PLACES: tuple[str, ...] = (
    ".local/bin",
    ".local/lib",
    ".local/share/uv",
    ".local/pipx",
    ".pyenv",
    ".nvm",
    ".volta",
    ".asdf",
    ".cargo/bin",
    ".rustup",
    ".bun/bin",
    ".deno/bin",
    "go/bin",
    ".npm-global",
)


@dataclass(frozen=True)
class Confinement:
    """Where one step runs confined: its sandbox, the folder it may write (the run's
    working tree), the run's `.loops/` folder it may only read, and what its agent needs
    under $HOME (its kind's `home`: its paths read-only, but for what it writes)."""

    sandbox: Sandbox
    work: Path
    loops: Path | None = None
    home: AgentHome = AgentHome()
    git_dir: Path | None = None  # the project's `.git`: commits land there (repository_of)

    def argv(self, inner: Sequence[str], cwd: Path | None, env: Mapping[str, str]) -> list[str]:
        """The command line that runs *inner* confined: the wrapper's, else bwrap's."""
        if self.sandbox.command is not None:
            return [*self.sandbox.command, *inner]
        return [BWRAP, *self._bwrap_options(cwd, env), "--", *inner]

    def _bwrap_options(self, cwd: Path | None, env: Mapping[str, str]) -> list[str]:
        home = home_of(env)
        out = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        # Started by root, bwrap keeps root's capabilities: a step could remount `/`
        # read-write. None for any step (no_new_privs keeps a set-uid program from
        # getting them back).
        out += ["--cap-drop", "ALL"]
        if not self.sandbox.network:
            out.append("--unshare-net")
        out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        out += _hidden_sockets(env, home, self.sandbox.allow)  # before the tree's own binds
        if home is not None:
            out += ["--tmpfs", str(home)]
            for place in _tool_places(env, home):  # an agent or Python installed in $HOME
                out += _bind(place, writable=False)
        out += self._agent_home(env, home)
        for path in self.sandbox.readable:
            out += _bind(_expand(path, home), writable=False)
        for path in self.sandbox.writable:
            out += _bind(_expand(path, home), writable=True)
        # Outer folders first: `.loops/` inside the tree is read-only, while a worktree
        # inside `.loops/.worktrees/` is writable again.
        own = [(self.work, True), (self.loops, False), *self._git_guards()]
        for folder, writable in sorted(
            ((p, w) for p, w in own if p is not None), key=lambda item: len(item[0].parts)
        ):
            out += _bind(folder, writable=writable)
        for place in self._allowed(home):
            out += _bind(place, writable=False)
        for seen, real in self._secrets(home):
            out += _mask(seen, real)
        if cwd is not None:
            out += ["--chdir", os.path.abspath(cwd)]
        return out

    def hidden(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """The secret places bubblewrap hides from this step (where the step sees them),
        which refuse it any access: what `refusal_note` looks for."""
        if self.sandbox.command is not None:
            return ()
        return tuple(seen for seen, real in self._secrets(home_of(env)) if _mask(seen, real))

    def _allowed(self, home: Path | None) -> list[Path]:
        """The secret places `allow:` shows (read-only)."""
        if home is None:
            return []
        allowed = {os.path.normpath(_expand(p, home)) for p in self.sandbox.allow}
        return [home / name for name in SECRET_PLACES if str(home / name) in allowed]

    def _secrets(self, home: Path | None) -> list[tuple[str, str]]:
        """The secret places to mask: each where the step would see it and where it is,
        also where a `readable:`/`writable:` path shows it through a link."""
        if home is None:
            return []
        allowed = {str(place) for place in self._allowed(home)}
        shown = [_expand(p, home) for p in (*self.sandbox.readable, *self.sandbox.writable)]
        out: list[tuple[str, str]] = []
        for name in SECRET_PLACES:
            place = str(home / name)
            if place not in allowed:
                out += [(place, place), *_seen_at(place, shown)]
        return out

    def _agent_home(self, env: Mapping[str, str], home: Path | None) -> list[str]:
        """bwrap's options showing the agent's own files (`home.paths`) so that a step
        cannot plant settings, hooks, plugins or MCP servers there, which would run
        unconfined the next time the agent runs outside: each folder a private empty one
        showing each thing in the real one read-only, but for what the agent writes while
        it runs (`home.writes`: sessions, logs, login) and, in that again, what it runs code
        from (`home.code`) read-only. What a step adds there is gone after it."""
        out: list[str] = []
        writes = [_home_path(name.rstrip("/"), env, home) for name in self.home.writes]
        shown: set[Path] = set()
        for name in self.home.paths:
            place = _home_path(name, env, home)
            if place is None or place in shown or place in writes:
                continue
            shown.add(place)
            if not _made(place).is_dir():  # a file (`.claude.json`): shown read-only
                out += _bind(place, writable=False)
                continue
            out += ["--tmpfs", str(place)]
            for entry in _entries(place):
                if entry not in writes:
                    out += _bind(entry, writable=False)
        for name, place in zip(self.home.writes, writes, strict=True):
            if place is not None and (name.endswith("/") or place.exists()):
                out += _bind(_made(place) if name.endswith("/") else place, writable=True)
        for name in self.home.code:
            place = _home_path(name.rstrip("/"), env, home)
            if place is not None:
                out += _bind(_made(place) if name.endswith("/") else place, writable=False)
        return out

    def _git_guards(self) -> list[tuple[Path, bool]]:
        """The repository a step may commit into, but whose config and hooks (which
        ll-loop's own git commands outside would run) it may not change: `.git` a mount
        point (it cannot be renamed and replaced), its `config` and `hooks` read-only, and a
        worktree's `.git` file (which names the repository) read-only."""
        if self.git_dir is None:
            return []
        guards = [(self.git_dir, True), (self.git_dir / "config", False)]
        guards.append((self.git_dir / "hooks", False))
        # With extensions.worktreeConfig, git reads each worktree's `config.worktree` too
        # (the repository's own, and one in each worktree's admin folder): read-only, made
        # empty (an empty config) when missing so that a step cannot make one.
        worktree_config = _worktree_config(self.git_dir)
        if worktree_config:
            guards.append((_made_empty(self.git_dir / "config.worktree"), False))
        # Each worktree's admin folder names the repository (`commondir`) whose config
        # git reads there: no step may add, move or point one elsewhere; its own stays
        # writable (its HEAD, index and logs) but a mount point, and `commondir` read-only.
        guards.append((self.git_dir / "worktrees", False))
        if self.work != self.git_dir.parent:
            guards.append((self.work / ".git", False))
            admin = self._admin()
            if admin is not None:
                guards += [(admin, True), (admin / "commondir", False), (admin / "gitdir", False)]
                if worktree_config:
                    guards.append((_made_empty(admin / "config.worktree"), False))
        return guards

    def _admin(self) -> Path | None:
        """The worktree's admin folder in the repository (`.git/worktrees/NAME`), from the
        `.git` file of the working tree (read-only in every sandboxed step)."""
        if self.git_dir is None:
            return None
        try:
            text = (self.work / ".git").read_text()
        except (OSError, UnicodeDecodeError):
            return None
        if not text.startswith("gitdir:"):
            return None
        admin = (self.work / text.removeprefix("gitdir:").strip()).resolve()
        inside = self.git_dir / "worktrees"
        return inside / admin.name if admin.parent == inside.resolve() else None


def _worktree_config(git_dir: Path) -> bool:
    """Whether the repository's config (read-only to every step) turns on
    `extensions.worktreeConfig`, so that git reads `config.worktree` files too."""
    try:
        text = (git_dir / "config").read_text(errors="replace")
    except OSError:
        return False
    section = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if line.startswith("["):
            section = (line[1:].split("]", 1)[0].split() or [""])[0].lower()
        elif section == "extensions" and "=" in line:
            key, value = (part.strip().lower() for part in line.split("=", 1))
            if key == "worktreeconfig" and value in ("true", "yes", "on", "1"):
                return True
        elif section == "extensions" and line.lower() == "worktreeconfig":
            return True  # a key without a value is true
    return False


def _made_empty(path: Path) -> Path:
    """*path*, a config file git reads, made empty when missing (so a sandbox can show it
    read-only: a step cannot make it)."""
    if not path.exists() and not path.is_symlink():
        with contextlib.suppress(OSError):
            path.touch(mode=0o644)
    return path


def home_of(env: Mapping[str, str]) -> Path | None:
    """The $HOME to hide: the step's, else ll-loop's; when that is unset, empty, relative or
    `/` (no folder to hide), the user's home from the password database all the same."""
    for text in (env.get("HOME") or os.environ.get("HOME") or "", _users_home()):
        if text.startswith("/") and text.rstrip("/"):
            return Path(text)
    return None


def _home_path(name: str, env: Mapping[str, str], home: Path | None) -> Path | None:
    """Where an agent's *name* is: under *home* (`.claude`), or under the folder a variable
    names (`$CODEX_HOME`, `$CODEX_HOME/sessions`; None when unset or relative)."""
    if not name.startswith("$"):
        return None if home is None else home / name
    variable, _, rest = name[1:].partition("/")
    moved = env.get(variable) or ""
    if not moved.startswith("/"):
        return None
    folder = Path(os.path.normpath(moved))
    real = Path(os.path.realpath(folder))
    if real == Path("/") or (home is not None and real in (home, *home.parents)):
        return None  # `/` or $HOME itself is no agent's folder: nothing of it shown for it
    return folder / rest if rest else folder


def _users_home() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:  # a uid with no entry (a container's): no home to hide
        return ""


def _hidden_sockets(env: Mapping[str, str], home: Path | None, allow: Sequence[str]) -> list[str]:
    """bwrap's options hiding SOCKET_PLACES and the ssh agent's socket (unless ~/.ssh is
    allowed): a folder under an empty one, a socket under /dev/null."""
    places = list(SOCKET_PLACES)
    agent = env.get("SSH_AUTH_SOCK") or ""
    allowed = home is not None and any(
        os.path.normpath(_expand(p, home)) == str(home / ".ssh") for p in allow
    )
    if agent.startswith("/") and not allowed:
        places.append(agent)
    out: list[str] = []
    for place in dict.fromkeys(os.path.realpath(p) for p in places):
        if os.path.isdir(place):
            out += ["--tmpfs", place]
        elif os.path.lexists(place):
            out += ["--ro-bind", os.devnull, place]
    return out


def _seen_at(place: str, shown: Sequence[str]) -> list[tuple[str, str]]:
    """Where else the secret *place* shows through the `readable:`/`writable:` paths *shown*
    (through a link either way: `~/.ssh` a link into `~/dotfiles`, or `~/keys` a link to
    `~/.ssh`), each with the real path there."""
    real = os.path.realpath(place)
    out: list[tuple[str, str]] = []
    for path in shown:
        bound = os.path.realpath(path)
        if real == bound or real.startswith(bound.rstrip("/") + "/"):
            out.append((os.path.join(path, os.path.relpath(real, bound)), real))
        elif bound.startswith(real + "/"):
            out.append((path, bound))
    return [(seen, at) for seen, at in out if os.path.normpath(seen) != place]


def _mask(seen: str, real: str) -> list[str]:
    """bwrap's options hiding what is at *seen* (*real* outside) so that any access to it is
    refused (`Permission denied`, which the step's output shows and `refusal_note` says;
    with no capability even user 0 gets it): a folder under an empty one of mode 000,
    anything else under an empty file of mode 000."""
    if os.path.isdir(real):
        return ["--perms", "000", "--tmpfs", os.path.normpath(seen)]
    if os.path.lexists(real):
        return ["--ro-bind", _unreadable(), os.path.normpath(seen)]
    return []


_UNREADABLE: list[str] = []  # the empty file of mode 000 this process masks files with


def _unreadable() -> str:
    """An empty file of mode 000 of ll-loop's own (made again if someone removed or
    changed it), removed when ll-loop exits; /dev/null (hidden all the same, but read as
    empty) when none can be made."""
    for path in _UNREADABLE:
        with contextlib.suppress(OSError):
            found = os.lstat(path)  # a regular file, mode 000, empty and ours
            if (found.st_mode, found.st_size, found.st_uid) == (stat.S_IFREG, 0, os.getuid()):
                return path
    try:
        import tempfile  # only a sandboxed step hides files

        fd, path = tempfile.mkstemp(prefix="ll-loop-hidden-")
    except OSError:
        return os.devnull
    os.fchmod(fd, 0)
    os.close(fd)
    if not _UNREADABLE:
        atexit.register(_remove_all)
    _UNREADABLE.append(path)
    return path


def _remove_all() -> None:
    for path in _UNREADABLE:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _bind(path: Path | str, *, writable: bool) -> list[str]:
    # `-try`: a path that is not there (an agent never logged in) is no error.
    text = os.path.abspath(path)
    return ["--bind-try" if writable else "--ro-bind-try", text, text]


def _made(path: Path) -> Path:
    """*path*, an agent's folder, made when missing (as the agent would make it), so what
    it writes there (its sessions) lands in the real $HOME; a file (`.json`) is left."""
    if path.suffix != ".json" and not path.exists() and not path.is_symlink():
        with contextlib.suppress(OSError):
            path.mkdir(parents=True, mode=0o700)
    return path


def _entries(folder: Path) -> list[Path]:
    """What is in *folder* (none when it cannot be listed)."""
    try:
        return sorted(folder / name for name in os.listdir(folder))
    except OSError:
        return []


def _expand(path: str, home: Path | None) -> str:
    if home is not None and (path == "~" or path.startswith("~/")):
        return str(home) + path[1:]
    return os.path.abspath(path)


def _tool_places(env: Mapping[str, str], home: Path) -> list[Path]:
    """What of $HOME a step reads to start its programs: the PATH entries there and the
    folders tool managers install into (TOOL_PLACES), read-only."""
    out = [home / name for name in TOOL_PLACES]
    for folder in (env.get("PATH") or os.environ.get("PATH") or "").split(os.pathsep):
        path = Path(folder)
        if path.is_absolute() and home in path.parents:
            out.append(path)
    return out


def repository_of(loops: Path | None) -> Path | None:
    """The git folder of the project whose `.loops/` is *loops* (None: none), from where
    ll-loop keeps its files, never from a `.git` file a step could have rewritten."""
    if loops is None:
        return None
    found = loops.parent / ".git"
    return found if found.is_dir() and not found.is_symlink() else None


def as_event(sandbox: Sandbox) -> dict[str, Any]:
    """How an `action_start` event records the step's sandbox."""
    out: dict[str, Any] = {"backend": sandbox.backend, "network": sandbox.network}
    if sandbox.command is not None:
        out["command"] = list(sandbox.command)
    return out
