"""A fan-out seen from the commands about a run: `status`, `logs --branch`, `history`,
`report` (text, JSON, HTML lanes), with real git and real child `ll-loop` processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support import browser, fanout, forkserver, llproc
from support.png import bars
from support.png import pixels as png_pixels
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

# Item `e` fails; `a` and `b` succeed and are merged; each child prints its item.
ECHO_CHILD = fanout.CHILD.replace(
    "sleep 0.4\n", "sleep 0.4\n      echo working on ${context.item}\n"
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose loop `fan` mapped a, b, e over `fix` (2 at once, green merged)."""
    tmp = tmp_path_factory.mktemp("fanview")
    fan = fanout.map_loop(["a", "b", "e"], max_concurrency=2, merge="green")
    root = fanout.project(tmp, fan=fan, fix=ECHO_CHILD)
    done = forkserver.ll_loop(root, "run", "fan", timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    return root


def branches_json(root: Path) -> list[dict[str, Any]]:
    shown = forkserver.ll_loop(root, "status", "fan", "--json")
    assert shown.returncode == ExitCode.OK, shown.stderr
    return json.loads(shown.stdout)["branches"]


def test_status_lists_each_branch_with_item_verdict_cost_branch_and_worktree(ran: Path) -> None:
    shown = forkserver.ll_loop(ran, "status", "fan")
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert "branches:     3 (ll-loop logs fan --branch N)" in shown.stdout
    lines = [line.strip() for line in shown.stdout.splitlines() if line.startswith("  fan #")]
    assert len(lines) == 3, shown.stdout
    keys = {b["item"]: b["key"] for b in branches_json(ran)}
    for line, item in zip(lines, "abe", strict=True):
        key = keys[item]
        run_id = key.split("@")[1]
        verdict = "failure (terminal_failure)" if item == "e" else "success (terminal, merged)"
        assert line == (
            f"fan #{'abe'.index(item)} {item}: {verdict} · {key} · branch ll/fix/{run_id}"
            f" · worktree .loops/.worktrees/{key} · $0.0000"
        )


def test_status_json_carries_the_branches_and_where_each_own_run_ended(ran: Path) -> None:
    found = branches_json(ran)
    assert [(b["index"], b["item"], b["verdict"]) for b in found] == [
        (0, "a", "success"),
        (1, "b", "success"),
        (2, "e", "failure"),
    ]
    for b in found:
        assert b["state"] == "fan"
        assert b["loop"] == "fix"
        assert b["cost_usd"] == 0.0
        assert b["branch"] == "ll/fix/" + b["key"].split("@")[1]
        assert b["worktree"] == str(ran / ".loops" / ".worktrees" / b["key"])
        assert b["status"] == ("failed" if b["item"] == "e" else "completed")
        assert b["at"] == ("failed" if b["item"] == "e" else "done")
    assert [b["merged"] for b in found] == ["merged", "merged", ""]


def test_status_json_of_a_run_without_a_fan_out_has_no_branches(tmp_path: Path) -> None:
    root = fanout.project(tmp_path, git=False)
    assert forkserver.ll_loop(root, "run", "fix", "--set", "item=a").returncode == ExitCode.OK
    shown = forkserver.ll_loop(root, "status", "fix", "--json")
    assert "branches" not in json.loads(shown.stdout)
    assert "branches:" not in forkserver.ll_loop(root, "status", "fix").stdout


@pytest.mark.parametrize("how", ["index", "item", "key", "run_id", "git_branch"])
def test_logs_branch_shows_that_branchs_own_step_output(ran: Path, how: str) -> None:
    b = next(x for x in branches_json(ran) if x["item"] == "b")
    wanted = {
        "index": "1",
        "item": "b",
        "key": b["key"],
        "run_id": b["key"].split("@")[1],
        "git_branch": b["branch"],
    }[how]
    shown = forkserver.ll_loop(ran, "logs", "fan", "--branch", wanted)
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert shown.stdout.splitlines() == [
        f"==> .loops/.running/{b['key']}.work.out (state work, shell action) <==",
        "working on b",
    ]
    of_state = forkserver.ll_loop(ran, "logs", "fan", "work", "--branch", wanted)
    assert of_state.stdout == shown.stdout


@pytest.mark.parametrize("wanted", ["7", "zz", "\x1b[31mred"])
def test_logs_of_a_branch_that_is_not_there_lists_the_branches_in_one_line(
    ran: Path, wanted: str
) -> None:
    keys = [b["key"] for b in branches_json(ran)]
    shown = forkserver.ll_loop(ran, "logs", "fan", "--branch", wanted)
    assert shown.returncode == ExitCode.FAILED
    assert shown.stdout == ""
    assert "\x1b" not in shown.stderr
    assert "Traceback" not in shown.stderr
    assert shown.stderr.count("\n") == 1, shown.stderr
    said = f"its branches: 0 a ({keys[0]}), 1 b ({keys[1]}), 2 e ({keys[2]})"
    assert "has no branch" in shown.stderr
    assert said in shown.stderr


def test_logs_branch_of_a_run_that_ran_no_fan_out_says_so(ran: Path) -> None:
    key = branches_json(ran)[0]["key"]
    shown = forkserver.ll_loop(ran, "logs", key, "--branch", "0")
    assert shown.returncode == ExitCode.FAILED
    assert shown.stderr.strip() == (
        f"ll-loop: error: run '{key}' has no branch '0'; it ran no fan-out state"
    )


def test_history_shows_each_branchs_steps_under_its_end_and_the_join_and_merge(ran: Path) -> None:
    shown = forkserver.ll_loop(ran, "history", "fan")
    assert shown.returncode == ExitCode.OK, shown.stderr
    text = re.sub(r"\S+T\S+ ", "", shown.stdout)  # the times
    keys = {b["item"]: b["key"] for b in branches_json(ran)}
    for item, key in keys.items():
        on = f"ll/fix/{key.split('@')[1]}"
        assert (
            f"fan ⇉ #{'abe'.index(item)} {item}: {key} on {on} (its steps: ll-loop history {key})"
            in text
        )
    e = keys["e"]
    ended = text.index(f"fan ⇇ #2 e: {e} failure (terminal_failure)\n")
    after = text[ended:].splitlines()[1:8]
    assert [line.split()[0] for line in after] == [
        "loop_start",
        "state_enter",
        "action_start",
        "action_complete",
        "evaluate",
        "route",
        "loop_complete",
    ]
    assert all(line.startswith("    ") for line in text[ended:].splitlines()[1:8])
    assert "route           work → failed (failure)" in after[5]
    assert f"fan join all → failure (picked: {keys['a']}, {keys['b']})" in text
    assert f"fan merge green: merged {keys['a']}, {keys['b']}" in text
    assert '"index"' not in text  # no raw event left


def test_history_json_is_the_events_as_written(ran: Path) -> None:
    shown = forkserver.ll_loop(ran, "history", "fan", "--json")
    events = json.loads(shown.stdout)
    assert [e["event"] for e in events].count("branch_start") == 3
    assert all(e.get("loop") != "fix" or e["event"].startswith("branch") for e in events)


def test_report_has_a_lane_per_branch_with_its_states_verdict_time_cost_and_branch(
    ran: Path,
) -> None:
    shown = forkserver.ll_loop(ran, "report", "fan")
    assert shown.returncode == ExitCode.OK, shown.stderr
    keys = {b["item"]: b["key"] for b in branches_json(ran)}
    table = shown.stdout[shown.stdout.index("FAN-OUT") :].splitlines()
    assert table[0].split() == [
        "FAN-OUT", "BRANCH", "VERDICT", "STATES", "TIME", "COST", "RUN", "GIT", "BRANCH",
    ]  # fmt: skip
    for line, item in zip(table[1:], "abe", strict=True):
        cells = re.sub(r"\d+ms|[\d.]+s", "T", line).split()
        verdict = ["failure"] if item == "e" else ["success,", "merged"]
        end = "failed" if item == "e" else "done"
        run_id = keys[item].split("@")[1]
        assert cells == [
            "fan", f"#{'abe'.index(item)}", item, *verdict, "work", "→", end, "T", "-",
            keys[item], f"ll/fix/{run_id}",
        ]  # fmt: skip


def test_report_json_carries_the_branches_with_the_states_each_went_through(ran: Path) -> None:
    shown = forkserver.ll_loop(ran, "report", "fan", "--json")
    found = json.loads(shown.stdout)["branches"]
    assert [(b["item"], b["verdict"], b["states"]) for b in found] == [
        ("a", "success", ["work", "done"]),
        ("b", "success", ["work", "done"]),
        ("e", "failure", ["work", "failed"]),
    ]
    assert all(b["duration_ms"] > 0 for b in found)
    # A run with no fan-out keeps the report it had: no `branches` key.
    key = found[0]["key"]
    assert "branches" not in json.loads(forkserver.ll_loop(ran, "report", key, "--json").stdout)


def test_the_html_report_draws_a_lane_per_branch_in_a_real_chromium(
    ran: Path, tmp_path: Path
) -> None:
    chromium = browser.chromium()
    page = tmp_path / "report.html"
    made = forkserver.ll_loop(ran, "report", "fan", "--html", str(page))
    assert made.returncode == ExitCode.OK, made.stderr
    loaded = browser.load(chromium, page)
    assert loaded.console == []
    keys = [b["key"] for b in branches_json(ran)]
    lanes = re.findall(r'<div class="lane-row (\w+)">(.*?)</div></div>', loaded.dom)
    assert [colour for colour, _ in lanes] == ["ok", "ok", "bad"]
    # The state graph marks the fan-out state with its number of branches.
    assert '<g class="node visited initial fanout"><title>fan: 1 visit(s)</title>' in loaded.dom
    assert 'class="visits">1× · ⇉ 3 branches</text>' in loaded.dom
    for (_, lane), key, item in zip(lanes, keys, "abe", strict=True):
        assert f"<b>fan #{'abe'.index(item)} {item}</b><span>{key}</span>" in lane
        assert '<span class="chip">work</span>' in lane
        assert f"ll/fix/{key.split('@')[1]}" in lane
    png = tmp_path / "report.png"
    browser.screenshot(chromium, page, png, height=1600)
    rows = png_pixels(png)
    green, red = bars(rows, (0x2F, 0x9E, 0x44), 5, 30), bars(rows, (0xE0, 0x31, 0x31), 5, 30)
    # Three lanes, their coloured edges one under another: two successes, then the failure.
    assert len(green) == 2, (green, red)
    assert len(red) == 1, (green, red)
    assert green[0] < green[1] < red[0]
    assert green[1] - green[0] == red[0] - green[1]  # lanes of one height, evenly spaced


def test_runs_json_carries_an_archived_fan_outs_branches(ran: Path) -> None:
    shown = forkserver.ll_loop(ran, "runs", "--json")
    assert shown.returncode == ExitCode.OK, shown.stderr
    found = json.loads(shown.stdout)
    (fan,) = [r for r in found if r["loop"] == "fan"]
    assert [(b["item"], b["verdict"], b["key"]) for b in fan["branches"]] == [
        (b["item"], b["verdict"], b["key"]) for b in branches_json(ran)
    ]
    assert all("branches" not in r for r in found if r["loop"] == "fix")


def test_after_a_kill_9_status_says_each_branch_crashed_and_after_resume_how_it_ended(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "b"]))
    go = tmp_path / "go"
    env = {"LL_TEST_WAIT": f"while [ ! -e {go} ]; do sleep 0.05; done"}
    running = llproc.start(root, "run", "fan", env=env)
    try:
        deadline = time.monotonic() + scaled(60)
        while [b.get("status") for b in _branches_now(root)] != ["running", "running"]:
            assert time.monotonic() < deadline, _branches_now(root)
            time.sleep(0.1)
    finally:  # the parent, its branches and their actions: killed, as by a crash
        for pid in fanout.processes_in(root):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        running.wait(timeout=scaled(30))
    assert [b["status"] for b in _branches_now(root)] == ["crashed", "crashed"]
    text = forkserver.ll_loop(root, "status", "fan").stdout
    assert "  fan #0 a: crashed at work (pass 1) · fix@" in text
    go.touch()
    resumed = forkserver.ll_loop(root, "resume", "fan", timeout=120, env={**os.environ, **env})
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert [(b["status"], b["verdict"]) for b in _branches_now(root)] == [
        ("completed", "success"),
        ("completed", "success"),
    ]


