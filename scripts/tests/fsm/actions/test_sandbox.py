"""`sandbox:`: its value check, what it reads as, the command line that confines a step,
and what a refused step is told (actions/sandbox.py)."""

from __future__ import annotations

import os
import pwd
import shlex
import stat
import tempfile
from pathlib import Path

import pytest
from support.programs import needs_bwrap

from little_loops.fsm.actions import sandbox as sandbox_module
from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.sandbox import (
    INSTALL_BWRAP,
    OLD_BWRAP,
    SECRET_PLACES,
    TOOL_PLACES,
    USERNS_HINT,
    Confinement,
    as_event,
    repository_of,
)
from little_loops.fsm.actions.sandbox_key import Sandbox
from little_loops.fsm.runs.preflight import bwrap_problem, wrapper_problem

# How many words follow each bwrap option the sandbox writes.
ARITY = {"--ro-bind": 2, "--bind-try": 2, "--ro-bind-try": 2, "--tmpfs": 1, "--dev": 1}
ARITY |= {"--proc": 1, "--chdir": 1, "--cap-drop": 1, "--perms": 1}


def options(argv: list[str]) -> list[tuple[str, ...]]:
    """bwrap's options in *argv*, each with its words, up to the `--` before the command."""
    assert argv[0] == "bwrap"
    out: list[tuple[str, ...]] = []
    at = 1
    while argv[at] != "--":
        word = argv[at]
        assert word.startswith("--"), argv
        count = ARITY.get(word, 0)
        out.append(tuple(argv[at : at + 1 + count]))
        at += 1 + count
    return out


def unreadable(found: list[tuple[str, ...]], place: Path) -> tuple[str, ...] | None:
    """The option masking the file at *place* with an empty one of mode 000, if any."""
    for option in found:
        if option[0] == "--ro-bind" and option[2] == str(place):
            seen = os.stat(option[1])
            assert (stat.S_IMODE(seen.st_mode), seen.st_size) == (0, 0), option
            return option
    return None


def unreadable_folder(found: list[tuple[str, ...]], place: Path) -> tuple[str, ...] | None:
    """The option masking the folder at *place* with an empty one of mode 000, if any."""
    option = ("--tmpfs", str(place))
    if option not in found:
        return None
    assert found[found.index(option) - 1] == ("--perms", "000"), found
    return option


def command_of(argv: list[str]) -> list[str]:
    return argv[argv.index("--") + 1 :]


def test_how_a_sandbox_is_shown_and_recorded() -> None:
    assert Sandbox().describe() == "bwrap"
    assert Sandbox(network=False, writable=("~/a", "/b"), allow=("~/.ssh",)).describe() == (
        "bwrap, network off, allow ~/.ssh, writable ~/a /b"
    )
    wrapped = Sandbox(command=("/usr/bin/firejail", "--quiet"))
    assert wrapped.backend == "firejail"
    assert wrapped.describe() == "command /usr/bin/firejail --quiet"
    assert as_event(Sandbox(network=False)) == {"backend": "bwrap", "network": False}
    assert as_event(wrapped) == {
        "backend": "firejail",
        "network": True,
        "command": ["/usr/bin/firejail", "--quiet"],
    }


HOSTILE = ["sh", "-c", 'echo "$HOME" > out; rm -rf -- "x y"', "--", "-- --tmpfs /", "é\nz"]


def test_a_wrapper_of_ones_own_gets_the_exact_command_line_last(tmp_path: Path) -> None:
    sandbox = Sandbox(command=("podman", "run", "--rm", "-v", ".:/w", "img"), network=False)
    confined = Confinement(sandbox, work=tmp_path, loops=tmp_path / ".loops")
    argv = confined.argv(HOSTILE, tmp_path, {"HOME": str(tmp_path)})
    assert argv == ["podman", "run", "--rm", "-v", ".:/w", "img", *HOSTILE]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text("planted\n")
    (path / ".netrc").write_text("machine x password y\n")
    (path / ".aws").symlink_to(tmp_path / "nowhere")  # a dangling link is masked too
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".loops").mkdir(parents=True)
    return path


