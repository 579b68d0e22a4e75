"""`sandbox: bwrap` with real bubblewrap and real `ll-loop` processes: hostile steps are refused
inside the sandbox, the refusal is recorded, and nothing outside changes."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.programs import needs_bwrap, needs_gh

from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.actions.sandbox import SECRET_PLACES, TOOL_PLACES

pytestmark = needs_bwrap

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


def test_a_step_run_by_root_keeps_no_capabilities_to_undo_the_sandbox(
    project: Path, home: Path, outside: Path
) -> None:
    """bwrap started by root keeps root's capabilities unless told: a step could remount
    `/` read-write (or mknod a disk) and write anywhere. Every step runs with none."""
    remount = f"mount -o remount,rw / ; mount -o remount,rw,bind {outside} ; "
    _loop(
        project,
        "caps",
        f"grep CapEff /proc/self/status; {remount}echo pwned > {outside}/target.txt",
    )
    _run(project, "caps", home)
    _, complete = _step(project, "caps")
    assert "CapEff:\t0000000000000000" in str(complete["output"]), complete
    assert (outside / "target.txt").read_text() == "original\n"


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


READ_NOTE = "ll-loop sandbox: read refused, a secret place is hidden"


def test_a_planted_private_key_cannot_be_read(project: Path, home: Path) -> None:
    """The masked ~/.ssh refuses the step (not an empty folder, whose 'No such file' is
    too common to say), and the refusal is recorded in its event, its file and its tail."""
    _loop(project, "key", 'cat "$HOME/.ssh/id_rsa"')
    shown = _run(project, "key", home)
    _, complete = _step(project, "key")
    assert complete["exit_code"] != 0
    assert "Permission denied" in str(complete["stderr"])
    note = f"{READ_NOTE} ({home}/.ssh: Permission denied)"
    assert note in str(complete["stderr"]), complete
    assert note in (project / ".loops" / ".running" / "key.step.err").read_text()
    assert READ_NOTE in shown  # the failed step's tail says so
    assert SECRET not in json.dumps(complete)
    assert SECRET not in (project / ".loops" / ".running" / "key.step.out").read_text()
    assert SECRET not in shown


@pytest.mark.parametrize(
    "reach",
    [
        "cd ~ && ls .ssh || exit 1",  # a relative name
        "cat ~/.netrc",  # a masked file
        "for f in ~/.ssh/*; do cat $f; done; cp -r ~/.ssh keys",
    ],
)
def test_each_way_into_a_secret_place_is_refused_and_said(
    project: Path, home: Path, reach: str
) -> None:
    (home / ".netrc").write_text(f"machine x password {SECRET}\n")
    _loop(project, "key", reach)
    _run(project, "key", home)
    _, complete = _step(project, "key")
    assert complete["exit_code"] != 0
    assert READ_NOTE in str(complete["stderr"]), complete
    assert SECRET not in json.dumps(complete)
    assert not (project / "keys" / "id_rsa").exists()


def test_a_permission_denied_elsewhere_is_no_secret_place(project: Path, home: Path) -> None:
    """Only a refusal naming a place the sandbox hid is said, not any 'Permission denied'
    (a path that merely ends with a secret place's name neither)."""
    (project / "sub" / ".ssh").mkdir(parents=True)
    _loop(project, "denied", "chmod 000 sub/.ssh; cat /proc/1/environ sub/.ssh/x; cat /root/.ssh/x")
    _run(project, "denied", home)
    _, complete = _step(project, "denied")
    assert "Permission denied" in str(complete["stderr"]), complete
    assert "ll-loop sandbox:" not in str(complete["stderr"]), complete


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
    pid = json.loads((project / ".loops" / ".running" / "sig.state.json").read_text())["pid"]
    note = "ll-loop sandbox: signal refused, ll-loop's processes are outside this step's view"
    assert f"{note} ({pid}: No such process)" in str(complete["stderr"]), complete
    state = json.loads((project / ".loops" / ".running" / "sig.state.json").read_text())
    assert state["status"] == "completed"


def test_a_signal_to_a_pid_of_its_own_is_no_refusal(project: Path, home: Path) -> None:
    """A step that signals a process of its own that has ended meets 'No such process'
    too: not said, the pid being none of ll-loop's."""
    _loop(project, "sig", "true & p=$!; wait $p; kill $p")
    _run(project, "sig", home)
    _, complete = _step(project, "sig")
    assert "No such process" in str(complete["stderr"]), complete
    assert "ll-loop sandbox:" not in str(complete["stderr"]), complete


def test_a_long_line_of_kills_is_read_in_linear_time(project: Path, home: Path) -> None:
    """A step (or an agent) printing one long line that says `kill` often and `No such
    process`, naming no pid of ll-loop's: reading it for a signal refusal takes no longer
    than reading it (was a regex backtracking over the line from each `kill`: ~25 minutes
    for this 1 MB line, ll-loop hung after the step had ended)."""
    script = "import sys; sys.stderr.write('kill ' * 200000 + 'No such process' + chr(10))"
    _loop(project, "kills", f'python3 -c "{script}"')
    _run(project, "kills", home)
    _, complete = _step(project, "kills")
    assert "No such process" in str(complete["stderr"]), complete
    assert "ll-loop sandbox:" not in str(complete["stderr"]), complete


SLEEPS = """\
name: slow
initial: nap
sandbox: bwrap
states:
  nap:
    action: "sleep {marker} & setsid sleep {marker}; echo never"
    {extra}next: done
  done:
    terminal: true
"""


def _slow(root: Path, marker: str, extra: str = "") -> None:
    (root / ".loops" / "slow.yaml").write_text(SLEEPS.format(marker=marker, extra=extra))


def test_stop_ends_every_process_inside_the_sandbox(project: Path, home: Path, marker: str) -> None:
    """A grandchild that left the step's process group (`setsid`) is ended too: the
    sandbox's pid namespace goes with bwrap."""
    _slow(project, marker)
    proc = llproc.start(project, "run", "slow", env=_env(home))
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, 10, "both sleeps")
    stopped = llproc.ll_loop(project, "stop", "slow", env=_env(home))
    llproc.finish(proc, 20)
    assert stopped.returncode == 0, stopped.stderr
    llproc.wait_for(lambda: llproc.sleepers(marker) == [], 5, "no sleep left")
    assert llproc.state(project, "slow")["status"] == "stopped"


