"""A run's fan-out branches read back from its events and saved state (fsm/runs/fanned.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from little_loops.fsm.engine.kinds.fanout import PROGRESS_KEY
from little_loops.fsm.runs.fanned import BranchView, from_captured, from_events, pick, read_runs
from little_loops.fsm.runs.state import LoopState


def start(index: int, key: str, item: str = "", **more: Any) -> dict[str, Any]:
    return {"event": "branch_start", "state": "fan", "index": index, "key": key, "item": item,
            "loop": "fix", "branch": f"ll/fix/{key[-4:]}", "ts": "t0", **more}  # fmt: skip


def finish(index: int, key: str, verdict: str, **more: Any) -> dict[str, Any]:
    ended = {"verdict": verdict, "outcome": "terminal", "cost_usd": 0.25, "ts": "t1"}
    return {"event": "branch_finish", "state": "fan", "index": index, "key": key, **ended, **more}


EVENTS = [
    start(0, "fix@aaaa", "parser"),
    start(1, "fix@bbbb", "lexer"),
    finish(1, "fix@bbbb", "failure"),
    finish(0, "fix@aaaa", "success"),
    {
        "event": "fanout_merge",
        "state": "fan",
        "merged": ["fix@aaaa"],
        "refused": [{"key": "fix@bbbb", "reason": "conflict in a.txt"}],
    },  # fmt: skip
]


def test_branches_are_read_from_the_events_in_start_order_with_how_they_ended() -> None:
    views = from_events(EVENTS)
    assert [(v.index, v.item, v.verdict, v.merged) for v in views] == [
        (0, "parser", "success", "merged"),
        (1, "lexer", "failure", "refused: conflict in a.txt"),
    ]
    assert views[0].cost_usd == 0.25
    assert (views[0].started_at, views[0].finished_at) == ("t0", "t1")
    assert views[0].label == "#0 parser"
    assert views[0].standing == "success"


def test_a_branch_under_way_stands_where_its_run_is() -> None:
    view = BranchView("fan", 0, "", "fix", "fix@aaaa", "", "")
    assert (view.label, view.standing) == ("#0", "starting")
    view.status, view.at = "running", "work"
    assert view.standing == "running at work"


def test_planted_events_are_data_a_bad_key_or_index_or_the_run_itself_is_left_out() -> None:
    planted = [
        start(0, "../../etc/passwd"),
        start(True, "fix@cccc"),  # type: ignore[arg-type]
        start(2, "fan"),
        start(3, "fix@dddd", item={"not": "text"}),
        finish(3, "fix@dddd", ["no"]),
        {"event": "fanout_merge", "merged": "fix@dddd", "refused": [None, 3]},
    ]
    views = from_events(planted, own="fan")
    assert [(v.index, v.key, v.item, v.verdict, v.merged) for v in views] == [
        (3, "fix@dddd", "", "", "")
    ]


def test_the_saved_state_gives_the_branches_under_way_and_once_ended() -> None:
    running = {"fan": {PROGRESS_KEY: {"visit": 1, "events": EVENTS[:2]}}, "other": {"output": "x"}}
    assert [(v.key, v.verdict) for v in from_captured(running)] == [
        ("fix@aaaa", ""),
        ("fix@bbbb", ""),
    ]
    ended = {
        "fan": {
            "verdict": "failure",
            "stopped_by": "",
            "branches": [
                {
                    "index": 0,
                    "key": "fix@aaaa",
                    "item": "parser",
                    "verdict": "success",
                    "merged": "merged",
                    "cost_usd": 0.5,
                },  # fmt: skip
                "not a branch",
            ],
        },
        "capture": {"branches": [{"index": 0, "key": "x@y"}]},  # no `stopped_by`: a capture
    }
    views = from_captured(ended)
    assert [(v.state, v.key, v.verdict, v.merged, v.cost_usd) for v in views] == [
        ("fan", "fix@aaaa", "success", "merged", 0.5)
    ]


def test_a_branch_is_picked_by_index_item_key_id_or_git_branch_the_latest_first() -> None:
    views = from_events([*EVENTS, start(0, "fix@eeee", "parser")])  # the state ran again
    for wanted in ("0", "parser", "fix@eeee", "eeee", "ll/fix/eeee"):
        found = pick(views, wanted)
        assert found is not None
        assert found.key == "fix@eeee"
    assert pick(views, "fix@aaaa") is views[0]
    assert pick(views, "") is None
    assert pick(views, "nope") is None


def test_each_branch_runs_state_is_read_and_a_gone_process_is_crashed(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    running = loops / ".running"
    running.mkdir(parents=True)
    state = LoopState("fix", "work", status="running", pid=2**22 + 1, iteration=2)
    state.run_id, state.cost_usd = "aaaa", 0.75
    state.worktree = {"path": str(tmp_path / "wt"), "branch": "ll/fix/aaaa"}
    data = state.to_dict()
    (running / "fix@aaaa.state.json").write_text(json.dumps(data))
    (running / "fix@bbbb.state.json").write_text("{ not json")
    views = read_runs(from_events(EVENTS[:2]), loops)
    assert [(v.status, v.at, v.iteration, v.cost_usd) for v in views] == [
        ("crashed", "work", 2, 0.75),
        ("", "", 0, 0.0),  # unreadable: what the parent recorded stays
    ]


def test_outside_a_repository_branches_of_one_loop_share_its_key_and_are_all_listed() -> None:
    shared = [
        start(0, "fix", "a"),
        finish(0, "fix", "success"),
        start(1, "fix", "b"),
        finish(1, "fix", "failure"),
        start(2, "fix", "c"),
    ]
    views = from_events(shared)
    assert [(v.index, v.item, v.verdict) for v in views] == [
        (0, "a", "success"),
        (1, "b", "failure"),
        (2, "c", ""),  # each end is the latest start's of its key
    ]