def bwrap_argv(
    project: Path, home: Path, sandbox: Sandbox | None = None, **more: object
) -> list[str]:
    confined = Confinement(
        sandbox or Sandbox(),
        work=project,
        loops=project / ".loops",
        **more,  # type: ignore[arg-type]
    )
    return confined.argv(HOSTILE, project / "sub", {"HOME": str(home), "PATH": "/usr/bin"})


def test_bwrap_shows_the_root_read_only_and_the_tree_writable(project: Path, home: Path) -> None:
    argv = bwrap_argv(project, home)
    assert command_of(argv) == HOSTILE  # the step's own words, after `--`, untouched
    found = options(argv)
    assert found[:4] == [("--die-with-parent",), ("--unshare-pid",), ("--unshare-ipc",),
                         ("--unshare-uts",)]  # fmt: skip
    assert found[4] == ("--cap-drop", "ALL")  # root's powers would undo the rest
    assert ("--unshare-net",) not in found  # network on: the agents reach their APIs
    assert found[5:9] == [
        ("--ro-bind", "/", "/"),
        ("--dev", "/dev"),
        ("--proc", "/proc"),
        ("--tmpfs", "/tmp"),
    ]
    tree = ("--bind-try", str(project), str(project))
    loops = ("--ro-bind-try", str(project / ".loops"), str(project / ".loops"))
    assert tree in found
    assert loops in found
    assert found.index(tree) < found.index(loops)  # `.loops/` read-only inside the tree
    assert ("--tmpfs", str(home)) in found
    assert found.index(("--tmpfs", str(home))) < found.index(tree)
    assert found[-1] == ("--chdir", str(project / "sub"))
    assert not [o for o in found if o[0] == "--bind-try" and o[1] in ("/", "/tmp", str(home))]


def test_network_off_is_its_own_namespace(project: Path, home: Path) -> None:
    found = options(bwrap_argv(project, home, Sandbox(network=False)))
    assert found.count(("--unshare-net",)) == 1


def test_the_secret_places_are_masked_after_every_bind(project: Path, home: Path) -> None:
    shown = Sandbox(readable=("~", "~/.ssh"), writable=("~/.aws",))
    found = options(bwrap_argv(project, home, shown))
    mask_dir = unreadable_folder(found, home / ".ssh")
    mask_file = unreadable(found, home / ".netrc")
    mask_link = unreadable(found, home / ".aws")
    assert None not in (mask_dir, mask_file, mask_link)
    readable = ("--ro-bind-try", str(home / ".ssh"), str(home / ".ssh"))
    assert found.index(readable) < found.index(mask_dir)  # a later mount hides the earlier
    assert found.index(("--ro-bind-try", str(home), str(home))) < found.index(mask_file)
    absent = [name for name in SECRET_PLACES if name not in (".ssh", ".netrc", ".aws")]
    assert not [o for o in found if any(o[-1] == str(home / name) for name in absent)]


