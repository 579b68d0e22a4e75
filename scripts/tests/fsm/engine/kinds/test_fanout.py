"""The fan-out state kind (engine/kinds/fanout.py) in real `ll-loop` runs: `map:` and
`parallel:` children in real git worktrees, joined, merged, stopped, and resumed."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support import fanout
from support.gitrepo import branches, git
from support.llproc import events, finish, ll_loop, start, state, wait_for
from support.slowdown import scaled

from little_loops.fsm.definition.model.fanout import DEFAULT_MAX_CONCURRENCY
from little_loops.fsm.engine.kinds.fanout import items_of
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.values.interpolation import InterpolationContext


def _spans(logged: list[dict[str, object]]) -> list[tuple[float, float]]:
    started = {e["index"]: e["ts"] for e in logged if e["event"] == "branch_start"}
    ended = {e["index"]: e["ts"] for e in logged if e["event"] == "branch_finish"}
    return [(fanout.stamp(str(started[i])), fanout.stamp(str(ended[i]))) for i in started]


def test_a_six_item_map_state_runs_two_at_a_time_and_merges_the_green_ones(
    tmp_path: Path,
) -> None:
    loop = fanout.map_loop(list("abcdef"), max_concurrency=2, merge="green")
    loop = loop.replace(
        "    on_failure: done\n",
        "    on_failure: report\n  report:\n"
        '    action: echo "merged ${captured.fan.merged} verdict ${captured.fan.verdict}"\n'
        "    next: done\n",
    )
    root = fanout.project(tmp_path, fan=loop)
    done = ll_loop(root, "run", "fan", timeout=180)
    assert done.returncode == 0, done.stderr
    logged = events(root, "fan")
    # Never more than two children at once: by the run's own events, and by each child's log.
    assert fanout.most_at_once(_spans(logged)) == 2
    starts = [e for e in logged if e["event"] == "branch_start"]
    assert len(starts) == 6
    child_spans = []
    for start_event in starts:
        own = fanout.child_events(root, str(start_event["key"]))
        child_spans.append((fanout.stamp(own[0]["ts"]), fanout.stamp(own[-1]["ts"])))
    assert fanout.most_at_once(child_spans) <= 2
    # Four green branches merged; `d` conflicts with `c`: undone, reported, kept on its branch.
    captured = state(root, "fan")["captured"]["fan"]
    key_of = {e["item"]: e["key"] for e in starts}
    assert captured["merged"] == [key_of[i] for i in "abcf"]
    assert [r["key"] for r in captured["refused"]] == [key_of["d"]]
    assert "conflicts in shared.txt" in captured["refused"][0]["reason"]
    assert captured["verdict"] == "failure"  # `e` failed: join all
    verdicts = {b["item"]: b["verdict"] for b in captured["branches"]}
    assert verdicts == {**dict.fromkeys("abcdf", "success"), "e": "failure"}
    assert (root / "shared.txt").read_text() == "c\n"
    assert sorted(p.name for p in root.glob("item-*.txt")) == [
        "item-a.txt",
        "item-b.txt",
        "item-f.txt",
    ]
    d_branch = f"ll/fix/{key_of['d'].split('@')[1]}"
    assert d_branch in branches(root)
    assert git(root, "show", f"{d_branch}:shared.txt") == "d\n"
    assert git(root, "status", "--porcelain") == ""
    # A later state reads the results.
    said = (root / ".loops" / ".running" / "fan.report.out").read_text()
    assert said == f"merged {' '.join(captured['merged'])} verdict failure\n"
    names = [e["event"] for e in logged]
    assert names.index("fanout_join") < names.index("fanout_merge") < names.index("evaluate")


def test_items_from_a_capture_and_a_parallel_state_with_its_own_values(tmp_path: Path) -> None:
    loop = """\
name: both
initial: list
states:
  list:
    action: echo '["x", "y"]'
    capture: found
    next: each
  each:
    map:
      items: ${captured.found.output}
      loop: fix
      merge: green
    on_success: two
    on_failure: failed
  two:
    parallel:
      branches:
        - loop: fix
          with: {item: p}
        - loop: fix
          with: {item: "${captured.each.verdict}"}
      merge: green
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""
    root = fanout.project(tmp_path, both=loop)
    done = ll_loop(root, "run", "both", timeout=180)
    assert done.returncode == 0, done.stderr
    found = sorted(p.name for p in root.glob("item-*.txt"))
    assert found == ["item-p.txt", "item-success.txt", "item-x.txt", "item-y.txt"]


