"""The gh forge kind with the real gh and real git against the GitHub stand-in: its
preflight, opening and updating a pull request, its checks with log tails, merging."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from support.fake_github import Check as Scripted
from support.fake_github import FakeGitHub
from support.fake_github import PullRequest as FakePull
from support.gitrepo import git
from support.programs import needs_gh

from little_loops.fsm.forges import pull
from little_loops.fsm.forges.forge import (
    CheckState,
    ForgeError,
    Mergeable,
    MergeMethod,
    Place,
)
from little_loops.fsm.forges.gh import FORGE, LOG_TAIL_LINES, repo_of

pytestmark = needs_gh


def test_a_ready_gh_has_no_problem(place: Place) -> None:
    assert FORGE.problem(place) is None


def test_gh_missing_is_one_line_naming_the_install(place: Place, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "git").symlink_to("/usr/bin/git")
    problem = FORGE.problem(replace(place, env={**place.env, "PATH": str(empty)}))
    assert problem == (
        "gh is not on PATH; install GitHub's CLI (https://cli.github.com; "
        "Debian/Ubuntu: apt-get install gh)"
    )


def test_gh_not_logged_in_is_one_line_naming_the_login(place: Place, fake: FakeGitHub) -> None:
    fake.logged_in = False
    problem = FORGE.problem(place)
    assert problem is not None
    assert "\n" not in problem
    assert problem.startswith("gh is not logged in to github.localhost (")
    assert problem.endswith("run `gh auth login --hostname github.localhost` or set GH_TOKEN")


def test_a_remote_gh_does_not_know_is_one_line(place: Place) -> None:
    git(place.where, "remote", "set-url", "origin", "/srv/somewhere/repo.git")
    assert FORGE.problem(place) == (
        "remote 'origin' (/srv/somewhere/repo.git) is not a repository address gh knows"
    )
    assert FORGE.problem(replace(place, remote="upstream")) is not None


@pytest.mark.parametrize(
    ("url", "full"),
    [
        ("https://github.com/octo/repo.git", "github.com/octo/repo"),
        ("https://github.com/octo/repo", "github.com/octo/repo"),
        ("git@github.example.com:octo/repo.git", "github.example.com/octo/repo"),
        ("ssh://git@github.com:22/octo/repo.git", "github.com/octo/repo"),
        ("https://user:tok@GitHub.com/octo/repo.git/", "github.com/octo/repo"),
    ],
)
def test_the_repository_a_remote_names(url: str, full: str) -> None:
    repo = repo_of(url)
    assert repo is not None
    assert repo.full == full


def test_a_pull_request_is_opened_then_updated_never_twice(place: Place, fake: FakeGitHub) -> None:
    opened, head = pull.publish(FORGE, place, "fix", None, "Fix the readme", "passes: 1\n")
    assert opened.created
    assert opened.url == "https://github.localhost/octo/repo/pull/1"
    assert head == git(place.where, "rev-parse", "HEAD").strip() == fake.head_oid("fix")
    (place.where / "README").write_text("fixed twice\n")
    git(place.where, "commit", "-qam", "again")
    again, head2 = pull.publish(FORGE, place, "fix", None, "--help -R x/y", "passes: 2\n")
    assert (again.number, again.created) == (1, False)
    assert head2 == fake.head_oid("fix") != head
    assert len(fake.prs) == 1
    assert (fake.prs[1].title, fake.prs[1].body, fake.prs[1].base) == (
        "--help -R x/y",
        "passes: 2\n",
        "main",
    )
    assert fake.operations().count("PullRequestCreate") == 1
    assert fake.operations().count("PullRequestUpdate") == 1


def test_a_forks_pull_request_of_the_same_branch_name_is_never_taken_over(
    place: Place, fake: FakeGitHub
) -> None:
    """GitHub lists pull requests by head branch name across forks: a stranger's `fix`
    from a fork is neither edited nor waited on; ours is opened beside it."""
    fake.prs[1] = FakePull(1, "theirs", "their body", "fix", "main", fork_owner="stranger")
    opened, _ = pull.publish(FORGE, place, "fix", None, "ours", "our body")
    assert (opened.number, opened.created) == (2, True)
    assert (fake.prs[1].title, fake.prs[1].body) == ("theirs", "their body")
    assert "PullRequestUpdate" not in fake.operations()
    again, _ = pull.publish(FORGE, place, "fix", None, "ours again", "b")
    assert (again.number, again.created) == (2, False)
    assert fake.prs[2].title == "ours again"
    assert fake.prs[1].title == "theirs"


def test_checks_are_read_with_names_states_and_the_tail_of_a_failed_jobs_log(
    place: Place, fake: FakeGitHub
) -> None:
    log = "".join(f"line {i}\n" for i in range(100)) + "FAILED test_readme\n"
    fake.script_checks(
        "fix",
        [
            [],
            [Scripted("test", "pending"), Scripted("lint", "passed", required=False)],
            [Scripted("test", "failed", log=log), Scripted("lint", "failed", required=False)],
        ],
    )
    pr, _ = pull.publish(FORGE, place, "fix", None, "t", "b")
    nothing = FORGE.status(place, pr, required=False)
    assert nothing.checks is None
    running = FORGE.status(place, pr, required=False)
    assert running.checks is not None
    assert sorted((c.name, c.state) for c in running.checks) == [
        ("lint", CheckState.PASSED),
        ("test", CheckState.PENDING),
    ]
    failed = FORGE.status(place, pr, required=True)
    assert failed.checks is not None
    assert [(c.name, c.state) for c in failed.checks] == [("test", CheckState.FAILED)]
    tail = failed.checks[0].log_tail.splitlines()
    assert len(tail) == LOG_TAIL_LINES
    assert tail[-1] == "FAILED test_readme"
    assert failed.mergeable is Mergeable.MERGEABLE
    assert failed.state == "OPEN"


def test_a_merge_needs_the_head_it_was_told(place: Place, fake: FakeGitHub) -> None:
    fake.script_checks("fix", [[Scripted("test", "passed")]])
    pr, head = pull.publish(FORGE, place, "fix", None, "t", "b")
    with pytest.raises(ForgeError, match="Head branch was modified"):
        FORGE.merge(place, pr, MergeMethod.SQUASH, "0" * 40)
    FORGE.merge(place, pr, MergeMethod.SQUASH, head)
    assert fake.prs[1].state == "MERGED"
    assert fake.prs[1].merge_method == "SQUASH"


def test_a_forge_that_cannot_be_reached_is_a_forge_error(place: Place, fake: FakeGitHub) -> None:
    pr, _ = pull.publish(FORGE, place, "fix", None, "t", "b")
    fake.down = True
    with pytest.raises(ForgeError) as raised:
        FORGE.status(place, pr, required=False)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith("`gh pr view` failed: ")


def test_a_push_git_refuses_is_a_forge_error(place: Place, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(other))
    git(other, "checkout", "-q", "-b", "fix")
    (other / "NEW").write_text("theirs\n")
    git(other, "add", "NEW")
    git(other, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "theirs")
    git(other, "push", "-q", "origin", "fix")
    with pytest.raises(ForgeError, match=r"^`git push origin HEAD:fix` failed: "):
        pull.push(place, "fix")


def test_gh_checks_exiting_in_error_with_passing_rows_is_never_green(
    place: Place, fake: FakeGitHub, tmp_path: Path
) -> None:
    """gh exits 1 only for a failed check and 8 only for a pending one: an exit in error
    whose rows all passed is gh failing, never a green light to merge."""
    fake.script_checks("fix", [[Scripted("test", "passed")]])
    pr, head = pull.publish(FORGE, place, "fix", None, "t", "b")
    real = shutil.which("gh", path=place.env.get("PATH"))
    assert real is not None
    bin_dir = tmp_path / "wrapped"
    bin_dir.mkdir()
    wrapper = bin_dir / "gh"
    wrapper.write_text(
        "#!/bin/bash\n"
        'if [ "$1 $2" = "pr checks" ]; then\n'
        '  "' + real + '" "$@"; echo "error: connection reset" >&2; exit 1\n'
        "fi\n"
        'exec "' + real + '" "$@"\n'
    )
    wrapper.chmod(0o755)
    wrapped = replace(place, env={**place.env, "PATH": f"{bin_dir}:{place.env['PATH']}"})
    with pytest.raises(ForgeError, match=r"^`gh pr checks 1` failed: "):
        pull.look(FORGE, wrapped, pr, head, required=False)
    assert fake.merges() == []


def test_a_remote_named_like_an_option_is_refused_before_git_reads_it(
    place: Place, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    hostile = replace(place, remote=f"--repo={elsewhere}")
    with pytest.raises(ForgeError, match=r"^'--repo=.*' is not a git remote's name$"):
        pull.push(hostile, "fix")
    assert git(elsewhere, "for-each-ref").strip() == ""
