"""The GitHub Action (action.yml) run by `act` on this machine: a 2-item matrix workflow
using `uses: ./` installs ll-loop at its own ref, runs a loop per item, and sets each
job's outputs and summary; actionlint finds nothing in the workflow or the action."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, git
from support.paths import REPO
from support.slowdown import scaled

BIN = Path(sys.executable).parent
ACT = BIN / "act"
ACTIONLINT = BIN / "actionlint"

HELLO = """\
name: hello
initial: greet
parameters:
  who:
    default: nobody
states:
  greet:
    action: 'echo "hello ${context.who}"'
    next: done
  done:
    terminal: true
"""
WORKFLOW = """\
name: loops
on: push
jobs:
  run:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        item: [alpha, beta]
    concurrency:
      group: loop-${{ matrix.item }}
    steps:
      - uses: actions/checkout@v5
      - uses: ./
        id: loop
        with:
          loop: hello
          set: |
            who=${{ matrix.item }}
      - name: Show the outputs
        env:
          OUTCOME: ${{ steps.loop.outputs.outcome }}
          CODE: ${{ steps.loop.outputs.exit-code }}
          FINAL: ${{ steps.loop.outputs.final-state }}
          COST: ${{ steps.loop.outputs.cost }}
          EXPORTED: ${{ steps.loop.outputs.export }}
          ITEM: ${{ matrix.item }}
        run: |
          echo "result $ITEM $OUTCOME $CODE $FINAL $COST"
          tar -tzf "$EXPORTED" > /dev/null && echo "export $ITEM readable"
"""


def _project(root: Path) -> Path:
    """A repository holding this one's files (the action and the package it installs), a
    loop, and the workflow."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    (root / ".loops").mkdir(exist_ok=True)
    (root / ".loops" / "hello.yaml").write_text(HELLO)
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "workflows" / "loops.yml").write_text(WORKFLOW)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "project")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("action") / "project")


def test_actionlint_finds_nothing_in_the_workflow_and_the_action_it_uses(project: Path) -> None:
    done = subprocess.run(
        [str(ACTIONLINT), ".github/workflows/loops.yml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_an_input_the_action_does_not_have(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(REPO / "action.yml", root / "action.yml")
    (root / ".github" / "workflows" / "bad.yml").write_text(
        WORKFLOW.replace("loop: hello", "loops: hello")
    )
    git(root, "init", "-q")  # actionlint finds `./` actions from the repository's top
    done = subprocess.run(
        [str(ACTIONLINT), ".github/workflows/bad.yml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 1
    assert 'input "loops" is not defined in action' in done.stdout


def test_act_runs_the_matrix_each_job_with_its_outputs_and_summary(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        **GIT_ENV,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    done = subprocess.run(
        [str(ACT), "push", "-P", "ubuntu-latest=-self-hosted", "--no-cache-server"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(900),
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]
    results = sorted(set(re.findall(r"\| (result \w+ .*)$", log, re.MULTILINE)))
    assert results == [
        "result alpha terminal 0 done 0.000000",
        "result beta terminal 0 done 0.000000",
    ], log[-6000:]
    assert sorted(set(re.findall(r"\| (export \w+ readable)$", log, re.MULTILINE))) == [
        "export alpha readable",
        "export beta readable",
    ]
    summaries = re.findall(r"Summary - (.*)$", log, re.MULTILINE)
    assert any("### ll-loop: hello (exit 0)" in line for line in summaries), summaries
    assert not (home / ".actrc").exists() or (home / ".actrc").is_file()
