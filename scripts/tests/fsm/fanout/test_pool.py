"""The fan-out pool (fsm/fanout/pool.py): real `ll-loop run` children in real git worktrees,
at most `max_concurrency` at a time, every child's process tree ended when it stops early."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from support import fanout
from support.gitrepo import branches, git
from support.llproc import wait_for
from support.slowdown import scaled

from little_loops.fsm.processes.pids import pid_alive


def _spans(seen: list[dict[str, object]]) -> list[tuple[float, float]]:
    started = {e["index"]: e["ts"] for e in seen if e["event"] == "branch_start"}
    ended = {e["index"]: e["ts"] for e in seen if e["event"] == "branch_finish"}
    return [(float(started[i]), float(ended[i])) for i in started]  # type: ignore[arg-type]


def test_a_six_item_map_runs_two_at_a_time_and_merges_the_green_ones(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    data = fanout.plan_data(list("abcdef"), max_concurrency=2, merge="green")
    ending, seen = fanout.run_in_process(root, data)

    by_item = {r.branch.item: r for r in ending.records}
    assert [by_item[i].verdict for i in "abcdef"] == ["success"] * 4 + ["failure", "success"]
    # Never more than two children at once, by the parent's events and by each child's own
    # log (its loop_start to its loop_complete); and two did run at once.
    assert fanout.most_at_once(_spans(seen)) == 2
    child_spans = []
    for record in ending.records:
        events = fanout.child_events(root, record.key)
        assert events[0]["event"] == "loop_start"
        assert events[-1]["event"] == "loop_complete"
        child_spans.append((fanout.stamp(events[0]["ts"]), fanout.stamp(events[-1]["ts"])))
    assert fanout.most_at_once(child_spans) <= 2
    # Each branch ran in its own worktree on its own branch.
    assert len({r.worktree for r in ending.records}) == 6
    assert all(r.git_branch == f"ll/fix/{r.run_id}" for r in ending.records)

    # The four green branches that merge cleanly are merged; `d` conflicts with `c` on
    # shared.txt: reported, undone, its work kept on its branch; `e` failed: not merged.
    assert ending.merged == tuple(by_item[i].key for i in "abcf")
    assert [key for key, _ in ending.refused] == [by_item["d"].key]
    assert "conflicts in shared.txt" in ending.refused[0][1]
    assert (root / "shared.txt").read_text() == "c\n"
    assert sorted(p.name for p in root.glob("item-*.txt")) == [
        "item-a.txt",
        "item-b.txt",
        "item-f.txt",
    ]
    assert git(root, "status", "--porcelain") == ""
    assert not (root / ".git" / "MERGE_HEAD").exists()
    kept = by_item["d"].git_branch
    assert kept in branches(root)
    assert git(root, "show", f"{kept}:shared.txt") == "d\n"
    assert by_item["e"].key not in ending.merged  # a failed branch is not merged
    assert not (root / "item-e.txt").exists()
    names = [e["event"] for e in seen]
    assert names.count("branch_start") == names.count("branch_finish") == 6
    assert names[-2:] == ["fanout_join", "fanout_merge"]
    finish = next(e for e in seen if e["event"] == "branch_finish" and e["index"] == 4)
    assert finish["verdict"] == "failure"
    assert finish["outcome"] == "terminal_failure"
    assert finish["branch"] == by_item["e"].git_branch
    assert finish["worktree"]


def test_join_any_stops_the_losers_process_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fanout.project(tmp_path)
    pids = tmp_path / "pids"
    monkeypatch.setenv("LL_TEST_PIDS", str(pids))
    # The winner waits until both losers' sleepers run, so that there is something to stop.
    wait = f"while [ $(ls {pids} 2>/dev/null | wc -l) -lt 2 ]; do sleep 0.05; done"
    monkeypatch.setenv("LL_TEST_WAIT", wait)
    data = fanout.plan_data(["slow1", "slow2", "a"], join="any", grace_s=scaled(10))
    ending, _ = fanout.run_in_process(root, data)
    verdicts = {r.branch.item: r.verdict for r in ending.records}
    assert verdicts == {"slow1": "stopped", "slow2": "stopped", "a": "success"}
    assert ending.verdict == "success"
    assert ending.stopped_by == "any"
    sleepers = [int((pids / name).read_text()) for name in ("slow1", "slow2")]
    assert not any(pid_alive(pid) for pid in sleepers)


def test_ctrl_c_ends_every_branch_and_leaves_them_to_resume(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    pids, events = tmp_path / "pids", tmp_path / "events.jsonl"
    data = fanout.plan_data(["slow1", "slow2"])
    driver = fanout.start_driver(root, data, events, LL_TEST_PIDS=str(pids))
    try:
        wait_for(lambda: len(list(pids.glob("*"))) == 2, scaled(60), "both sleepers")
        sleepers = [int(p.read_text()) for p in pids.iterdir()]
        os.killpg(driver.pid, signal.SIGINT)
        driver.wait(timeout=scaled(60))
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode != 0
    assert not any(pid_alive(pid) for pid in sleepers)
    names = [e["event"] for e in fanout.read_events(events)]
    assert names == ["branch_start", "branch_start"]  # not ended: a resume resumes them


def test_outside_a_repository_branches_of_one_loop_run_one_at_a_time(tmp_path: Path) -> None:
    root = fanout.project(tmp_path, git=False)
    ending, seen = fanout.run_in_process(root, fanout.plan_data(["a", "b"], max_concurrency=2))
    assert [r.verdict for r in ending.records] == ["success", "success"]
    assert all(r.worktree is None and r.git_branch is None for r in ending.records)
    assert fanout.most_at_once(_spans(seen)) == 1
    assert (root / "item-a.txt").exists()
    assert (root / "item-b.txt").exists()


def test_a_branch_that_cannot_start_fails_in_one_line(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    running = root / ".loops" / ".running"
    running.write_text("not a folder\n")  # where the children's logs go
    ending, seen = fanout.run_in_process(root, fanout.plan_data(["a"]))
    (record,) = ending.records
    assert record.verdict == "failure"
    assert record.outcome is not None
    assert record.outcome.startswith("not started: ")
    assert [e["event"] for e in seen] == ["branch_start", "branch_finish", "fanout_join"]
    assert running.read_text() == "not a folder\n"


def test_an_item_no_command_line_can_carry_fails_its_branch_only(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    ending, _ = fanout.run_in_process(root, fanout.plan_data(["a\x00b", "a"]))
    bad, good = ending.records
    assert bad.verdict == "failure"
    assert bad.outcome == "not started: embedded null byte"
    assert good.verdict == "success"