def test_a_timeout_ends_every_process_inside_the_sandbox(
    project: Path, home: Path, marker: str
) -> None:
    _slow(project, marker, extra="timeout: 1\n    on_error: done\n    ")
    llproc.ll_loop(project, "run", "slow", env=_env(home), timeout=60)
    _, complete = _step(project, "slow")
    assert "timed out" in str(complete.get("error"))
    llproc.wait_for(lambda: llproc.sleepers(marker) == [], 5, "no sleep left")


def test_kill_9_of_ll_loop_takes_the_sandboxed_step_with_it(
    project: Path, home: Path, marker: str
) -> None:
    _slow(project, marker)
    proc = llproc.start(project, "run", "slow", env=_env(home))
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, 10, "both sleeps")
    proc.kill()
    proc.wait()
    llproc.wait_for(lambda: llproc.sleepers(marker) == [], 5, "no sleep left")


WRAPPER = """\
#!/bin/bash
printf '%s\\0' "$@" > "{log}"
shift 2
exec "$@"
"""


def test_a_wrapper_of_ones_own_receives_the_exact_command_line(
    project: Path, home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "argv"
    wrapper = tmp_path / "wrap"
    wrapper.write_text(WRAPPER.format(log=log))
    wrapper.chmod(0o755)
    action = 'echo "it\'s $((6 * 7))" > answer.txt'
    _loop(project, "own", action, sandbox=json.dumps({"command": [str(wrapper), "--rm", "x"]}))
    _run(project, "own", home)
    start, complete = _step(project, "own")
    assert log.read_bytes().split(b"\0")[:-1] == [b"--rm", b"x", b"bash", b"-c", action.encode()]
    assert complete["exit_code"] == 0
    assert (project / "answer.txt").read_text() == "it's 42\n"
    assert start["sandbox"] == {
        "backend": "wrap",
        "network": True,
        "command": [str(wrapper), "--rm", "x"],
    }


def _refused_before_a_step(project: Path, home: Path, path: str) -> str:
    _loop(project, "pre", "echo ran > ran.txt")
    done = llproc.ll_loop(project, "run", "pre", env={**_env(home), "PATH": path})
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert not (project / "ran.txt").exists()
    assert not (project / ".loops" / ".running" / "pre.state.json").exists()
    return done.stderr


def test_a_missing_bubblewrap_is_one_line_naming_the_package(
    project: Path, home: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    said = _refused_before_a_step(project, home, str(empty))
    assert said == (
        "ll-loop: error: state 'step' runs in a sandbox, but bwrap (bubblewrap) is not on "
        "PATH; install it: apt-get install bubblewrap (Debian/Ubuntu) or dnf install "
        "bubblewrap (Fedora), or run with --no-sandbox\n"
    )


def test_bubblewrap_without_user_namespaces_names_the_sysctl(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """bwrap as a user without user namespaces says this (bubblewrap 0.8) and exits 1."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the "
        "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    said = _refused_before_a_step(project, home, f"{folder}:{os.environ['PATH']}")
    assert said.startswith("ll-loop: error: state 'step' runs in a sandbox, but bwrap cannot start")
    assert "sudo sysctl -w kernel.unprivileged_userns_clone=1" in said
    assert said.endswith("or run with --no-sandbox\n")


def test_a_missing_wrapper_is_refused_before_a_step(project: Path, home: Path) -> None:
    _loop(project, "pre", "echo ran > ran.txt", sandbox="{command: [no-such-podman, run]}")
    done = llproc.ll_loop(project, "run", "pre", env=_env(home))
    assert done.returncode == 2
    assert done.stderr == (
        "ll-loop: error: state 'step' runs in a sandbox, but sandbox command no-such-podman "
        "is not on PATH\n"
    )
    assert not (project / "ran.txt").exists()


def test_no_sandbox_runs_the_step_unconfined(project: Path, home: Path, outside: Path) -> None:
    _loop(project, "w", f"echo free > {outside}/target.txt")
    _run(project, "w", home, "--no-sandbox")
    start, _ = _step(project, "w")
    assert "sandbox" not in start
    assert (outside / "target.txt").read_text() == "free\n"


def test_the_plan_status_and_report_show_each_states_sandbox(project: Path, home: Path) -> None:
    (project / ".loops" / "seen.yaml").write_text(
        "name: seen\ninitial: a\nsandbox: {network: off}\nstates:\n"
        "  a:\n    action: 'true'\n    next: b\n"
        "  b:\n    action: 'true'\n    sandbox: none\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    plan = llproc.ll_loop(project, "run", "seen", "--dry-run", env=_env(home)).stdout
    assert "    action (shell): true\n    sandbox: bwrap, network off\n" in plan
    assert plan.count("sandbox:") == 1  # b runs unconfined
    _run(project, "seen", home)
    status = llproc.ll_loop(project, "status", "seen", env=_env(home)).stdout
    assert re.search(r"^sandbox: +bwrap, network off \(a\); none \(b\)$", status, re.M), status
    report = llproc.ll_loop(project, "report", "seen", env=_env(home)).stdout
    assert "sandboxed: 1 of 2 steps (bwrap 1)" in report
    data = json.loads(llproc.ll_loop(project, "report", "seen", "--json", env=_env(home)).stdout)
    assert data["sandboxed_steps"] == {"bwrap": 1}
    page = project / "report.html"
    llproc.ll_loop(project, "report", "seen", "--html", str(page), env=_env(home))
    assert page.read_text().count(" · sandbox bwrap") == 1
    # Run again with --sandbox: every step confined, status says so from the run's record.
    _run(project, "seen", home, "--sandbox")
    status = llproc.ll_loop(project, "status", "seen", env=_env(home)).stdout
    assert re.search(r"^sandbox: +bwrap, network off \(a, b\)$", status, re.M), status


def test_a_worktree_run_writes_and_commits_in_its_worktree_only(project: Path, home: Path) -> None:
    """With --worktree the step may write (and commit in) its worktree, not the checkout."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    (project / "main.txt").write_text("main\n")
    env = _env(home)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run([*git, *args], cwd=project, check=True, env=env)
    _loop(
        project,
        "wt",
        f"echo new > wt.txt && {' '.join(git)} add wt.txt && {' '.join(git)} commit -qm step"
        f" && echo pwned > {project}/main.txt",
    )
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "loop"], cwd=project, check=True, env=env)
    done = llproc.ll_loop(project, "run", "wt", "--worktree", env=env, timeout=60)
    assert done.returncode == 0, done.stderr  # the checkout (in /tmp here) is not even seen
    assert (project / "main.txt").read_text() == "main\n"
    assert not (project / "wt.txt").exists()
    branches = subprocess.run(
        ["git", "log", "--all", "--format=%s"], cwd=project, capture_output=True, text=True
    ).stdout.split()
    assert "step" in branches  # the commit made inside landed in the repository


def test_a_sub_loop_runs_in_its_parents_sandbox(project: Path, home: Path, outside: Path) -> None:
    (project / ".loops" / "child.yaml").write_text(
        "name: child\ninitial: c\nstates:\n"
        f"  c:\n    action: 'echo made > child.txt; echo x > {outside}/target.txt'\n"
        "    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"
    )
    (project / ".loops" / "parent.yaml").write_text(
        "name: parent\ninitial: p\nsandbox: bwrap\nstates:\n"
        "  p:\n    loop: child\n    on_success: done\n    on_failure: done\n"
        "  done:\n    terminal: true\n"
    )
    llproc.ll_loop(project, "run", "parent", env=_env(home), timeout=60)
    assert (project / "child.txt").read_text() == "made\n"
    assert (outside / "target.txt").read_text() == "original\n"


COUNT = """\
name: count
initial: a
max_iterations: 1
states:
  a:
    action: "echo $$ >> pids.txt"
    on_success: a
    on_failure: done
  done:
    terminal: true
"""


def _sandboxes(root: Path, name: str) -> list[object]:
    history = llproc.ll_loop(root, "history", name, "--json")
    return [e.get("sandbox") for e in json.loads(history.stdout) if e["event"] == "action_start"]


def test_a_resume_goes_on_in_the_sandbox_the_run_started_with(project: Path, home: Path) -> None:
    (project / ".loops" / "count.yaml").write_text(COUNT)
    first = llproc.ll_loop(project, "run", "count", "--sandbox", env=_env(home), timeout=60)
    assert first.returncode == 3, first.stderr  # max_iterations: resumable
    again = llproc.ll_loop(project, "resume", "count", "-n", "2", env=_env(home), timeout=60)
    assert again.returncode == 3, again.stderr
    bwrap = {"backend": "bwrap", "network": True}
    assert _sandboxes(project, "count") == [bwrap, bwrap]
    # In its own pid namespace bash is pid 2 (bwrap's init is 1): confined both times.
    assert (project / "pids.txt").read_text().split() == ["2", "2"]
    third = llproc.ll_loop(
        project, "resume", "count", "-n", "3", "--no-sandbox", env=_env(home), timeout=60
    )
    assert third.returncode == 3, third.stderr
    assert _sandboxes(project, "count")[-1] is None
    assert (project / "pids.txt").read_text().split()[-1] != "2"


def test_a_background_run_keeps_its_sandbox(project: Path, home: Path) -> None:
    # A run that ends in `done` (exit 0): a stop at max_iterations (exit 3) may come before
    # `run --background` returns, which then reports it as the background run's failure.
    (project / ".loops" / "count.yaml").write_text(
        COUNT.replace("on_success: a", "on_success: done")
    )
    started = llproc.ll_loop(project, "run", "count", "--sandbox", "--background", env=_env(home))
    assert started.returncode == 0, started.stderr
    llproc.wait_for(
        lambda: llproc.state(project, "count").get("status") not in (None, "running"),
        30,
        "the background run to end",
    )
    assert _sandboxes(project, "count") == [{"backend": "bwrap", "network": True}]
    assert (project / "pids.txt").read_text().split() == ["2"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("bwarp", "expected bwrap, none or a mapping of sandbox settings, got 'bwarp'"),
        ("{network: maybe}", "network: expected on or off, got 'maybe'"),
        ("{writable: ~/x}", "writable: expected a list of paths, got '~/x'"),
        ("{comand: [x]}", "unknown key 'comand' in sandbox:"),
        ("{command: []}", "command: expected the wrapper's command line, got an empty list"),
        ("{command: [podman], backend: bwrap}", "give either backend: or command:, not both"),
    ],
)
def test_a_wrong_sandbox_value_is_one_line_naming_it(
    project: Path, home: Path, value: str, message: str
) -> None:
    _loop(project, "bad", "echo ran > ran.txt", sandbox=value)
    done = llproc.ll_loop(project, "run", "bad", env=_env(home))
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "loop 'bad' > sandbox" in done.stderr, done.stderr
    assert message in done.stderr
    assert not (project / "ran.txt").exists()


