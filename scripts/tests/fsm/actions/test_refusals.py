"""What a sandboxed step that hit its sandbox is told: each refusal it met, said once, and only
a refused read of a place its sandbox hid or a failed signal to ll-loop's own pid."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.programs import needs_bwrap

from little_loops.fsm.actions.refusals import refusal_note, step_note
from little_loops.fsm.actions.sandbox import Confinement
from little_loops.fsm.actions.sandbox_key import Sandbox


def test_what_a_refused_step_is_told() -> None:
    on, off = Sandbox(), Sandbox(network=False)
    written = "touch: cannot touch '/etc/x': Read-only file system"
    assert refusal_note("", written, on) == (
        "ll-loop sandbox: write refused, read-only here (Read-only file system)"
    )
    assert refusal_note(written, "", off) == refusal_note("", written, on)  # output or stderr
    curl = "curl: (7) Failed to connect to 127.0.0.1 port 8080: Connection refused"
    assert refusal_note("", curl, off) == (
        "ll-loop sandbox: network off for this step (Connection refused)"
    )
    assert refusal_note("", curl, on) is None  # with network on it is the server's refusal
    assert refusal_note("all fine", "", off) is None
    zsh = "zsh:1: read-only file system: /etc/x"  # zsh says it in lower case, as Go and Node
    assert refusal_note(zsh, "", on) == refusal_note("", written, on)
    dns = "curl: (6) Could not resolve host: example.com"
    assert refusal_note(dns, "", off) == (
        "ll-loop sandbox: network off for this step (Could not resolve host)"
    )


def test_a_refused_read_is_said_only_for_a_place_the_sandbox_hid() -> None:
    hidden, env = ["/h/.ssh", "/h/.netrc", "/h/dots/ssh"], {"HOME": "/h"}
    note = "ll-loop sandbox: read refused, a secret place is hidden ({}: Permission denied)"
    said = {
        "cat: /h/.ssh/id_rsa: Permission denied": "/h/.ssh",
        "ls: cannot open directory '.ssh': Permission denied": "/h/.ssh",
        "cat: ~/.netrc: Permission denied": "/h/.netrc",
        "open('/h/dots/ssh/key'): [Errno 13] Permission denied": "/h/dots/ssh",
        '{"output": "cat: /h/.ssh/config: Permission denied"}': "/h/.ssh",  # an agent's tool
        "failed to read configuration:  open /h/.ssh/x: permission denied": "/h/.ssh",  # Go
        "Error: EACCES: permission denied, open '/h/.netrc'": "/h/.netrc",  # Node
    }
    for line, place in said.items():
        assert refusal_note("", line, Sandbox(), hidden, env) == note.format(place), line
    for line in [
        "cat: /root/.ssh/id_rsa: Permission denied",  # not hidden by this step's sandbox
        "cat: /h/.sshkeys: Permission denied",  # a place whose name only starts the same
        "cat: sub/.ssh/x: Permission denied",  # a relative name not under $HOME
        "cat: /h/.ssh/id_rsa: No such file or directory",  # no refusal
        "bash: /proc/1/environ: Permission denied",
    ]:
        assert refusal_note("", line, Sandbox(), hidden, env) is None, line
    assert refusal_note("", "cat: /h/.ssh/x: Permission denied", Sandbox()) is None


def test_each_refusal_a_step_met_is_said_once() -> None:
    met = "\n".join(
        [
            "touch: cannot touch '/etc/x': Read-only file system",
            "touch: cannot touch '/usr/y': Read-only file system",
            "cat: /h/.ssh/id_rsa: Permission denied",
            "bash: line 1: kill: (4242) - No such process",
        ]
    )
    assert refusal_note(met, "", Sandbox(), ["/h/.ssh"], {"HOME": "/h"}, [4242]) == "\n".join(
        [
            "ll-loop sandbox: write refused, read-only here (Read-only file system)",
            "ll-loop sandbox: read refused, a secret place is hidden (/h/.ssh: Permission denied)",
            "ll-loop sandbox: signal refused, ll-loop's processes are outside this step's view "
            "(4242: No such process)",
        ]
    )


def test_a_refused_signal_is_said_only_for_ll_loops_own_pid() -> None:
    note = (
        "ll-loop sandbox: signal refused, ll-loop's processes are outside this step's view "
        "(4242: No such process)"
    )
    for line in [
        "bash: line 1: kill: (4242) - No such process",
        "/bin/kill: (4242): No such process",
        "zsh:kill:1: kill 4242 failed: no such process",
    ]:
        assert refusal_note(line, "", Sandbox(), outside=[4242]) == note, line
    for line in [
        "bash: line 1: kill: (14242) - No such process",  # another pid
        "bash: line 1: kill: (4242) - Operation not permitted",
        "zsh:kill:1: kill 14242 failed: no such process",
        "dash: 1: kill: No such process",  # dash names no pid
        "ProcessLookupError: [Errno 3] No such process",  # no pid said: nothing to tell
    ]:
        assert refusal_note(line, "", Sandbox(), outside=[4242]) is None, line


def test_a_step_is_told_of_its_own_sandbox_only(tmp_path: Path) -> None:
    """bubblewrap's step: the places it hid and ll-loop's pid; a wrapper's: neither (the
    wrapper hides what it hides), but its refused writes."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    env = {"HOME": str(home)}
    read = f"cat: {home}/.ssh/id_rsa: Permission denied"
    signal = f"bash: line 1: kill: ({os.getpid()}) - No such process"
    confined = Confinement(Sandbox(), work=tmp_path)
    said = step_note(confined, read, signal, env)
    assert said is not None
    assert f"({home}/.ssh: Permission denied)" in said
    assert f"({os.getpid()}: No such process)" in said
    wrapped = Confinement(Sandbox(command=("podman", "run")), work=tmp_path)
    assert step_note(wrapped, read, signal, env) is None
    written = "touch: cannot touch '/etc/x': Read-only file system"
    assert step_note(wrapped, written, "", env) == (
        "ll-loop sandbox: write refused, read-only here (Read-only file system)"
    )


@needs_bwrap
@pytest.mark.parametrize("shell", ["bash", "dash", "zsh"])
def test_each_shell_s_refusals_are_told(shell: str) -> None:
    """What bash, dash and zsh themselves print when a sandbox refuses a write (a
    redirection: the shell's own words, in its own case) and a signal to a pid outside."""
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} is not installed")
    pid = os.getpid()  # outside bubblewrap's own process ids
    script = f"echo x >> /etc/ll-refused; kill {pid}; true"
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
    ran = subprocess.run([*argv, path, "-c", script], capture_output=True, text=True, timeout=60)
    note = refusal_note(ran.stdout, ran.stderr, Sandbox(), outside=[pid])
    assert note is not None, ran.stderr
    assert "write refused, read-only here" in note, ran.stderr
    if shell != "dash":  # dash's kill names no pid
        assert "signal refused" in note, ran.stderr
