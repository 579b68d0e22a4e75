"""The repository holds no stray files: nothing tracked is also ignored, nothing odd at the root."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.paths import REPO

# What the repository root holds; anything else there was committed by mistake (a file
# named `n` holding `4` once was).
# A new file that belongs at the root is added here.
ROOT_ENTRIES = {
    ".ci",
    ".claude-plugin",
    ".gitignore",
    ".loops",
    ".pre-commit-hooks.yaml",
    "README.md",
    "action.yml",  # the GitHub Action (docs/github-actions.md): GitHub reads it at the root
    "commands",
    "docs",
    "pyproject.toml",
    "scripts",
}


def _git(*args: str) -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_no_tracked_file_is_ignored() -> None:
    assert _git("ls-files", "--cached", "--ignored", "--exclude-standard") == []


def test_the_root_holds_only_what_it_should() -> None:
    tracked = {path.split("/", 1)[0] for path in _git("ls-files")}
    assert tracked - ROOT_ENTRIES == set(), "unexpected at the root (add it to ROOT_ENTRIES?)"
