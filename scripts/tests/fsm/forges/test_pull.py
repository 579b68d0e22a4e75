"""A pull request's way through a forge: the verdict on what the forge shows, and a merge
that happens only when every check passed on the pushed commit (the stand-in's record)."""

from __future__ import annotations

import pytest
from support.fake_github import Check as Scripted
from support.fake_github import FakeGitHub
from support.gitrepo import git
from support.programs import needs_gh

from little_loops.fsm.forges import pull
from little_loops.fsm.forges.forge import (
    Check,
    CheckState,
    ForgeError,
    Mergeable,
    MergeMethod,
    Place,
    Status,
)
from little_loops.fsm.forges.gh import FORGE
from little_loops.fsm.forges.pull import Verdict

HEAD = "a" * 40
PASSED = Check("test", CheckState.PASSED)


def _status(checks: tuple[Check, ...] | None = (PASSED,), **changes: object) -> Status:
    fields: dict[str, object] = {
        "head": HEAD,
        "state": "OPEN",
        "mergeable": Mergeable.MERGEABLE,
        "checks": checks,
        **changes,
    }
    return Status(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "verdict", "reason"),
    [
        (_status(), Verdict.PASSED, "1 checks passed"),
        (
            _status((PASSED, Check("docs", CheckState.SKIPPED))),
            Verdict.PASSED,
            "2 checks passed",
        ),
        (_status(None), Verdict.PENDING, "no checks have reported yet"),
        (_status(()), Verdict.PENDING, "no checks have reported yet"),
        (
            _status(head="b" * 40),
            Verdict.PENDING,
            f"the forge has not seen the pushed commit {HEAD[:12]} yet",
        ),
        (
            _status((PASSED, Check("lint", CheckState.PENDING))),
            Verdict.PENDING,
            "checks pending: lint",
        ),
        (
            _status((Check("lint", CheckState.PENDING), Check("test", CheckState.FAILED))),
            Verdict.FAILED,
            "checks failed: test",
        ),
        (
            _status(mergeable=Mergeable.CONFLICTING),
            Verdict.FAILED,
            "the pull request conflicts with its base",
        ),
        (
            _status(mergeable=Mergeable.UNKNOWN),
            Verdict.PENDING,
            "the forge has not yet said whether it would merge",
        ),
        (_status(state="MERGED"), Verdict.MERGED, "the pull request is merged"),
        (_status(state="CLOSED"), Verdict.FAILED, "the pull request is closed"),
    ],
)
def test_the_verdict_on_what_the_forge_shows(status: Status, verdict: Verdict, reason: str) -> None:
    seen = pull.judge(status, HEAD)
    assert (seen.verdict, seen.reason) == (verdict, reason)


def test_merge_if_green_merges_nothing_that_is_not_green() -> None:
    class Refuses:
        def merge(self, *args: object) -> None:
            raise AssertionError("merge called")

    for status in (_status(None), _status(mergeable=Mergeable.UNKNOWN), _status(head="b" * 40)):
        seen = pull.judge(status, HEAD)
        assert not pull.merge_if_green(Refuses(), None, None, seen, MergeMethod.SQUASH, HEAD)  # type: ignore[arg-type]
    green = pull.judge(_status(), HEAD)
    assert not pull.merge_if_green(Refuses(), None, None, green, MergeMethod.NONE, HEAD)  # type: ignore[arg-type]


@needs_gh
def test_pending_then_failed_then_a_fix_then_green_then_merged_and_never_merged_before(
    place: Place, fake: FakeGitHub
) -> None:
    fake.script_checks(
        "fix",
        [
            [Scripted("test", "pending")],
            [Scripted("test", "failed", log="AssertionError: readme\n")],
        ],
        [[], [Scripted("test", "queued")], [Scripted("test", "passed")]],
    )
    pr, head = pull.publish(FORGE, place, "fix", None, "Fix", "summary")
    verdicts = []
    while True:
        seen = pull.look(FORGE, place, pr, head, required=True)
        verdicts.append(seen.verdict)
        assert not pull.merge_if_green(FORGE, place, pr, seen, MergeMethod.SQUASH, head)
        if seen.verdict is Verdict.FAILED:
            break
    assert verdicts == [Verdict.PENDING, Verdict.FAILED]
    assert [(c.name, c.log_tail) for c in seen.failed] == [("test", "AssertionError: readme")]
    (place.where / "README").write_text("really fixed\n")
    git(place.where, "commit", "-qam", "the fix")
    pr2, head = pull.publish(FORGE, place, "fix", None, "Fix", "summary 2")
    assert pr2.number == pr.number
    verdicts = []
    merged = False
    while not merged:
        seen = pull.look(FORGE, place, pr, head, required=True)
        verdicts.append(seen.verdict)
        merged = pull.merge_if_green(FORGE, place, pr, seen, MergeMethod.SQUASH, head)
    assert verdicts == [Verdict.PENDING, Verdict.PENDING, Verdict.PASSED]
    assert fake.prs[pr.number].state == "MERGED"
    assert [call.checks_then for call in fake.merges()] == [(("test", "passed"),)]
    reads = [
        op for op in fake.operations() if op in ("PullRequestStatusChecks", "PullRequestMerge")
    ]
    assert reads[-1] == "PullRequestMerge"
    assert reads.count("PullRequestMerge") == 1


@needs_gh
@pytest.mark.parametrize("branch", ["--force", "a..b", "x y", "-d", "@{-1}"])
def test_a_branch_name_git_refuses_is_a_forge_error_and_nothing_is_pushed(
    place: Place, fake: FakeGitHub, branch: str
) -> None:
    with pytest.raises(ForgeError, match="is not a branch name git accepts"):
        pull.publish(FORGE, place, branch, None, "t", "b")
    assert git(fake.bare, "for-each-ref", "--format=%(refname)", "refs/heads/") == (
        "refs/heads/main\n"
    )
    assert fake.calls == []