@pytest.mark.parametrize("worktree", [False, True])
def test_a_step_cannot_plant_git_config_or_hooks_for_ll_loops_own_git(
    project: Path, home: Path, outside: Path, worktree: bool
) -> None:
    """ll-loop runs git outside the sandbox (commit:, the stall check, worktree merge): a
    step that could set core.fsmonitor, add a hook or swap `.git` would run code there."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    env = _env(home)
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    config = (project / ".git" / "config").read_text()
    evil = f"touch {outside}/pwned"
    attacks = [
        f"git config core.fsmonitor '{evil}'",
        f"printf '#!/bin/sh\\n{evil}\\n' > .git/hooks/post-commit",
        "mv .git .git-old",
        "echo 'gitdir: /tmp' > .git",
    ]
    _loop(project, "plant", "; ".join(attacks) + "; echo made > made.txt && git add made.txt")
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "loop"], cwd=project, check=True, env=env)
    flags = ["--worktree"] if worktree else []
    done = llproc.ll_loop(project, "run", "plant", *flags, env=env, timeout=60)
    assert "Loop completed: done" in done.stderr, done.stderr
    _, complete = _step(project, "plant")
    said = str(complete["stderr"])
    assert "config file" in said, said  # git config: could not lock / write it
    if worktree:  # its `.git` is a file naming the repository: read-only
        assert ".git: Read-only file system" in said, said
    else:
        assert "post-commit: Read-only file system" in said, said
        assert "Device or resource busy" in said, said  # mv .git: a mount point
    after = (project / ".git" / "config").read_text()
    assert after.startswith(config)  # (a worktree run records its branch's base there)
    assert "fsmonitor" not in after
    assert not (project / ".git" / "hooks" / "post-commit").exists()
    assert (project / ".git").is_dir()
    assert not (project / ".git-old").exists()
    assert not (outside / "pwned").exists()
    # git outside (what ll-loop runs) still works on the repository, and sees the step's add.
    status = subprocess.run(["git", "status", "--short"], cwd=project, capture_output=True)
    assert status.returncode == 0


@pytest.mark.parametrize("worktree", [False, True])
def test_a_step_cannot_plant_a_worktree_config_for_ll_loops_own_git(
    project: Path, home: Path, outside: Path, worktree: bool
) -> None:
    """With extensions.worktreeConfig on, git also reads `config.worktree` (the repository's,
    or the worktree's in its admin folder): a step that could write one would set
    core.fsmonitor for the git ll-loop runs outside, as with `.git/config`."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    env = _env(home)
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    subprocess.run(["git", "config", "extensions.worktreeConfig", "true"], cwd=project, check=True)
    evil = f"touch {outside}/pwned"
    attacks = [
        f"git config --worktree core.fsmonitor '{evil}'",
        f"printf '[core]\\n\\tfsmonitor = {evil}\\n'"
        ' >> "$(git rev-parse --git-dir)/config.worktree"',
    ]
    _loop(project, "plant", "; ".join(attacks) + "; echo made > made.txt")
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "loop"], cwd=project, check=True, env=env)
    flags = ["--worktree"] if worktree else []
    done = llproc.ll_loop(project, "run", "plant", *flags, env=env, timeout=60)
    assert "Loop completed: done" in done.stderr, done.stderr
    _, complete = _step(project, "plant")
    said = str(complete.get("stderr", ""))
    assert "config.worktree: Read-only file system" in said, said
    assert "ll-loop sandbox: write refused" in said, said
    planted = [
        p for p in (project / ".git").rglob("config.worktree") if "fsmonitor" in p.read_text()
    ]
    assert planted == []
    # The git ll-loop runs outside, in the tree the step ran in, runs nothing planted.
    trees = [project, *(p for p in (project / ".loops" / ".worktrees").glob("*") if p.is_dir())]
    for tree in trees:
        subprocess.run(["git", "status", "--short"], cwd=tree, capture_output=True, check=False)
    assert not (outside / "pwned").exists()


