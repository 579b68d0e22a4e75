"""Fan-outs for tests: a project of child loops, and a driver process (`python -m
support.fanout PLAN EVENTS`) that runs one fan-out with its events in a file, dying by
SIGKILL right after a chosen event write when asked (LL_TEST_KILL_AT_EVENT=N)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from little_loops.fsm.fanout.branches import Branch
from little_loops.fsm.fanout.drive import Ending, Plan, fan_out
from little_loops.fsm.fanout.pool import FanOutSpec
from little_loops.fsm.processes.pids import pid_alive
from support.gitrepo import git as git_in
from support.gitrepo import loops_project
from support.paths import TESTS
from support.slowdown import scaled

KILL_AT = "LL_TEST_KILL_AT_EVENT"

# A child loop; each run of its action is told in $LL_TEST_RUNS, if set. Item `e` fails,
# items `c` and `d` write the same file differently (the second merged conflicts), `slow*`
# sleeps long (its sleeper's pid in $LL_TEST_PIDS), `score*` writes a score; every other item
# waits for $LL_TEST_WAIT (if set) and writes its own file. Each takes a moment, so that runs
# overlap.
CHILD = """\
name: fix
context:
  item: ""
initial: work
states:
  work:
    action: |
      [ -z "$LL_TEST_RUNS" ] || echo ${context.item} >> "$LL_TEST_RUNS"
      sleep 0.4
      case ${context.item} in
        e) exit 1 ;;
        c|d) echo ${context.item} > shared.txt ;;
        slow*) d=$LL_TEST_PIDS; mkdir -p "$d"; sleep 300 & echo $! > "$d"/${context.item}; wait ;;
        score*) echo ${context.item} > score.txt ;;
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


def project(tmp_path: Path, git: bool = True, **loops: str) -> Path:
    """A project with the child loop `fix` and *loops* (NAME=TEXT; a repository on `main`,
    or a plain folder)."""
    files = {".loops/fix.yaml": CHILD, "README.md": "a project\n"}
    files.update({f".loops/{name}.yaml": text for name, text in loops.items()})
    if git:
        return loops_project(tmp_path, files)
    root = tmp_path / "project"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def map_loop(items: Sequence[str], name: str = "fan", **options: Any) -> str:
    """A loop whose state `fan` maps *items* over the loop `fix` (with *options*), then says
    what it merged."""
    settings = "".join(f"      {key}: {value}\n" for key, value in options.items())
    return (
        f"name: {name}\ninitial: fan\nstates:\n  fan:\n    map:\n"
        f"      items: {json.dumps(list(items))}\n      loop: fix\n{settings}"
        "    on_success: done\n    on_failure: done\n"
        "  done:\n    terminal: true\n"
    )


def plan_data(items: Sequence[str], **options: Any) -> dict[str, Any]:
    """A plan as the driver reads it: one branch of loop `fix` per item."""
    return {"items": list(items), **options}


def _plan(data: Mapping[str, Any], root: Path) -> Plan:
    branches = [Branch(i, "fix", {"item": item}, item) for i, item in enumerate(data["items"])]
    spec = FanOutSpec(
        branches,
        root / ".loops",
        max_concurrency=data.get("max_concurrency"),
        stop_on_success=data.get("join") == "any",
        max_cost_usd=data.get("max_cost_usd"),
        timeout_s=data.get("timeout_s"),
        grace_s=data.get("grace_s", 10.0),
    )
    return Plan(spec, data.get("join", "all"), data.get("merge", "none"), data.get("score"))


def run_in_process(root: Path, data: Mapping[str, Any]) -> tuple[Ending, list[dict[str, Any]]]:
    """Run the fan-out here; its ending and the events it emitted (each with its `ts`)."""
    seen: list[dict[str, Any]] = []

    def emit(name: str, payload: dict[str, Any]) -> None:
        seen.append({"event": name, "ts": time.time(), **payload})

    return fan_out(_plan(data, root), emit), seen


def start_driver(
    root: Path, data: Mapping[str, Any], events: Path, **env: str
) -> subprocess.Popen[str]:
    """The driver process, in its own session, for the fan-out *data* in *root*."""
    plan = root.parent / "plan.json"
    plan.write_text(json.dumps(data))
    return subprocess.Popen(
        [sys.executable, "-m", "support.fanout", str(root), str(plan), str(events)],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(TESTS), **env},
    )