def test_a_removed_or_changed_mask_file_is_made_again(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = unreadable(options(bwrap_argv(project, home, Sandbox())), home / ".netrc")
    assert first is not None
    os.chmod(first[1], 0o644)  # a step shown /tmp (`writable: [/tmp]`) could, as its owner
    again = unreadable(options(bwrap_argv(project, home, Sandbox())), home / ".netrc")
    assert again is not None
    assert again[1] != first[1]
    os.unlink(again[1])
    assert unreadable(options(bwrap_argv(project, home, Sandbox())), home / ".netrc")
    # Where no file can be made, /dev/null masks it: hidden all the same.
    monkeypatch.setattr(sandbox_module, "_UNREADABLE", [])
    monkeypatch.setattr(tempfile, "tempdir", str(project / "no-such-folder"))
    found = options(bwrap_argv(project, home, Sandbox()))
    assert ("--ro-bind", os.devnull, str(home / ".netrc")) in found


def test_an_allowed_secret_place_is_shown_read_only(project: Path, home: Path) -> None:
    found = options(bwrap_argv(project, home, Sandbox(allow=("~/.ssh/", str(home / ".netrc")))))
    assert ("--ro-bind-try", str(home / ".ssh"), str(home / ".ssh")) in found
    assert ("--ro-bind-try", str(home / ".netrc"), str(home / ".netrc")) in found
    assert ("--tmpfs", str(home / ".ssh")) not in found
    assert unreadable(found, home / ".netrc") is None
    assert unreadable(found, home / ".aws") is not None  # not allowed: masked


def test_more_paths_written_with_a_tilde_are_under_home(project: Path, home: Path) -> None:
    found = options(bwrap_argv(project, home, Sandbox(writable=("~/cache",), readable=("~",))))
    assert ("--bind-try", str(home / "cache"), str(home / "cache")) in found
    assert ("--ro-bind-try", str(home), str(home)) in found


def test_the_agents_home_paths_are_read_only_but_for_what_it_writes(
    project: Path, home: Path, tmp_path: Path
) -> None:
    moved = tmp_path / "codex-home"
    moved.mkdir()
    for folder in (home / ".codex", moved):
        folder.mkdir(exist_ok=True)
        (folder / "config.toml").write_text("notify = []\n")
        (folder / "history.jsonl").write_text("")
    confined = Confinement(
        Sandbox(),
        work=project,
        home=AgentHome(
            paths=(".codex", ".claude.json", "$CODEX_HOME", "$UNSET"),
            writes=(
                ".codex/sessions/",
                ".codex/history.jsonl",
                ".codex/auth.json",
                "$CODEX_HOME/sessions/",
            ),
            code=(".codex/sessions/bin/",),
        ),
    )
    env = {"HOME": str(home), "CODEX_HOME": str(moved), "PATH": "/usr/bin"}
    found = options(confined.argv(["codex"], None, env))
    at = {option: index for index, option in enumerate(found)}
    assert stat.S_IMODE((home / ".codex" / "sessions").stat().st_mode) == 0o700
    assert not (home / ".claude.json").exists()  # a file is left for the agent to make
    assert ("--ro-bind-try", str(home / ".claude.json"), str(home / ".claude.json")) in at
    for folder in (home / ".codex", moved):
        # A private empty folder showing what is in the real one read-only: what a step
        # adds there is gone after it, what is there it cannot change.
        view = at[("--tmpfs", str(folder))]
        settings = str(folder / "config.toml")
        assert at[("--ro-bind-try", settings, settings)] > view
        sessions = str(folder / "sessions")
        assert (folder / "sessions").is_dir()  # made, so its sessions land in the real home
        assert at[("--bind-try", sessions, sessions)] > view
    history = str(home / ".codex" / "history.jsonl")
    assert ("--bind-try", history, history) in at
    assert ("--ro-bind-try", history, history) not in at
    auth = str(home / ".codex" / "auth.json")  # not there: nothing to keep, nothing made
    assert not [o for o in found if auth in o]
    code = str(home / ".codex" / "sessions" / "bin")
    assert at[("--ro-bind-try", code, code)] > at[("--bind-try", sessions, sessions)]
    assert not [o for o in found if o[0] == "--chdir"]


def test_the_tool_places_and_path_entries_in_home_are_read_only(project: Path, home: Path) -> None:
    confined = Confinement(Sandbox(), work=project)
    env = {"HOME": str(home), "PATH": f"{home}/.venv/bin:/usr/bin:relative/bin"}
    found = options(confined.argv(["true"], None, env))
    for name in (*TOOL_PLACES, ".venv/bin"):
        place = str(home / name)
        assert ("--ro-bind-try", place, place) in found
    assert not [o for o in found if o[-1] in ("/usr/bin", "relative/bin")]


def test_without_home_in_the_env_the_users_home_is_hidden(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))
    found = options(Confinement(Sandbox(), work=project).argv(["true"], None, {}))
    assert ("--tmpfs", str(home)) in found
    assert unreadable_folder(found, home / ".ssh") is not None