def _branches_now(root: Path) -> list[dict[str, Any]]:
    shown = forkserver.ll_loop(root, "status", "fan", "--json")
    return json.loads(shown.stdout).get("branches", []) if shown.returncode == 0 else []


def test_logs_branch_follow_prints_a_live_branchs_step_and_ends_with_it(tmp_path: Path) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "b"]), fix=ECHO_CHILD)
    go = tmp_path / "go"
    env = {"LL_TEST_WAIT": f"while [ ! -e {go} ]; do sleep 0.05; done; echo after the wait"}
    running = llproc.start(root, "run", "fan", env=env)
    try:
        deadline = time.monotonic() + scaled(60)
        while [b.get("status") for b in _branches_now(root)] != ["running", "running"]:
            assert time.monotonic() < deadline, _branches_now(root)
            time.sleep(0.1)
        follow = llproc.start(root, "logs", "fan", "--branch", "b", "-f")
        out = root / ".loops" / ".running" / f"{_branches_now(root)[1]['key']}.work.out"
        while "working on b" not in (out.read_text() if out.exists() else ""):
            assert time.monotonic() < deadline, "the branch never printed"
            time.sleep(0.05)
        go.touch()
        printed, _ = follow.communicate(timeout=scaled(60))
    finally:
        go.touch()
        running.wait(timeout=scaled(60))
    assert follow.returncode == ExitCode.OK
    assert printed.splitlines()[1:] == ["working on b", "after the wait"]