def test_ctrl_c_ends_every_branch_tree_and_resume_finishes_without_rerunning(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["slow1", "a"]))
    pids, runs = tmp_path / "pids", tmp_path / "runs"
    env = {"LL_TEST_PIDS": str(pids), "LL_TEST_RUNS": str(runs)}
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: (pids / "slow1").exists(), scaled(60), "the sleeper")
        wait_for(
            lambda: any(e["event"] == "branch_finish" for e in _logged(root)),
            scaled(60),
            "the quick branch's end",
        )
        sleeper = int((pids / "slow1").read_text())
        os.kill(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the parent only
        finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert not pid_alive(sleeper)
    assert state(root, "fan")["status"] == "interrupted"
    (root / ".loops" / "fix.yaml").write_text(fanout.CHILD.replace("sleep 300 &", "true &"))
    git(root, "commit", "-qam", "no more sleeping")
    resumed = ll_loop(root, "resume", "fan", timeout=120, env={**os.environ, **env})
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(runs.read_text().split()) == ["a", "slow1", "slow1"]  # slow1 went on
    assert state(root, "fan")["captured"]["fan"]["verdict"] == "success"
    starts = [e for e in events(root, "fan") if e["event"] == "branch_start"]
    assert [e["item"] for e in starts] == ["slow1", "a"]


def test_a_map_without_max_concurrency_runs_the_default_number_at_once(tmp_path: Path) -> None:
    """Ten items and no `max_concurrency`: the first DEFAULT_MAX_CONCURRENCY start and wait
    (on a file the test holds), the rest wait their turn: never all ten at once."""
    items = [f"i{n}" for n in range(DEFAULT_MAX_CONCURRENCY + 2)]
    root = fanout.project(tmp_path, fan=fanout.map_loop(items))
    go = tmp_path / "go"
    env = {"LL_TEST_WAIT": f'until [ -e "{go}" ]; do sleep 0.05; done'}
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(
            lambda: (
                sum(e["event"] == "branch_start" for e in _logged(root)) >= DEFAULT_MAX_CONCURRENCY
            ),
            scaled(120),
            "the first children",
        )
        go.touch()
        finish(proc, timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0
    logged = events(root, "fan")
    assert sum(e["event"] == "branch_finish" for e in logged) == len(items)
    assert fanout.most_at_once(_spans(logged)) == DEFAULT_MAX_CONCURRENCY


def _logged(root: Path) -> list[dict[str, object]]:
    path = root / ".loops" / ".running" / "fan.events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ('["a", 2, {"b": 1}]', ["a", "2", '{"b": 1}']),
        ("first\n\n  second \n", ["first", "second"]),
        ("[not json", ["[not json"]),
        ("", []),
    ],
)
def test_items_of_text_are_a_json_array_else_lines(text: str, items: list[str]) -> None:
    ctx = InterpolationContext(context={"list": text})
    assert items_of("${context.list}", ctx) == items


