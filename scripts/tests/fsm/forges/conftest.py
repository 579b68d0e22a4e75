"""A GitHub stand-in served for the forge tests, and a checkout whose remote it hosts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_github import FakeGitHub
from support.gitrepo import GIT_ENV

from little_loops.fsm.forges.forge import Place


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "remote.git") as served:
        yield served


@pytest.fixture
def place(tmp_path: Path, fake: FakeGitHub) -> Place:
    """A checkout on branch `fix` (one commit ahead of `main`), its remote `origin` on the
    stand-in: gh reads github.localhost/octo/repo from it, git pushes to the bare repo."""
    work = fake.checkout(tmp_path / "work")
    return Place(work, "origin", {**os.environ, **GIT_ENV, **fake.env(tmp_path / "gh-config")})
