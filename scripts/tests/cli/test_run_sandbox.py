"""`sandbox: bwrap` with real bubblewrap and real `ll-loop` processes: hostile steps are refused
inside the sandbox, the refusal is recorded, and nothing outside changes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp (a sandbox's /tmp is private) and outside the project."""
    path = Path("/var/tmp") / f"ll-sandbox-{uuid.uuid4().hex}"
    path.mkdir()
    (path / "target.txt").write_text("original\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".loops").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A temporary $HOME with a planted private key."""
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text(SECRET + "\n")
    return path


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home)}


def _loop(root: Path, name: str, action: str, sandbox: str = "bwrap") -> None:
    text = (
        f"name: {name}\ninitial: step\nsandbox: {sandbox}\nstates:\n"
        f"  step:\n    action: {json.dumps(action)}\n    on_success: done\n    on_failure: done\n"
        "  done:\n    terminal: true\n"
    )
    (root / ".loops" / f"{name}.yaml").write_text(text)


def _step(root: Path, name: str) -> tuple[dict[str, object], dict[str, object]]:
    """The action_start and action_complete events of the run's one step."""
    history = llproc.ll_loop(root, "history", name, "--json")
    found = json.loads(history.stdout)
    start = next(e for e in found if e["event"] == "action_start")
    complete = next(e for e in found if e["event"] == "action_complete")
    return start, complete


def _run(root: Path, name: str, home: Path, *flags: str) -> str:
    done = llproc.ll_loop(root, "run", name, "--no-color", *flags, env=_env(home), timeout=60)
    assert "Loop completed: done" in done.stderr, done.stderr
    return done.stderr


def test_a_write_outside_the_project_is_refused_and_said(
    project: Path, home: Path, outside: Path
) -> None:
    _loop(project, "w", f"echo pwned > {outside}/target.txt; echo new > {outside}/new.txt")
    shown = _run(project, "w", home)
    start, complete = _step(project, "w")
    assert start["sandbox"] == {"backend": "bwrap", "network": True}
    assert complete["exit_code"] != 0
    assert "Read-only file system" in str(complete["stderr"])
    note = "ll-loop sandbox: write refused, read-only here"
    assert note in str(complete["stderr"])
    assert note in shown  # the failed step's tail says so
    assert (outside / "target.txt").read_text() == "original\n"
    assert not (outside / "new.txt").exists()


def test_the_same_write_without_a_sandbox_lands(project: Path, home: Path, outside: Path) -> None:
    """The control of the test above: the write is real when nothing confines it."""
    _loop(project, "w", f"echo pwned > {outside}/target.txt", sandbox="none")
    _run(project, "w", home)
    assert (outside / "target.txt").read_text() == "pwned\n"


def test_the_working_tree_is_writable_and_tmp_private(project: Path, home: Path) -> None:
    _loop(project, "ok", "echo made > made.txt && echo t > /tmp/ll-private-probe && cat made.txt")
    _run(project, "ok", home)
    _, complete = _step(project, "ok")
    assert complete["exit_code"] == 0
    assert (project / "made.txt").read_text() == "made\n"
    assert not Path("/tmp/ll-private-probe").exists()


def test_a_planted_private_key_cannot_be_read(project: Path, home: Path) -> None:
    _loop(project, "key", 'cat "$HOME/.ssh/id_rsa"')
    _run(project, "key", home)
    _, complete = _step(project, "key")
    assert complete["exit_code"] != 0
    assert SECRET not in json.dumps(complete)
    assert SECRET not in (project / ".loops" / ".running" / "key.step.out").read_text()


def test_a_readable_home_still_masks_the_secret_places(project: Path, home: Path) -> None:
    """`readable: [~]` shows $HOME, but ~/.ssh stays hidden unless `allow:`ed."""
    _loop(project, "key", 'cat "$HOME/.ssh/id_rsa"', sandbox="{readable: ['~']}")
    _run(project, "key", home)
    _, complete = _step(project, "key")
    assert complete["exit_code"] != 0
    assert SECRET not in json.dumps(complete)
    _loop(project, "key", 'cat "$HOME/.ssh/id_rsa"', sandbox="{allow: ['~/.ssh']}")
    _run(project, "key", home)
    _, complete = _step(project, "key")
    assert complete["exit_code"] == 0
    assert SECRET in str(complete["output"])