PICKED = """\
name: fan
context:
  which: WHICH
initial: fan
states:
  fan:
    parallel:
      branches:
        - loop: ${context.which}
          with: {item: a}
    on_success: done
    on_failure: done
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""


def test_a_missing_child_loop_fails_its_branch_with_its_own_words(tmp_path: Path) -> None:
    # Named as written, `validate` (so `run`) refuses it; named by `${...}`, its branch fails.
    root = fanout.project(tmp_path, fan=PICKED.replace("WHICH", "nope"))
    done = ll_loop(root, "run", "fan", timeout=60)
    assert done.returncode == 0, done.stderr
    branch = state(root, "fan")["captured"]["fan"]["branches"][0]
    assert branch["verdict"] == "failure"
    assert branch["outcome"] == "exit 2"


@pytest.mark.parametrize("which", ["../../../escaped", "--help", "sub/fix"])
def test_a_child_loop_filled_in_as_a_path_is_the_verdict_error_and_nothing_is_written(
    tmp_path: Path, which: str
) -> None:
    root = fanout.project(tmp_path, fan=PICKED.replace("WHICH", f"'{which}'"))
    before = {p for p in tmp_path.rglob("*") if ".git" not in p.parts}
    done = ll_loop(root, "run", "fan", timeout=60)
    assert done.returncode == 7, done.stderr  # ended in `failed`, on the verdict error
    assert "state 'fan': loop: expected a loop's name" in done.stdout + done.stderr
    assert not any(e["event"] == "branch_start" for e in events(root, "fan"))
    new = {p for p in tmp_path.rglob("*") if ".git" not in p.parts} - before
    ours = (root / ".loops" / ".running", root / ".loops" / ".history")
    assert all(any(p.is_relative_to(place) for place in ours) for p in new), new


def test_the_loops_budget_is_shared_by_the_branches_and_stops_them_all(tmp_path: Path) -> None:
    loop = fanout.map_loop(["1", "2", "3"]).replace("loop: fix", "loop: spend")
    loop = loop.replace("name: fan\n", "name: fan\nmax_cost_usd: 2\n")
    root = fanout.spender_project(tmp_path, loop, 'echo $$ >> "$LL_TEST_PIDS/spenders"')
    pids = tmp_path / "pids"
    pids.mkdir()
    done = ll_loop(root, "run", "fan", timeout=180, env={**os.environ, "LL_TEST_PIDS": str(pids)})
    assert done.returncode == 6, done.stderr  # the budget was used up
    saved = state(root, "fan")
    assert saved["terminated_by"] == "budget"
    # Stopped once the three together reached $2: each branch's spend is counted, and none
    # ran on to its own 40 iterations ($10).
    assert 2 <= saved["cost_usd"] < 2 + 3 * 0.25 * 2
    finishes = [e for e in events(root, "fan") if e["event"] == "branch_finish"]
    assert [e["verdict"] for e in finishes] == ["stopped"] * 3
    assert sum(e["cost_usd"] for e in finishes) == pytest.approx(saved["cost_usd"])
    assert not fanout.processes_in(root)


def test_dry_run_and_simulate_show_the_fan_out_and_run_no_branch(tmp_path: Path) -> None:
    loop = fanout.map_loop(["a", "b"], max_concurrency=1, merge="green")
    loop = loop.replace(
        "    on_failure: done\n",
        "    on_failure: say\n  say:\n    action: echo ${captured.fan.merged}\n    next: done\n",
    )
    root = fanout.project(tmp_path, fan=loop)
    plan = ll_loop(root, "run", "fan", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    fan_at = lines.index("  fan  [initial]")
    assert lines[fan_at + 1] == (
        "    fan-out: map 2 items over loop fix (as item); 1 at once, join all, merge green"
    )
    assert not lines[fan_at + 2].startswith("    evaluate:")
    walked = ll_loop(root, "simulate", "fan", "--verdicts", "fan=failure")
    assert walked.returncode == 0, walked.stderr
    said = walked.stdout + walked.stderr
    assert "fan → map 2 items over loop fix" in said
    assert "✗ failure (scripted)" in said
    assert "nothing is captured" not in said
    assert not list((root / ".loops").glob(".running/fix*"))


def test_a_worktree_run_refuses_a_fan_out_and_leaves_the_checkout_alone(tmp_path: Path) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a"], merge="green"))
    before = git(root, "rev-parse", "HEAD")
    done = ll_loop(root, "run", "fan", "--worktree", timeout=60)
    said = done.stdout + done.stderr
    assert "a fan-out state does not run in a --worktree run yet" in said
    assert "Traceback" not in said
    assert git(root, "rev-parse", "HEAD") == before
    assert not (root / "item-a.txt").exists()
    assert not list((root / ".loops").glob(".running/fix*"))


# Custom agents for prompt branches: `limited` is out of quota, `good` writes the file the
# prompt names, `uncounted` does too but never says what it spent.
PROMPT_AGENTS = """\
agents:
  limited:
    command: 'echo "usage limit reached" >&2; exit 1; true'
    limit_pattern: usage limit reached
    cost_pattern: 'cost: .([0-9.]+)'
  good:
    command: 'echo "$1" > "$(printf %s "$1" | cut -d" " -f2)"; printf "cost: %s\\n" 0.5; true'
    cost_pattern: 'cost: .([0-9.]+)'
  uncounted:
    command: 'echo "$1" > "$(printf %s "$1" | cut -d" " -f2)"; true'
    cost_pattern: 'cost: .([0-9.]+)'
