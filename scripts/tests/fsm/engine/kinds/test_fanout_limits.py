"""The limits across a fan-out's branches, in real `ll-loop` runs whose children leave
process trees behind them (a background `sleep`, one in a session of its own, one orphaned):
`join: any`, `ll-loop stop`, Ctrl-C at the terminal, the state's `timeout:` and its own
`max_cost_usd` each end every branch's whole tree, and a stopped run resumes cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest
from support import fanout
from support.llproc import events, finish, ll_loop, start, state, wait_for
from support.slowdown import scaled

from little_loops.fsm.processes.pids import pid_alive

# Item `slow*` leaves three sleepers (their pids in $LL_TEST_PIDS/ITEM once all three run)
# and waits; with $LL_TEST_QUICK set it does not. Every other item waits for $LL_TEST_WAIT
# (if set) and writes its file. Each run of the action is told in $LL_TEST_RUNS.
HOLD = """\
name: hold
context:
  item: ""
initial: work
states:
  work:
    action: |
      echo ${context.item} >> "$LL_TEST_RUNS"
      case ${context.item}$LL_TEST_QUICK in
        slow?)
          d=$LL_TEST_PIDS; mkdir -p "$d"
          sleep 300 & a=$!
          setsid sleep 301 & b=$!
          ( setsid sleep 302 & echo $! > "$d/.${context.item}.orphan" )
          echo "$a $b $(cat "$d/.${context.item}.orphan")" > "$d/.${context.item}"
          mv "$d/.${context.item}" "$d/${context.item}"
          wait ;;
        *) eval "$LL_TEST_WAIT"; echo ${context.item} > item-${context.item}.txt ;;
      esac
    timeout: 600
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""


def _project(tmp_path: Path, items: list[str], **options: object) -> tuple[Path, dict[str, str]]:
    loop = fanout.map_loop(items, **options).replace("loop: fix", "loop: hold")
    root = fanout.project(tmp_path, fan=loop, hold=HOLD)
    env = {"LL_TEST_PIDS": str(tmp_path / "pids"), "LL_TEST_RUNS": str(tmp_path / "runs")}
    return root, env


def _sleepers(tmp_path: Path, *items: str) -> list[int]:
    pids = tmp_path / "pids"
    return [int(p) for item in items for p in (pids / item).read_text().split()]


def _gone(root: Path, sleepers: list[int]) -> None:
    """No sleeper lives, and no process at all works in the project or its worktrees (any
    found are ended after the look: a failing test leaves nothing behind)."""
    alive = [pid for pid in sleepers if pid_alive(pid)]
    left = fanout.processes_in(root)
    for pid in {*alive, *left}:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert alive == []
    assert left == []


def _ended(root: Path) -> list[str]:
    """The items of the branches the run's log says ended so far (a line cut short left out)."""
    path = root / ".loops" / ".running" / "fan.events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    found = [json.loads(line) for line in lines if line.endswith("}")]
    return [str(e["item"]) for e in found if e["event"] == "branch_finish"]


def _runs(tmp_path: Path) -> list[str]:
    return sorted((tmp_path / "runs").read_text().split())