def test_a_custom_agents_sandbox_confines_its_calls_unless_the_state_says(
    project: Path, home: Path, outside: Path
) -> None:
    """`sandbox:` of an agent of `agents:`: its calls run in it; a state's own wins."""
    (project / ".loops" / "mine.yaml").write_text(
        "name: mine\ninitial: a\n"
        "agents:\n  writer:\n    command: 'cat > " + str(outside) + "/target.txt'\n"
        "    prompt: stdin\n    sandbox: bwrap\n"
        "states:\n"
        "  a:\n    action: confined\n    action_type: prompt\n    agent: writer\n"
        "    evaluate: {type: exit_code}\n    on_success: b\n    on_failure: b\n"
        "  b:\n    action: free\n    action_type: prompt\n    agent: writer\n    sandbox: none\n"
        "    evaluate: {type: exit_code}\n    on_success: done\n    on_failure: done\n"
        "  done:\n    terminal: true\n"
    )
    _run(project, "mine", home)
    assert _sandboxes(project, "mine") == [{"backend": "bwrap", "network": True}, None]
    assert (outside / "target.txt").read_text() == "free"  # only the unconfined call wrote


@pytest.mark.parametrize("said", [None, "", "relative/home"])
def test_without_home_set_the_users_home_is_hidden_all_the_same(
    project: Path, home: Path, said: str | None
) -> None:
    """HOME unset, empty or relative: the password database's home is hidden all the same."""
    _loop(project, "nohome", 'ls -a "$(getent passwd $(id -u) | cut -d: -f6)"')
    env = {k: v for k, v in _env(home).items() if k != "HOME"}
    if said is not None:
        env["HOME"] = said
    done = llproc.ll_loop(project, "run", "nohome", "-v", "--no-color", env=env, timeout=60)
    assert "Loop completed: done" in done.stderr, done.stderr
    _, complete = _step(project, "nohome")
    # An empty tmpfs but for the folders programs are installed in, agents' own, and the
    # secret places there, masked (an empty file or folder in their place).
    shown = {".", "..", ".local", ".config", ".cache", *SECRET_PLACES}
    kept = (*TOOL_PLACES, *(h for kind in AGENTS.values() for h in kind.home.paths))
    shown |= {Path(p).parts[0] for p in kept if not p.startswith("$")}
    real = {p.name for p in Path(os.path.expanduser("~")).iterdir()}
    assert real - shown, "the real home has nothing to hide: the test proves nothing"
    assert set(str(complete["output"]).split()) <= shown