"""


def test_prompt_branches_run_on_their_agents_with_the_fallback_and_the_budget_of_any_step(
    tmp_path: Path,
) -> None:
    loop = """\
name: ask
initial: fan
max_cost_usd: 3
context:
  what: made
states:
  fan:
    parallel:
      branches:
        - agent: [limited, good]
          prompt: "write one.txt ${context.what}"
        - agent: uncounted
          prompt: "write two.txt ${context.what}"
      merge: green
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""
    root = fanout.project(tmp_path, ask=loop)
    (root / ".loops" / "agents.yaml").write_text(PROMPT_AGENTS)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "agents")
    done = ll_loop(root, "run", "ask", timeout=180)
    assert done.returncode == 7, done.stdout + done.stderr
    captured = state(root, "ask")["captured"]["fan"]
    first, second = captured["branches"]
    # The first branch's agent was out of quota: the step went on with the next one.
    assert first["verdict"] == "success"
    assert first["cost_usd"] == 0.5
    switched = [e for e in fanout.child_events(root, first["key"]) if e["event"] == "agent_switch"]
    assert len(switched) == 1
    assert (root / "one.txt").read_text() == "write one.txt made\n"
    assert captured["merged"] == [first["key"]]
    # The second's spend cannot be counted, in a budgeted run: stopped, as any step is.
    assert second["verdict"] == "failure"
    assert second["outcome"] == "budget"
    assert not (root / "two.txt").exists()
    options = json.loads(
        (root / ".loops" / ".running" / f"{second['key']}.options.json").read_text()
    )
    assert "3" in json.dumps(options)


def test_join_best_s_score_reads_its_references_as_data_not_code(tmp_path: Path) -> None:
    loop = """\
name: pick
initial: fan
context:
  word: "x; touch pwned"
states:
  fan:
    parallel:
      branches:
        - {loop: fix, with: {item: score1}}
        - {loop: fix, with: {item: score22}}
      join: best
      score: grep -c -F -- ${context.word} score.txt; wc -c < score.txt
      merge: best
    on_success: done
    on_failure: done
  done:
    terminal: true
"""
    root = fanout.project(tmp_path, pick=loop)
    done = ll_loop(root, "run", "pick", timeout=180)
    assert done.returncode == 0, done.stderr
    captured = state(root, "pick")["captured"]["fan"]
    assert captured["reason"] == "score 8"  # `score22\n`: the longer file wins
    assert captured["picked"] == [captured["branches"][1]["key"]]
    assert (root / "score.txt").read_text() == "score22\n"
    assert not list(root.rglob("pwned"))


def test_after_kill_9_of_the_parent_resume_waits_for_the_running_children_not_ends_them(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "b"], merge="green"))
    runs, go = tmp_path / "runs", tmp_path / "go"
    env = {"LL_TEST_RUNS": str(runs), "LL_TEST_WAIT": f'until [ -e "{go}" ]; do sleep 0.05; done'}
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: len(_lines(runs)) == 2, scaled(60), "both children at work")
        os.kill(proc.pid, signal.SIGKILL)  # the parent only: its children live on
        finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    resumed = start(root, "resume", "fan", env=env)
    try:
        wait_for(
            lambda: sum(e["event"] == "loop_start" for e in _logged(root)) == 2,
            scaled(60),
            "the resume's start",
        )
        go.touch()  # the children finish their step only now
        finish(resumed, timeout=120)
    finally:
        if resumed.poll() is None:
            os.killpg(resumed.pid, signal.SIGKILL)
    assert resumed.returncode == 0
    assert sorted(_lines(runs)) == ["a", "b"]  # neither child's step was cut and run again
    assert not [e for e in _logged(root) if e["event"] == "orphans_killed"]
    assert state(root, "fan")["captured"]["fan"]["verdict"] == "success"
    assert sorted(p.name for p in root.glob("item-*.txt")) == ["item-a.txt", "item-b.txt"]


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_after_kill_9_of_the_parent_stop_ends_its_children_runs_and_their_actions(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, fan=fanout.map_loop(["a", "b"]))
    runs, go = tmp_path / "runs", tmp_path / "go"
    env = {"LL_TEST_RUNS": str(runs), "LL_TEST_WAIT": f'until [ -e "{go}" ]; do sleep 0.05; done'}
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: len(_lines(runs)) == 2, scaled(60), "both children at work")
        assert len(fanout.processes_in(root)) >= 4  # the parent, two children, their actions
        os.kill(proc.pid, signal.SIGKILL)
        finish(proc, timeout=60)
        stopped = ll_loop(root, "stop", "fan", timeout=60)
        assert stopped.returncode == 1, stopped.stderr  # the parent is not running: said so
        assert "process(es) its action left running" in stopped.stderr
        wait_for(lambda: not fanout.processes_in(root), scaled(30), "every child ended")
    finally:
        for pid in fanout.processes_in(root):
            os.kill(pid, signal.SIGKILL)
    assert not list(root.glob("item-*.txt"))