@pytest.mark.parametrize("said", ["", "relative/home", "/"])
def test_a_home_that_is_no_absolute_folder_still_hides_the_users_home(
    project: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    """HOME empty, relative or `/` names no home to hide: the password database's is hidden."""
    monkeypatch.setenv("HOME", said)
    users = pwd.getpwuid(os.getuid()).pw_dir
    found = options(Confinement(Sandbox(), work=project).argv(["true"], None, {"HOME": said}))
    assert ("--tmpfs", users) in found
    assert ("--tmpfs", "/") not in found


def test_the_repository_is_a_mount_with_config_and_hooks_read_only(
    project: Path, home: Path
) -> None:
    git = project / ".git"
    found = options(bwrap_argv(project, home, git_dir=git))
    assert ("--bind-try", str(git), str(git)) in found
    for name in ("config", "hooks"):
        guard = ("--ro-bind-try", str(git / name), str(git / name))
        assert found.index(("--bind-try", str(git), str(git))) < found.index(guard)
    assert ("--ro-bind-try", str(project / ".git"), str(project / ".git")) not in found


def test_a_worktrees_git_file_is_read_only_and_the_worktree_writable(
    project: Path, home: Path
) -> None:
    git = project / ".git"
    worktree = project / ".loops" / ".worktrees" / "run-1"
    confined = Confinement(Sandbox(), work=worktree, loops=project / ".loops", git_dir=git)
    found = options(confined.argv(["true"], worktree, {"HOME": str(home)}))
    loops = ("--ro-bind-try", str(project / ".loops"), str(project / ".loops"))
    tree = ("--bind-try", str(worktree), str(worktree))
    assert found.index(loops) < found.index(tree)  # writable again inside `.loops/`
    guard = ("--ro-bind-try", str(worktree / ".git"), str(worktree / ".git"))
    assert found.index(tree) < found.index(guard)


def test_the_repository_is_the_projects_own_git_folder(tmp_path: Path) -> None:
    loops = tmp_path / "p" / ".loops"
    loops.mkdir(parents=True)
    assert repository_of(None) is None
    assert repository_of(loops) is None  # no repository
    (tmp_path / "p" / ".git").write_text("gitdir: /elsewhere\n")  # a file a step could write
    assert repository_of(loops) is None
    (tmp_path / "p" / ".git").unlink()
    (tmp_path / "real.git").mkdir()
    (tmp_path / "p" / ".git").symlink_to(tmp_path / "real.git")
    assert repository_of(loops) is None
    (tmp_path / "p" / ".git").unlink()
    (tmp_path / "p" / ".git").mkdir()
    assert repository_of(loops) == tmp_path / "p" / ".git"


def test_a_wrapper_that_cannot_run_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert wrapper_problem(Sandbox()) is None  # bwrap has its own check
    monkeypatch.setenv("PATH", str(tmp_path))
    assert wrapper_problem(Sandbox(command=("podman", "run"))) == (
        "sandbox command podman is not on PATH"
    )
    program = tmp_path / "podman"
    program.write_text('#!/bin/sh\nexec "$@"\n')
    assert wrapper_problem(Sandbox(command=(str(program),))) == (
        f"sandbox command {program} cannot run"
    )
    program.chmod(0o755)
    assert wrapper_problem(Sandbox(command=("podman", "run"))) is None
    assert wrapper_problem(Sandbox(command=(str(program),))) is None


def fake_bwrap(folder: Path, stderr: str, code: int) -> None:
    """A `bwrap` on PATH that says *stderr* and exits *code*, as one that cannot start."""
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(stderr)} >&2\nexit {code}\n")
    program.chmod(0o755)


def test_a_missing_bubblewrap_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bwrap_problem() == INSTALL_BWRAP
    assert "apt-get install bubblewrap" in INSTALL_BWRAP
    assert "--no-sandbox" in INSTALL_BWRAP