@pytest.mark.parametrize("check", ["stall", "diff_stall"])
def test_a_planted_submodule_cannot_run_code_in_ll_loops_own_git(
    project: Path, home: Path, outside: Path, check: str
) -> None:
    """The stall check runs `git status`/`git diff` outside the sandbox after each pass: a
    step that stages a repository of its own as a submodule, dirty, with core.fsmonitor and a
    clean filter in its config, would have git run them there (a `.gitmodules` asking for
    `ignore = none` too)."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    env = _env(home)
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    plant = (
        "if [ ! -d sub ]; then git init -q sub && cd sub"
        " && echo '* filter=x' > .gitattributes && echo a > a && git add -A"
        " && git -c user.name=t -c user.email=t@t commit -qm x"
        f" && git config core.fsmonitor 'touch {outside}/fsmonitor; false'"
        f" && git config filter.x.clean 'sh -c \"touch {outside}/filter; cat\"'"
        " && echo b > a && touch untracked && cd .. && git add sub"
        " && printf '[submodule \"sub\"]\\n\\tpath = sub\\n\\tignore = none\\n' > .gitmodules"
        "; fi"
    )
    text = (
        "name: sub\ninitial: step\nsandbox: bwrap\nmax_iterations: 2\n"
        "stall:\n  no_change_passes: 5\nstates:\n"
        f"  step:\n    action: {json.dumps(plant)}\n    next: step\n"
        "  done:\n    terminal: true\n"
    )
    if check == "diff_stall":  # the evaluator's `git diff --stat` after the step
        evaluate = "    evaluate:\n      type: diff_stall\n      max_stall: 5\n"
        route = "    on_success: step\n    on_failure: step\n    on_error: step\n"
        text = text.replace("stall:\n  no_change_passes: 5\n", "")
        text = text.replace("    next: step\n", evaluate + route)
    (project / ".loops" / "sub.yaml").write_text(text)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "loop"], cwd=project, check=True, env=env)
    done = llproc.ll_loop(project, "run", "sub", env=env, timeout=60)
    assert "max_iterations reached" in done.stderr, done.stderr
    planted = (project / "sub" / ".git" / "config").read_text()
    assert "\tfsmonitor = " in planted  # the step did plant them
    assert "\tclean = " in planted
    from little_loops.fsm.processes.gitcmd import status_lines

    assert any("sub" in line for line in status_lines(project))  # still seen as changed
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]


def test_a_worktree_step_cannot_point_its_worktree_at_a_repository_of_its_own(
    project: Path, home: Path, outside: Path
) -> None:
    """A worktree's admin folder (`.git/worktrees/NAME`) names, in `commondir`, the
    repository whose config git reads there: rewritten (or the folder moved and made again)
    to a copy with core.fsmonitor set, ll-loop's own git (the stall check) ran it outside."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    env = _env(home)
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project, check=True, env=env)
    evil = f"touch {outside}/pwned; false"
    plant = (
        "gd=$(git rev-parse --absolute-git-dir); common=$(git rev-parse --git-common-dir); "
        'if [ ! -d evil ]; then cp -r "$common" evil; '
        f"git config -f evil/config core.fsmonitor '{evil}'; "
        'echo "$PWD/evil" > "$gd/commondir"; '
        'mv "$gd" "$gd.old" && mkdir "$gd" && cp -r "$gd.old/." "$gd/" '
        '&& echo "$PWD/evil" > "$gd/commondir"; '
        'mv "$common/worktrees" "$common/worktrees.old"; mkdir "$common/worktrees/other"; fi'
    )
    text = (
        "name: wt\ninitial: step\nsandbox: bwrap\nmax_iterations: 2\n"
        "stall:\n  no_change_passes: 5\nstates:\n"
        f"  step:\n    action: {json.dumps(plant)}\n    next: step\n"
        "  done:\n    terminal: true\n"
    )
    (project / ".loops" / "wt.yaml").write_text(text)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "loop"], cwd=project, check=True, env=env)
    done = llproc.ll_loop(project, "run", "wt", "--worktree", env=env, timeout=60)
    assert "max_iterations reached" in done.stderr, done.stderr
    _, complete = _step(project, "wt")
    said = str(complete["stderr"])
    assert "commondir: Read-only file system" in said, said
    assert "Device or resource busy" in said, said  # the admin folder: a mount point
    admins = list((project / ".git" / "worktrees").iterdir())
    assert len(admins) == 1
    assert (admins[0] / "commondir").read_text().strip() == "../.."
    assert not (project / ".git" / "worktrees.old").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]