BRANCH_DELETER = """\
name: gone
context:
  item: ""
initial: work
states:
  work:
    action: git update-ref -d HEAD && echo kept > work-${context.item}.txt
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_branch_whose_child_deleted_its_own_branch_is_reported_and_its_work_kept(
    tmp_path: Path,
) -> None:
    loop = fanout.map_loop(["a"], merge="green").replace("loop: fix", "loop: gone")
    root = fanout.project(tmp_path, fan=loop, gone=BRANCH_DELETER)
    done = ll_loop(root, "run", "fan", timeout=60)
    assert done.returncode == 0, done.stderr
    captured = state(root, "fan")["captured"]["fan"]
    (refused,) = captured["refused"]
    assert "is gone but its worktree" in refused["reason"]
    assert "⚠ not merged " + refused["key"] in done.stdout + done.stderr
    worktree = Path(captured["branches"][0]["worktree"])
    assert (worktree / "work-a.txt").read_text() == "kept\n"
    assert not (root / "work-a.txt").exists()


# Edits the project's own checkout (as the user would, while the branch runs), then its own.
DIRTIER = """\
name: dirty
context:
  item: ""
initial: work
states:
  work:
    action: echo "user's edit" >> ../../../README.md && echo mine > ${context.item}.txt
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_merge_refused_by_a_dirty_checkout_is_said_in_the_run_s_output_and_work_kept(
    tmp_path: Path,
) -> None:
    loop = fanout.map_loop(["a"], merge="green").replace("loop: fix", "loop: dirty")
    root = fanout.project(tmp_path, fan=loop, dirty=DIRTIER)
    done = ll_loop(root, "run", "fan", timeout=60)
    assert done.returncode == 0, done.stderr
    (refused,) = state(root, "fan")["captured"]["fan"]["refused"]
    said = done.stdout + done.stderr
    assert f"⚠ not merged {refused['key']}: the main checkout" in said
    assert "has uncommitted changes (README.md)" in said
    assert (root / "README.md").read_text() == "a project\nuser's edit\n"
    assert not (root / "a.txt").exists()
    (branch,) = state(root, "fan")["captured"]["fan"]["branches"]
    assert (Path(branch["worktree"]) / "a.txt").read_text() == "mine\n"


# Its action puts a folder where its run's state file goes: the run cannot save its end (as
# on a full disk) but its process still exits 0.
END_LOST = """\
name: lost
context:
  item: ""
initial: work
states:
  work:
    action: |
      echo half > ${context.item}.txt
      for f in ../../.running/lost@*.state.json; do rm -f "$f"; mkdir "$f"; done
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_branch_that_could_not_save_its_end_is_no_success_and_is_not_merged(
    tmp_path: Path,
) -> None:
    loop = fanout.map_loop(["a"], merge="green").replace("loop: fix", "loop: lost")
    root = fanout.project(tmp_path, fan=loop, lost=END_LOST)
    done = ll_loop(root, "run", "fan", timeout=60)
    assert done.returncode == 0, done.stderr
    captured = state(root, "fan")["captured"]["fan"]
    (branch,) = captured["branches"]
    assert branch["verdict"] == "failure"
    assert branch["outcome"] == "exit 0, its end not saved (its state: unreadable)"
    assert captured["verdict"] == "failure"
    assert captured["merged"] == []
    assert not (root / "a.txt").exists()
    assert (Path(branch["worktree"]) / "a.txt").read_text() == "half\n"
