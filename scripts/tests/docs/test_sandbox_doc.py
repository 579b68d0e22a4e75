"""docs/sandbox.md: its loops run as written under real bubblewrap, its samples are what `ll-loop`
prints, and its podman wrapper hands the step's command line on unchanged."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks, normalise
from support.programs import needs_bwrap

pytestmark = needs_bwrap

DOC = "docs/sandbox.md"
TIME = re.compile(r"\d+ms")


def block(prefix: str) -> str:
    (found,) = [b for b in all_blocks() if b.starts(DOC, prefix)]
    return found.text


def same(text: str) -> str:
    return TIME.sub("<MS>", normalise(text))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "p" / ".loops").mkdir(parents=True)
    (tmp_path / "p" / "test_ok.py").write_text("def test_ok():\n    pass\n")
    return tmp_path / "p"


def _write(root: Path, name: str) -> None:
    (root / ".loops" / f"{name}.yaml").write_text(block(f"name: {name}\n"))


def test_the_dry_run_sample_is_what_it_prints(root: Path) -> None:
    _write(root, "offline-checks")
    command, _, shown = block("$ ll-loop run offline-checks --dry-run").partition("\n")
    done = llproc.ll_loop(root, *command.split()[2:])
    assert done.returncode == 0, done.stderr
    assert same(done.stdout) == same(shown)


def test_the_offline_loop_runs_its_tests_without_network(root: Path) -> None:
    _write(root, "offline-checks")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = llproc.ll_loop(root, "run", "offline-checks", "--no-color", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Loop completed: done" in done.stderr


def test_the_refused_write_sample_is_what_it_prints(root: Path) -> None:
    (root / ".loops" / "tidy.yaml").write_text(
        "name: tidy\ninitial: tidy\nsandbox: bwrap\nstates:\n"
        "  tidy:\n    action: echo 127.0.0.1 ads.example >> /etc/hosts\n"
        "    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"
    )
    hosts = Path("/etc/hosts").read_bytes()
    env = {**os.environ, "COLUMNS": "100"}
    done = llproc.ll_loop(root, "run", "tidy", "--no-color", env=env)
    assert same(done.stderr) == same(block("[1/50] tidy →"))
    assert Path("/etc/hosts").read_bytes() == hosts


def test_the_missing_bwrap_line_is_what_it_prints(root: Path, tmp_path: Path) -> None:
    _write(root, "offline-checks")
    empty = tmp_path / "bin"
    empty.mkdir()
    done = llproc.ll_loop(root, "run", "offline-checks", env={**os.environ, "PATH": str(empty)})
    assert done.returncode == 2
    assert done.stderr == block("ll-loop: error: state 'test' runs in a sandbox")


FAKE_PODMAN = """\
#!/bin/sh
# Stands in for podman: records its arguments, then runs what follows the image.
printf '%s\\n' "$@" > "$PODMAN_LOG"
while [ "$1" != docker.io/library/python:3.12 ]; do shift; done
shift
exec "$@"
"""


def test_the_podman_wrapper_gets_the_steps_command_line(root: Path, tmp_path: Path) -> None:
    _write(root, "in-podman")
    script = root / ".loops" / "in-podman.sh"
    script.write_text(block("#!/bin/sh\n# .loops/in-podman.sh"))
    script.chmod(0o755)
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "podman").write_text(FAKE_PODMAN)
    (folder / "podman").chmod(0o755)
    log = tmp_path / "podman.log"
    path = f"{folder}:{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "PODMAN_LOG": str(log)}
    done = llproc.ll_loop(root, "run", "in-podman", "--no-color", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [
        "run",
        "--rm",
        "-i",
        "--network=none",
        "-v",
        f"{root}:{root}",
        "-w",
        str(root),
        "docker.io/library/python:3.12",
        "bash",
        "-c",
        "python -m pytest -q",
    ]


def test_the_refused_read_and_signal_sample_is_what_it_prints(root: Path, tmp_path: Path) -> None:
    """A step that reads a key under the hidden ~/.ssh and signals ll-loop: both refused,
    both said (the sample's $HOME is /home/me and ll-loop's pid 4242)."""
    (root / ".loops" / "peek.yaml").write_text(
        "name: peek\ninitial: peek\nsandbox: bwrap\nstates:\n"
        "  peek:\n    action: 'cat ~/.ssh/id_rsa; kill \"${LL_LOOP_RUN#*:}\"'\n"
        "    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"
    )
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    env = {**os.environ, "COLUMNS": "200", "HOME": str(home)}
    done = llproc.ll_loop(root, "run", "peek", "--no-color", env=env)
    pid = json.loads((root / ".loops" / ".running" / "peek.state.json").read_text())["pid"]
    shown = done.stderr.replace(str(home), "/home/me").replace(f"{pid}", "4242")
    assert same(shown) == same(block("[1/50] peek →"))
    assert "PRIVATE KEY" not in done.stderr