@pytest.mark.parametrize(
    "said",
    [
        "bwrap: setting up uid map: Permission denied",
        "bwrap: No permissions to creating new namespace, likely because the kernel does not "
        "allow non-privileged user namespaces.",
        "bwrap: Creating new namespace failed: Operation not permitted",
    ],
)
def test_bubblewrap_without_user_namespaces_names_the_sysctl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    fake_bwrap(tmp_path, said, 1)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert bwrap_problem() == f"bwrap cannot start ({said}); {USERNS_HINT}"


def test_bubblewrap_failing_otherwise_says_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_bwrap(tmp_path, "bwrap: Can't mount proc", 1)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert bwrap_problem() == "bwrap cannot start (bwrap: Can't mount proc)"
    (tmp_path / "bwrap").write_text("#!/bin/sh\nexit 3\n")
    assert bwrap_problem() == "bwrap cannot start (exit code 3)"


def test_a_bubblewrap_too_old_for_the_mask_names_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bubblewrap before 0.5 (Debian 11, Ubuntu 20.04) has no `--perms`, which every
    sandboxed step's secret masks use: the preflight says so rather than each step fail."""
    program = tmp_path / "bwrap"
    program.write_text(
        '#!/bin/sh\ncase "$*" in *--perms*) echo "bwrap: Unknown option --perms" >&2; '
        "exit 1;; esac\nexit 0\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert bwrap_problem() == f"bwrap cannot start (bwrap: Unknown option --perms); {OLD_BWRAP}"
    assert "0.5 or later" in OLD_BWRAP


@needs_bwrap
def test_a_working_bubblewrap_is_no_problem() -> None:
    assert bwrap_problem() is None


@pytest.mark.parametrize(
    ("config", "read"),
    [
        ("[core]\n\tbare = false\n", False),
        ("[extensions]\n\tworktreeConfig = false\n", False),
        ("[core]\n\tworktreeConfig = true\n", False),
        ("[extensions]\n\tworktreeConfig = true\n", True),
        ("[Extensions]\n  WorktreeConfig=yes # on\n", True),
        ("[extensions]\n\tworktreeConfig\n", True),
    ],
)
def test_a_worktree_config_git_reads_is_read_only_and_made_when_missing(
    project: Path, config: str, read: bool
) -> None:
    git = project / ".git"
    git.mkdir()
    (git / "config").write_text(config)
    confined = Confinement(Sandbox(), work=project, loops=project / ".loops", git_dir=git)
    found = options(confined.argv(["true"], None, {"HOME": "/nonexistent", "PATH": "/usr/bin"}))
    place = str(git / "config.worktree")
    assert (("--ro-bind-try", place, place) in found) is read
    assert (git / "config.worktree").exists() is read
    if read:
        assert (git / "config.worktree").read_text() == ""  # an empty config: nothing set


@pytest.mark.parametrize("moved", ["/", "HOME", "HOME/..", "//"])
def test_an_agents_folder_variable_naming_root_or_home_shows_nothing_more(
    project: Path, home: Path, moved: str
) -> None:
    """CODEX_HOME=/ (or $HOME, or above it) is no agent folder: the step does not get all
    of it, writable (its sessions) or as a view over it."""
    (home / ".codex").mkdir()
    where = moved.replace("HOME", str(home))
    confined = Confinement(
        Sandbox(),
        work=project,
        home=AgentHome(paths=("$CODEX_HOME",), writes=("$CODEX_HOME/sessions/",)),
    )
    env = {"HOME": str(home), "CODEX_HOME": where, "PATH": "/usr/bin"}
    found = options(confined.argv(["codex"], None, env))
    assert ("--tmpfs", "/") not in found
    assert [o for o in found if o[0] == "--tmpfs" and o[1] == str(home)] == [("--tmpfs", str(home))]
    assert not [o for o in found if o[0] == "--bind-try" and o[1].endswith("/sessions")]
    assert not (Path(os.path.normpath(where)) / "sessions").exists()