@pytest.mark.parametrize(
    "attack",
    [
        "echo 'states: {}' >> .loops/edit.yaml",
        "rm -f .loops/.running/edit.state.json .loops/.running/edit.events.jsonl",
        "echo '{}' > .loops/.running/edit.state.json",
        'echo \'{"event": "loop_complete"}\' >> .loops/.running/edit.events.jsonl',
    ],
)
def test_the_loop_and_its_run_files_cannot_be_edited(
    project: Path, home: Path, attack: str
) -> None:
    _loop(project, "edit", attack)
    written = (project / ".loops" / "edit.yaml").read_text()
    _run(project, "edit", home)
    _, complete = _step(project, "edit")
    assert complete["exit_code"] != 0
    assert "Read-only file system" in str(complete["stderr"])
    assert (project / ".loops" / "edit.yaml").read_text() == written
    state = json.loads((project / ".loops" / ".running" / "edit.state.json").read_text())
    assert state["status"] == "completed"
    assert state["current_state"] == "done"


def test_a_planted_link_out_of_the_tree_is_refused(
    project: Path, home: Path, outside: Path
) -> None:
    (project / "planted-out").symlink_to(outside / "target.txt")
    (project / "planted-key").symlink_to(home / ".ssh" / "id_rsa")
    _loop(project, "follow", "cat planted-key; echo pwned > planted-out")
    _run(project, "follow", home)
    _, complete = _step(project, "follow")
    assert complete["exit_code"] != 0
    assert "Read-only file system" in str(complete["stderr"])
    assert SECRET not in json.dumps(complete)
    assert (outside / "target.txt").read_text() == "original\n"


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on 127.0.0.1: its port, and what each connection sent."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    heard: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                heard.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], heard
    done.set()
    thread.join()
    server.close()


_CONNECT = (  # `exec`: an action starting with `/` would be a slash command
    f'exec {sys.executable} -c "import socket; '
    "socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'reached')\""
)


def test_network_off_cannot_reach_a_local_listener(
    project: Path, home: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, heard = listener
    _loop(project, "net", _CONNECT.format(port=port), sandbox="{network: off}")
    shown = _run(project, "net", home)
    start, complete = _step(project, "net")
    assert start["sandbox"] == {"backend": "bwrap", "network": False}
    assert complete["exit_code"] != 0
    assert "Connection refused" in str(complete["stderr"])  # its own loopback: no listener
    assert "ll-loop sandbox: network off for this step" in shown
    assert heard == []


def test_network_on_reaches_the_same_listener(
    project: Path, home: Path, listener: tuple[int, list[bytes]]
) -> None:
    """The control: with the network on (the default) the same step connects."""
    port, heard = listener
    _loop(project, "net", _CONNECT.format(port=port))
    _run(project, "net", home)
    _, complete = _step(project, "net")
    assert complete["exit_code"] == 0
    llproc.wait_for(lambda: heard == [b"reached"], what="the connection")


def test_a_step_cannot_signal_the_ll_loop_process(project: Path, home: Path) -> None:
    """The step reads ll-loop's pid from the run's lock file, but in its own pid namespace
    there is no such process: the run goes on and completes."""
    lock = "json.load(open('.loops/.running/sig.lock'))['pid']"
    read_pid = f'{sys.executable} -c "import json; print({lock})"'
    _loop(project, "sig", f"kill -KILL $({read_pid}) && echo killed")
    _run(project, "sig", home)
    _, complete = _step(project, "sig")
    assert complete["exit_code"] != 0
    assert "No such process" in str(complete["stderr"])
    state = json.loads((project / ".loops" / ".running" / "sig.state.json").read_text())
    assert state["status"] == "completed"
