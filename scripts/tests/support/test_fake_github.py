"""The scripted GitHub stand-in answers the real gh 2.23: login, repository, pull requests,
checks with their logs, merge; it records every call and what the checks were at a merge."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support.fake_github import Check, FakeGitHub
from support.gitrepo import GIT_ENV, git, make_repo
from support.programs import needs_gh

pytestmark = needs_gh


def _gh(
    fake: FakeGitHub, work: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, **fake.env(work.parent / "gh-config")}
    return subprocess.run(
        ["gh", *args], cwd=work, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def fake(tmp_path: Path) -> FakeGitHub:
    with FakeGitHub(tmp_path / "remote.git") as served:
        yield served  # type: ignore[misc]


@pytest.fixture
def work(tmp_path: Path, fake: FakeGitHub) -> Path:
    root = tmp_path / "work"
    make_repo(root, {"README": "hello\n"})
    fake.connect(root)
    git(root, "push", "-q", "origin", "main")
    git(root, "checkout", "-q", "-b", "fix")
    (root / "README").write_text("fixed\n")
    git(root, "commit", "-qam", "fix")
    git(root, "push", "-q", "origin", "fix")
    return root


def test_auth_status_says_logged_in_and_fails_after_a_logout(fake: FakeGitHub, work: Path) -> None:
    done = _gh(fake, work, "auth", "status", "--hostname", "github.localhost")
    assert done.returncode == 0, done.stderr
    assert "Logged in to github.localhost as ll-loop-bot" in done.stderr
    fake.logged_in = False
    done = _gh(fake, work, "auth", "status", "--hostname", "github.localhost")
    assert done.returncode == 1
    assert "authentication failed" in done.stderr
    assert fake.operations()[:2] == ["GET /", "UserCurrent"]


def test_repo_view_reads_the_repository_of_the_remote(fake: FakeGitHub, work: Path) -> None:
    done = _gh(fake, work, "repo", "view", "--json", "nameWithOwner,defaultBranchRef")
    assert done.returncode == 0, done.stderr
    assert '"nameWithOwner":"octo/repo"' in done.stdout
    assert fake.operations() == ["RepositoryInfo"]


def test_a_pull_request_is_created_listed_viewed_and_edited(fake: FakeGitHub, work: Path) -> None:
    made = _gh(
        fake,
        work,
        "pr",
        "create",
        "--head",
        "fix",
        "--base",
        "main",
        "--title",
        "Fix",
        "--body-file",
        "-",
        stdin="the run's summary\n",
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "https://github.localhost/octo/repo/pull/1"
    again = _gh(
        fake,
        work,
        "pr",
        "create",
        "--head",
        "fix",
        "--base",
        "main",
        "--title",
        "Fix",
        "--body",
        "x",
    )
    assert again.returncode == 1
    assert "already exists" in again.stderr
    listed = _gh(fake, work, "pr", "list", "--head", "fix", "--json", "number,title")
    assert listed.stdout.strip() == '[{"number":1,"title":"Fix"}]'
    edited = _gh(
        fake, work, "pr", "edit", "1", "--title", "Fix 2", "--body-file", "-", stdin="new\n"
    )
    assert edited.returncode == 0, edited.stderr
    viewed = _gh(fake, work, "pr", "view", "1", "--json", "title,body,headRefOid,mergeable,state")
    assert viewed.returncode == 0, viewed.stderr
    head = git(work, "rev-parse", "HEAD").strip()
    assert json.loads(viewed.stdout) == {
        "body": "new\n",
        "headRefOid": head,
        "mergeable": "MERGEABLE",
        "state": "OPEN",
        "title": "Fix 2",
    }
    assert "PullRequestCreate" in fake.operations()
    assert "PullRequestUpdate" in fake.operations()
    create = next(c for c in fake.calls if c.operation == "PullRequestCreate")
    assert create.variables["input"]["body"] == "the run's summary\n"


def test_checks_move_through_their_scripted_steps_per_pushed_commit(
    fake: FakeGitHub, work: Path
) -> None:
    fake.script_checks(
        "fix",
        [
            [Check("test", "pending")],
            [
                Check("test", "failed", log="ok 1\nFAILED test_x\n"),
                Check("lint", "passed", required=False),
            ],
        ],
        [[Check("test", "passed")]],
    )
    assert (
        _gh(fake, work, "pr", "create", "--head", "fix", "--title", "t", "--body", "b").returncode
        == 0
    )
    first = _gh(fake, work, "pr", "checks", "1")
    assert (first.returncode, first.stdout.split("\t")[:2]) == (1, ["test", "pending"])
    second = _gh(fake, work, "pr", "checks", "1", "--required")
    rows = [line.split("\t") for line in second.stdout.splitlines()]
    assert second.returncode == 1
    assert [row[:2] for row in rows] == [["test", "fail"]]
    job = rows[0][3].rsplit("/", 1)[1]
    log = _gh(fake, work, "api", f"repos/{{owner}}/{{repo}}/actions/jobs/{job}/logs")
    assert log.stdout == "ok 1\nFAILED test_x\n"
    (work / "README").write_text("fixed again\n")
    git(work, "commit", "-qam", "fix again")
    git(work, "push", "-q", "origin", "fix")
    third = _gh(fake, work, "pr", "checks", "1")
    assert (third.returncode, third.stdout.split("\t")[:2]) == (0, ["test", "pass"])


def test_a_merge_is_recorded_with_the_checks_it_saw_and_a_moved_head_is_refused(
    fake: FakeGitHub, work: Path
) -> None:
    fake.script_checks("fix", [[Check("test", "passed")]])
    assert (
        _gh(fake, work, "pr", "create", "--head", "fix", "--title", "t", "--body", "b").returncode
        == 0
    )
    stale = _gh(fake, work, "pr", "merge", "1", "--squash", "--match-head-commit", "0" * 40)
    assert stale.returncode == 1
    assert "Head branch was modified" in stale.stderr
    head = git(work, "rev-parse", "HEAD").strip()
    merged = _gh(fake, work, "pr", "merge", "1", "--rebase", "--match-head-commit", head)
    assert merged.returncode == 0, merged.stderr
    assert fake.prs[1].state == "MERGED"
    assert fake.prs[1].merge_method == "REBASE"
    assert [c.checks_then for c in fake.merges()] == [(("test", "passed"),)] * 2


def test_a_forge_that_is_down_answers_502(fake: FakeGitHub, work: Path) -> None:
    fake.down = True
    done = _gh(fake, work, "pr", "view", "1", "--json", "state")
    assert done.returncode == 1
    assert "502" in done.stderr
