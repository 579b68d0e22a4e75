"""A fan-out from start to merge (fsm/fanout/drive.py), and resumed after a kill -9 at each
of its event writes: the same branches end, none runs again, the same merge."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from support import fanout
from support.gitrepo import git
from support.llproc import wait_for
from support.slowdown import scaled

from little_loops.fsm.fanout.branches import Branch
from little_loops.fsm.fanout.drive import prior_records

ITEMS = ["a", "b", "f"]
WRITES = 8  # 3 branch_start, 3 branch_finish, fanout_join, fanout_merge


def _drive(root: Path, events: Path, runs: Path, **env: str) -> tuple[int, str]:
    data = fanout.plan_data(ITEMS, max_concurrency=2, merge="green")
    driver = fanout.start_driver(root, data, events, LL_TEST_RUNS=str(runs), **env)
    try:
        out, err = driver.communicate(timeout=scaled(120))
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    return driver.returncode, out


def _item_of(events: list[dict[str, Any]]) -> dict[str, str]:
    return {e["key"]: e["item"] for e in events if e["event"] == "branch_start"}


def test_an_uninterrupted_run_writes_each_event_once(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    events, runs = tmp_path / "events.jsonl", tmp_path / "runs"
    code, out = _drive(root, events, runs)
    assert code == 0
    written = fanout.read_events(events)
    assert len(written) == WRITES
    ending = json.loads(out)
    assert ending["verdict"] == "success"
    assert sorted(_item_of(written)[key] for key in ending["merged"]) == ITEMS


@pytest.mark.parametrize("kill_at", range(1, WRITES + 1))
def test_kill_9_at_an_event_write_then_resume(tmp_path: Path, kill_at: int) -> None:
    root = fanout.project(tmp_path)
    events, runs = tmp_path / "events.jsonl", tmp_path / "runs"
    code, _ = _drive(root, events, runs, **{fanout.KILL_AT: str(kill_at)})
    assert code == -signal.SIGKILL
    assert len(fanout.read_events(events)) == kill_at

    code, out = _drive(root, events, runs)  # the resume
    assert code == 0
    ending, written = json.loads(out), fanout.read_events(events)
    # Each item's action ran once: no branch ran again, none was lost.
    assert sorted(runs.read_text().split()) == ITEMS
    finishes = [e["index"] for e in written if e["event"] == "branch_finish"]
    assert sorted(finishes) == [0, 1, 2]
    assert [e["event"] for e in written].count("fanout_merge") == 1
    assert ending["verdict"] == "success"
    assert sorted(_item_of(written)[key] for key in ending["merged"]) == ITEMS
    assert sorted(p.name for p in root.glob("item-*.txt")) == [f"item-{i}.txt" for i in ITEMS]
    assert git(root, "status", "--porcelain") == ""
    wait_for(lambda: not fanout.processes_in(root), scaled(10), "no process left in the project")


def test_a_stopped_fan_out_resumes_its_branches_from_their_own_logs(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    events, runs, pids = tmp_path / "events.jsonl", tmp_path / "runs", tmp_path / "pids"
    data = fanout.plan_data(["slow1", "a"], max_concurrency=2)
    driver = fanout.start_driver(root, data, events, LL_TEST_PIDS=str(pids), LL_TEST_RUNS=str(runs))
    try:
        wait_for(lambda: (pids / "slow1").exists(), scaled(60), "the sleeper")
        wait_for(
            lambda: any(e["event"] == "branch_finish" for e in fanout.read_events(events)),
            scaled(60),
            "the quick branch's end",
        )
        os.killpg(driver.pid, signal.SIGTERM)  # a stop: the driver's should_stop says so
        out, _ = driver.communicate(timeout=scaled(60))
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert json.loads(out)["stopped_by"] == "stopped"
    slow = next(e for e in fanout.read_events(events) if e["item"] == "slow1")
    state = json.loads((root / ".loops" / ".running" / f"{slow['key']}.state.json").read_text())
    assert state["status"] in ("stopped", "interrupted")
    # The resume goes on with slow1's own run (`ll-loop resume`), and never runs `a` again.
    (root / ".loops" / "fix.yaml").write_text(fanout.CHILD.replace("sleep 300 &", "true &"))
    git(root, "commit", "-qam", "no more sleeping")
    code, out = _drive_plan(root, data, events, runs)
    assert code == 0
    assert runs.read_text().split().count("a") == 1
    assert [e["index"] for e in fanout.read_events(events) if e["event"] == "branch_start"] == [
        0,
        1,
    ]
    assert json.loads(out)["verdict"] == "success"


def _drive_plan(root: Path, data: dict[str, Any], events: Path, runs: Path) -> tuple[int, str]:
    driver = fanout.start_driver(root, data, events, LL_TEST_RUNS=str(runs))
    out, err = driver.communicate(timeout=scaled(120))
    assert "Traceback" not in err, err
    return driver.returncode, out


def test_prior_records_take_the_events_as_written_and_skip_strangers(tmp_path: Path) -> None:
    branches = [Branch(0, "fix", {}, "a"), Branch(1, "fix", {}, "b")]
    events: list[dict[str, Any]] = [
        {"event": "branch_start", "index": 0, "key": "fix@aaaa", "run_id": "aaaa",
         "branch": "ll/fix/aaaa", "worktree": "/w/fix@aaaa", "base": "abc"},
        {"event": "branch_start", "index": 7, "key": "fix@zzzz"},  # no such branch
        {"event": "branch_finish", "index": 1, "verdict": "success"},  # never started
        {"event": "branch_finish", "index": 0, "verdict": "failure", "outcome": "error",
         "cost_usd": "lots", "exit_code": 1},
        {"event": "route", "index": "0"},
    ]  # fmt: skip
    records, base = prior_records(events, branches, tmp_path)
    assert base == "abc"
    assert list(records) == [0]
    record = records[0]
    assert (record.key, record.git_branch, record.verdict) == ("fix@aaaa", "ll/fix/aaaa", "failure")
    assert record.cost_usd == 0.0
    assert record.exit_code == 1


def test_a_branch_still_running_after_a_kill_is_waited_for_not_run_again(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    events, runs, go = tmp_path / "events.jsonl", tmp_path / "runs", tmp_path / "go"
    env = {"LL_TEST_RUNS": str(runs), "LL_TEST_WAIT": f"while [ ! -f {go} ]; do sleep 0.05; done"}
    data = fanout.plan_data(["a"], merge="green")
    first = fanout.start_driver(root, data, events, **env)
    try:
        wait_for(lambda: runs.exists() and runs.read_text() == "a\n", scaled(60), "a's action")
        os.kill(first.pid, signal.SIGKILL)  # the parent only: its child runs on
        first.wait(timeout=scaled(10))
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    (key,) = [e["key"] for e in fanout.read_events(events)]
    running = fanout.processes_in(root)
    assert running  # the child, still waiting for `go`
    second = fanout.start_driver(root, data, events, **env)
    try:
        wait_for(lambda: second.poll() is None, scaled(5), "the resume")
        go.write_text("")
        out, err = second.communicate(timeout=scaled(120))
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    assert runs.read_text() == "a\n"  # waited for, never started again
    ending = json.loads(out)
    assert ending["merged"] == [key]
    assert [e["event"] for e in fanout.read_events(events)].count("branch_start") == 1
    assert (root / "item-a.txt").read_text() == "a\n"