def test_join_any_ends_the_losers_whole_process_trees(tmp_path: Path) -> None:
    root, env = _project(tmp_path, ["slow1", "slow2", "a"], join="any")
    pids = tmp_path / "pids"
    # The winner waits until both losers' sleepers run, so that there is something to end.
    env["LL_TEST_WAIT"] = f"while [ $(ls {pids} 2>/dev/null | wc -l) -lt 2 ]; do sleep 0.05; done"
    done = ll_loop(root, "run", "fan", timeout=180, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    result = state(root, "fan")["captured"]["fan"]
    assert result["verdict"] == "success"
    assert result["stopped_by"] == "any"
    verdicts = {b["item"]: b["verdict"] for b in result["branches"]}
    assert verdicts == {"slow1": "stopped", "slow2": "stopped", "a": "success"}
    _gone(root, _sleepers(tmp_path, "slow1", "slow2"))


@pytest.mark.parametrize("how", ["ll-loop stop", "Ctrl-C"])
def test_a_stop_ends_every_branch_tree_and_the_run_resumes_cleanly(
    tmp_path: Path, how: str
) -> None:
    root, env = _project(tmp_path, ["slow1", "slow2", "a"])
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: len(list((tmp_path / "pids").glob("slow?"))) == 2, 60, "the sleepers")
        wait_for(lambda: "a" in _ended(root), 60, "the quick branch's end")
        sleepers = _sleepers(tmp_path, "slow1", "slow2")
        if how == "Ctrl-C":  # a terminal sends it to the foreground process group
            os.killpg(proc.pid, signal.SIGINT)
        else:
            stopped = ll_loop(root, "stop", "fan", timeout=60)
            assert stopped.returncode == 0, stopped.stderr
        finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == (130 if how == "Ctrl-C" else 143), proc.returncode
    assert state(root, "fan")["status"] == ("interrupted" if how == "Ctrl-C" else "stopped")
    _gone(root, sleepers)
    # The slow branches did not end: each is resumed from its own log (its action again).
    assert _ended(root) == ["a"]
    resumed = ll_loop(
        root, "resume", "fan", timeout=180, env={**os.environ, **env, "LL_TEST_QUICK": "1"}
    )
    assert resumed.returncode == 0, resumed.stderr
    result = state(root, "fan")["captured"]["fan"]
    assert result["verdict"] == "success"
    assert sorted(b["item"] for b in result["branches"]) == ["a", "slow1", "slow2"]
    starts = [e for e in events(root, "fan") if e["event"] == "branch_start"]
    assert sorted(e["item"] for e in starts) == ["a", "slow1", "slow2"]  # none started twice
    ran = _runs(tmp_path)
    assert ran.count("a") == 1
    assert ran.count("slow1") == ran.count("slow2") == 2  # cut, then run again on resume
    assert sorted(p.name for p in root.glob("item-*.txt")) == []  # merge: none
    assert fanout.processes_in(root) == []


def test_the_states_timeout_ends_every_branch_tree(tmp_path: Path) -> None:
    root, env = _project(tmp_path, ["slow1", "slow2"])
    limit = round(scaled(8))
    loop = (root / ".loops" / "fan.yaml").read_text()
    (root / ".loops" / "fan.yaml").write_text(
        loop.replace("    on_success: done\n", f"    timeout: {limit}\n    on_success: done\n", 1)
    )
    began = time.monotonic()
    done = ll_loop(root, "run", "fan", timeout=180, env={**os.environ, **env})
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr  # the verdict `failure` routes to `done`
    result = state(root, "fan")["captured"]["fan"]
    assert result["stopped_by"] == "timeout"
    assert result["verdict"] == "failure"
    assert [b["verdict"] for b in result["branches"]] == ["stopped", "stopped"]
    assert took < limit + scaled(60)  # not the sleepers' 300 s
    _gone(root, _sleepers(tmp_path, "slow1", "slow2"))


# An agent that costs $0.25 a call and leaves a sleeper behind each call (its pid told).
def test_the_states_own_budget_is_shared_and_stops_every_branch(tmp_path: Path) -> None:
    loop = fanout.map_loop(["1", "2", "3"], max_cost_usd=1.5).replace("loop: fix", "loop: spend")
    root = fanout.spender_project(
        tmp_path, loop, '( setsid sleep 300 & echo $! >> "$LL_TEST_PIDS/sleepers" )'
    )
    pids = tmp_path / "pids"
    pids.mkdir()
    done = ll_loop(root, "run", "fan", timeout=180, env={**os.environ, "LL_TEST_PIDS": str(pids)})
    assert done.returncode == 0, done.stderr  # the state's budget: its verdict routes on
    saved = state(root, "fan")
    result = saved["captured"]["fan"]
    assert result["stopped_by"] == "budget"
    assert result["verdict"] == "failure"
    assert [b["verdict"] for b in result["branches"]] == ["stopped"] * 3
    # Stopped once the three together reached $1.50: no branch ran on to its own $10; what
    # ran past the line is at most the calls already under way (one a branch, twice over).
    assert 1.5 <= result["cost_usd"] < 1.5 + 3 * 0.25 * 2
    assert sum(b["cost_usd"] for b in result["branches"]) == pytest.approx(result["cost_usd"])
    assert saved["cost_usd"] == pytest.approx(result["cost_usd"])
    _gone(root, [int(p) for p in (pids / "sleepers").read_text().split()])
