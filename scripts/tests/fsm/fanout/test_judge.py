"""`join: best` by the LLM judge (fsm/fanout/judge.py) against the scripted Messages API on
127.0.0.1: what it is shown of each branch, its pick, and each way it cannot judge."""

from __future__ import annotations

from pathlib import Path

from support.fake_anthropic import FakeAnthropic
from support.gitrepo import git, make_repo

from little_loops.fsm.evaluators.config import LLMConfig
from little_loops.fsm.fanout.branches import Branch, BranchRecord
from little_loops.fsm.fanout.join import join
from little_loops.fsm.fanout.judge import MAX_JUDGED, judge_best

QUESTION = "Which is best?"


def _branches(tmp_path: Path) -> tuple[list[BranchRecord], str]:
    root = tmp_path / "project"
    make_repo(root, {"a.txt": "one\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    records = []
    for index, text in enumerate(("two\n", "three\n")):
        tree = tmp_path / f"tree{index}"
        git(root, "worktree", "add", "-q", "-b", f"b{index}", str(tree))
        (tree / "a.txt").write_text(text)
        (tree / f"new{index}.txt").write_text("new\n")  # untracked: still in the diff
        record = BranchRecord(Branch(index, "fix"), f"i{index}", f"fix@i{index}", f"b{index}", tree)
        record.verdict = "success"
        records.append(record)
    return records, base


def test_the_judge_sees_each_branch_s_diff_and_its_pick_wins(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    records, base = _branches(tmp_path)
    fake_anthropic.reply_tool({"verdict": "branch_2", "confidence": 0.8, "reason": "three"})
    judged = join(
        "best",
        records,
        None,
        tmp_path,
        lambda g, b: judge_best(g, b, tmp_path / ".loops", QUESTION, LLMConfig()),
        base,
    )
    assert judged.verdict == "success"
    assert judged.picked == (records[1],)
    assert judged.reason == "three"
    asked = fake_anthropic.requests[0].body["messages"][0]["content"]
    assert asked.startswith(QUESTION)
    first, second = asked.index('name="branch_1"'), asked.index('name="branch_2"')
    assert first < asked.index("+two") < asked.index("+++ b/new0.txt") < second
    assert asked.index("+three") > second
    # The worktrees were read, not touched: their index knows nothing of the new files.
    assert git(records[0].worktree, "status", "--porcelain") == " M a.txt\n?? new0.txt\n"


def test_each_way_the_judge_cannot_judge_is_an_error_with_its_reason(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    records, base = _branches(tmp_path)
    llm = LLMConfig(timeout=5)
    fake_anthropic.reply_tool({"verdict": "cannot_judge", "confidence": 0.9, "reason": "same"})
    fake_anthropic.reply_tool({"verdict": "branch_1", "confidence": 0.2, "reason": "unsure"})
    fake_anthropic.reply_error(400, {"type": "error", "error": {"message": "bad"}})
    reasons = []
    for _ in range(3):
        joined = join(
            "best",
            records,
            None,
            tmp_path,
            lambda g, b: judge_best(g, b, tmp_path / ".loops", QUESTION, llm),
            base,
        )
        assert joined.verdict == "error"
        assert joined.picked == ()
        reasons.append(joined.reason)
    assert reasons == [
        "the judge could not judge (cannot_judge): same",
        "the judge was not confident (0.2): unsure",
        "the judge could not judge (error): API error 400: bad",
    ]
    off = judge_best(records, base, tmp_path, QUESTION, LLMConfig(enabled=False))
    assert off.picked is None
    assert off.reason == "the LLM judge is off (--no-llm or llm.enabled: false)"
    outside = judge_best(records, None, tmp_path, QUESTION, llm)
    assert outside.picked is None
    assert outside.reason == "the judge compares the branches' changes: not a git repository"
    assert len(fake_anthropic.requests) == 3


def test_one_successful_branch_needs_no_judge(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    records, base = _branches(tmp_path)
    records[0].verdict = "failure"
    joined = join(
        "best",
        records,
        None,
        tmp_path,
        lambda g, b: judge_best(g, b, tmp_path, QUESTION, LLMConfig()),
        base,
    )
    assert joined.picked == (records[1],)
    assert joined.reason == "the only successful branch"
    assert fake_anthropic.requests == []


def test_every_branch_is_shown_within_what_the_judge_reads_and_too_many_are_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    records, base = _branches(tmp_path)
    for index, record in enumerate(records):
        assert record.worktree is not None
        (record.worktree / "big.txt").write_text(f"line {index}\n" * 5000)
    fake_anthropic.reply_tool({"verdict": "branch_1", "confidence": 0.9, "reason": "ok"})
    assert judge_best(records, base, tmp_path, QUESTION, LLMConfig()).picked == records[0]
    asked = fake_anthropic.requests[0].body["messages"][0]["content"]
    assert "(Output truncated" not in asked  # nothing of it was cut by the judge's own limit
    assert asked.count("[cut]") == 2  # each branch's diff cut to fit, its name kept
    assert '<branch name="branch_1"' in asked
    assert '<branch name="branch_2"' in asked
    many = [records[0]] * (MAX_JUDGED + 1)
    refused = judge_best(many, base, tmp_path, QUESTION, LLMConfig())
    assert refused.picked is None
    assert refused.reason == f"the judge compares at most {MAX_JUDGED} branches, 23 succeeded"
    assert len(fake_anthropic.requests) == 1