@pytest.mark.parametrize("allowed", [False, True])
def test_the_ssh_agents_socket_is_hidden_unless_ssh_is_allowed(
    project: Path, home: Path, outside: Path, allowed: bool
) -> None:
    """A read-only mount does not stop a connect() to a socket, nor does `network: off`:
    with the ssh agent's socket in reach, a step could sign with the keys ~/.ssh hides."""
    path = outside / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(0.5)
    connect = (
        f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('reached')"
    )
    sandbox = "{network: off, allow: [~/.ssh]}" if allowed else "{network: off}"
    (project / "reach.py").write_text(connect)
    _loop(project, "sock", f"exec {sys.executable} reach.py", sandbox=sandbox)
    try:
        done = llproc.ll_loop(
            project, "run", "sock", env={**_env(home), "SSH_AUTH_SOCK": str(path)}, timeout=60
        )
    finally:
        server.close()
    assert "Loop completed: done" in done.stderr, done.stderr
    _, complete = _step(project, "sock")
    assert ("reached" in str(complete["output"])) is allowed, complete


def test_a_secret_place_reached_through_a_link_is_masked_too(project: Path, tmp_path: Path) -> None:
    """`~/.ssh` a link into a dotfiles folder shown by `readable:`, or a `readable:` path that
    is a link to `~/.ssh`: the key showed through either, the mask being on `~/.ssh` only."""
    home = tmp_path / "linked-home"
    (home / "dotfiles" / "ssh").mkdir(parents=True)
    (home / "dotfiles" / "ssh" / "id_rsa").write_text(SECRET + "\n")
    (home / "dotfiles" / "vimrc").write_text("set nu\n")
    (home / ".ssh").symlink_to("dotfiles/ssh")
    (home / "keys").symlink_to(".ssh")
    reads = "cat ~/dotfiles/vimrc ~/dotfiles/ssh/id_rsa ~/keys/id_rsa ~/.ssh/id_rsa"
    _loop(project, "links", reads, sandbox="{readable: [~/dotfiles, ~/keys]}")
    _run(project, "links", home)
    _, complete = _step(project, "links")
    assert "set nu" in str(complete["output"])  # the folder shown, but not the key in it
    assert SECRET not in str(complete["output"])
    assert str(complete["stderr"]).count("cat: ") == 3, complete  # each read refused
    assert READ_NOTE in str(complete["stderr"]), complete


@needs_gh
def test_a_tool_whose_settings_are_in_a_secret_place_is_told_why_it_stops(
    project: Path, home: Path
) -> None:
    """gh reads its settings in ~/.config/gh, a secret place: refused there (and said), it
    stops; given a folder of its own (GH_CONFIG_DIR, as docs/sandbox.md says) it runs."""
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n  oauth_token: {SECRET}\n")
    _loop(project, "gh", "gh config get editor")
    _run(project, "gh", home)
    _, complete = _step(project, "gh")
    assert complete["exit_code"] != 0
    assert f"{READ_NOTE} ({home}/.config/gh: Permission denied)" in str(complete["stderr"])
    _loop(project, "gh", 'GH_CONFIG_DIR="$PWD/.gh" gh config get editor')
    _run(project, "gh", home)
    _, complete = _step(project, "gh")
    assert complete["exit_code"] == 0, complete
    assert "ll-loop sandbox:" not in str(complete.get("stderr"))
    assert SECRET not in json.dumps(complete)
