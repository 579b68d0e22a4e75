"""Joining a fan-out (fsm/fanout/join.py): `all`, `any`, and `best` by a score command run
in each successful branch's worktree, whatever that command prints or does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.fanout.branches import Branch, BranchRecord
from little_loops.fsm.fanout.join import join, run_score


def _record(tmp_path: Path, index: int, verdict: str, score: str | None = None) -> BranchRecord:
    tree = tmp_path / f"tree{index}"
    tree.mkdir()
    if score is not None:
        (tree / "score.txt").write_text(score)
    record = BranchRecord(Branch(index, "fix"), f"id{index:02d}", f"fix@id{index:02d}", None, tree)
    record.verdict = verdict
    return record


def test_all_needs_every_branch_and_any_one(tmp_path: Path) -> None:
    records = [_record(tmp_path, 0, "success"), _record(tmp_path, 1, "failure")]
    assert join("all", records, None, tmp_path).verdict == "failure"
    assert join("all", records[:1], None, tmp_path).verdict == "success"
    assert join("all", [], None, tmp_path).verdict == "success"  # nothing left to do
    assert join("any", [], None, tmp_path).verdict == "failure"
    anyone = join("any", records, None, tmp_path)
    assert anyone.verdict == "success"
    assert anyone.picked == (records[0],)
    assert join("any", records[1:], None, tmp_path).verdict == "failure"


def test_best_picks_the_highest_score_of_the_successful_branches(tmp_path: Path) -> None:
    records = [
        _record(tmp_path, 0, "success", "score 3\n"),
        _record(tmp_path, 1, "success", "7.5"),
        _record(tmp_path, 2, "failure", "99"),  # failed: not scored
        _record(tmp_path, 3, "success", "no number"),
    ]
    joined = join("best", records, "cat score.txt", tmp_path)
    assert joined.verdict == "success"
    assert joined.picked == (records[1],)
    assert [r.score for r in records] == [3.0, 7.5, None, None]
    assert join("best", records[3:], "cat score.txt", tmp_path).verdict == "failure"


def test_a_tie_goes_to_the_first_branch_and_says_so(tmp_path: Path) -> None:
    records = [_record(tmp_path, 0, "success", "5"), _record(tmp_path, 1, "success", "5")]
    joined = join("best", records, "cat score.txt", tmp_path)
    assert joined.picked == (records[0],)
    assert joined.reason == "score 5, tied with fix@id01: the first wins"
    records.append(_record(tmp_path, 2, "success", "6"))
    assert join("best", records, "cat score.txt", tmp_path).reason == "score 6"


def test_a_score_reads_its_values_from_the_environment_as_data(tmp_path: Path) -> None:
    records = [_record(tmp_path, 0, "success", "x; touch pwned\n1 2 3\n")]
    env = {"LL_V_1": "x; touch pwned"}
    joined = join("best", records, 'grep -c -F -- "${LL_V_1}" score.txt', tmp_path, score_env=env)
    assert records[0].score == 1.0
    assert joined.picked == (records[0],)
    assert not (tmp_path / "tree0" / "pwned").exists()


@pytest.mark.parametrize(
    "command",
    ["exit 3", "echo nan", "echo 1e999", "printf '\\x00\\xff'", "echo 5; exit 1", "rm -rf nothing"],
)
def test_a_score_that_fails_or_is_no_finite_number_is_none(tmp_path: Path, command: str) -> None:
    assert run_score(command, tmp_path) is None


def test_a_score_that_runs_too_long_is_none_and_its_group_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    # Long enough for bash to start and write the pid on a loaded machine.
    assert run_score(command, tmp_path, timeout=scaled(3)) is None
    from little_loops.fsm.processes.pids import pid_alive

    pid = int(pid_file.read_text())
    deadline = time.monotonic() + scaled(10)  # ended; reaped by init once its shell is gone
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"the score's sleep {pid} outlived its timeout"
        time.sleep(0.05)


def test_a_missing_worktree_scores_none(tmp_path: Path) -> None:
    assert run_score("echo 1", tmp_path / "gone") is None


def test_an_unknown_join_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not one of all, any, best"):
        join("most", [], None, tmp_path)