PLANTED = [
    {"event": "branch_start", "state": "fan", "index": True, "key": "fix@zz"},
    {"event": "branch_start", "state": "fan", "index": 5, "key": "../../etc/passwd"},
    {"event": "branch_start", "state": "\x1b[31mred", "index": 6, "key": "fan", "item": "\x07"},
    {"event": "branch_start", "state": "fan", "index": 7, "key": "fix@q1", "item": "\x1b]0;t\x07"},
    {"event": "branch_finish", "state": "fan", "index": 7, "key": "fix@q1", "verdict": {"a": 1}},
    {"event": "fanout_merge", "state": "fan", "merged": "fix@q1", "refused": [1, None]},
    {"event": "fanout_join", "state": "fan", "picked": {"x": 1}, "verdict": ["success"]},
]


def test_planted_fan_out_events_never_break_a_view_nor_reach_outside(
    ran: Path, tmp_path: Path
) -> None:
    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    events = root / ".loops" / ".running" / "fan.events.jsonl"
    with events.open("a") as out:
        for planted in PLANTED:
            out.write(json.dumps({"ts": "2026-01-01T00:00:00+00:00", **planted}) + "\n")
    for args in (
        ["history", "fan"],
        ["report", "fan"],
        ["report", "fan", "--json"],
        ["report", "fan", "--html", str(tmp_path / "r.html")],
        ["logs", "fan", "--branch", "5"],
        ["logs", "fan", "--branch", "fan"],
    ):
        shown = forkserver.ll_loop(root, *args)
        assert "Traceback" not in shown.stderr, args
        assert "\x1b" not in shown.stdout + shown.stderr, args
        assert "\x07" not in shown.stdout + shown.stderr, args
        assert "root:" not in shown.stdout, args  # /etc/passwd never read
    history = forkserver.ll_loop(root, "history", "fan").stdout
    assert "fan ⇉ #7 \\x1b]0;t\\x07: fix@q1 (its steps: ll-loop history fix@q1)" in history
    assert "fan ⇇ #7: fix@q1  ()" in history  # a verdict that is not text: none
    assert history.count("loop_start      fan at fan") == 1  # its own steps never nested
    lanes = json.loads(forkserver.ll_loop(root, "report", "fan", "--json").stdout)["branches"]
    assert [b["key"] for b in lanes][3:] == ["fix@q1"]  # the run itself, bad keys: left out
    assert lanes[3]["merged"] == ""  # `merged` not a list: nothing merged
    wrong = forkserver.ll_loop(root, "logs", "fan", "--branch", "5")
    assert wrong.returncode == ExitCode.FAILED
    assert "its branches: 0 a" in wrong.stderr
    assert "../../etc/passwd" not in wrong.stderr