def read_events(events: Path) -> list[dict[str, Any]]:
    """The events the driver wrote (a last line cut by a kill is left out)."""
    found = []
    if events.exists():
        for line in events.read_text().splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


def child_events(root: Path, key: str) -> list[dict[str, Any]]:
    """The events child run *key* recorded itself."""
    path = root / ".loops" / ".running" / f"{key}.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def stamp(text: str) -> float:
    """An event's `ts` (ISO 8601) as seconds."""
    return datetime.fromisoformat(text).timestamp()


def most_at_once(spans: Sequence[tuple[float, float]]) -> int:
    """The most of *spans* (start, end) that overlap at any moment."""
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = top = 0
    for _, step in edges:
        running += step
        top = max(top, running)
    return top


def processes_in(root: Path) -> list[int]:
    """The live processes whose working folder is *root* or below it."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if (cwd == root or root in cwd.parents) and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def sample_run(doc: str, args: Sequence[str], printed: str, root: Path) -> None:
    """Assert that *printed* (`ll-loop run ARGS` in *root*) is *doc*'s sample of that
    command: run ids, times and the project's path (the docs' /home/me/calc) aside, and the
    children's ends in any order."""
    from support.doc_blocks import all_blocks, normalise

    prefix = f"$ ll-loop run {args[0]} "
    (block,) = [b for b in all_blocks() if b.starts(doc, prefix)]
    first, shown = block.text.split("\n", 1)
    assert shlex.split(first.removeprefix("$ ")) == ["ll-loop", "run", *args]

    def comparable(text: str) -> list[str]:
        text = re.sub(
            r"\b([a-z-]+)@[0-9a-z]{4}\b", r"\1@ID", text.replace(str(root), "/home/me/calc")
        )
        lines = normalise(text).splitlines()
        ends = iter(sorted(line for line in lines if "⇇" in line))
        return [next(ends) if "⇇" in line else line for line in lines]

    assert comparable(printed) == comparable(shown)


def main(argv: Sequence[str]) -> int:
    root, plan, events = Path(argv[0]), Path(argv[1]), Path(argv[2])
    data = json.loads(plan.read_text())
    before = read_events(events)
    kill_at = int(os.environ.get(KILL_AT, "0"))
    written = [0]

    def emit(name: str, payload: dict[str, Any]) -> None:
        with events.open("a") as out:
            out.write(json.dumps({"event": name, "ts": time.time(), **payload}) + "\n")
        written[0] += 1
        if written[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    stopping = [False]
    signal.signal(signal.SIGTERM, lambda *_: stopping.__setitem__(0, True))
    ending = fan_out(_plan(data, root), emit, lambda: stopping[0], before)
    print(json.dumps(ending.figures()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


# The child loop `spend`: its state calls the agent `spender` again and again ($10 at most).
SPEND = """\
name: spend
initial: work
context:
  item: ""
max_iterations: 40
states:
  work:
    action: spend some
    action_type: prompt
    agent: spender
    evaluate:
      type: exit_code
    on_success: work
    on_failure: done
  done:
    terminal: true
"""
SPEND_PER_CALL = 0.25


def spender_project(tmp_path: Path, fan: str, first: str) -> Path:
    """A project whose loop *fan* fans out over `spend`, committed, with the agent `spender`:
    each call runs the bash line *first*, takes 0.2 s of an idle machine (scaled: a budget
    stop is seen within one call on a loaded machine too) and costs $0.25."""
    root = project(tmp_path, fan=fan, spend=SPEND)
    agent = root / "tools" / "spender"
    agent.parent.mkdir()
    agent.write_text(
        f"#!/bin/bash\n{first}\nsleep {scaled(0.2):.2f}\necho 'cost: $'{SPEND_PER_CALL}\n"
    )
    agent.chmod(0o755)
    (root / ".loops" / "agents.yaml").write_text(
        "agents:\n  spender:\n    command: ./tools/spender\n"
        "    cost_pattern: 'cost: \\$([0-9.]+)'\n"
    )
    git_in(root, "add", "-A")
    git_in(root, "commit", "-qm", "a spender")
    return root
