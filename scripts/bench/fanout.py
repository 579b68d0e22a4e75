"""Fan-out: a `map:` of N items whose child runs `true`, against N sequential sub-loop runs of
the same child, in one git project, alternating; and what a branch costs on top of a sub-loop.

* map: `ll-loop run` of a loop whose one state is `map:` over N items, all at once
  (`max_concurrency: N`; without it a `map:` runs 8 at once), each child an `ll-loop run`
  in its own worktree;
* the same map with `max_concurrency: 1` (one branch after another: the cost of a branch);
* sub-loops: `ll-loop run` of a loop whose one state runs the child as a sub-loop N times.

The overhead per branch is (map at one at a time - sub-loops) / N, by the wall clock and by
the CPU time of every process below the bench (which a busy machine blurs least), and where
it goes: N `ll-loop run child` processes one after another, without and with `--worktree`
(a branch's own process and its worktree; the rest is the fan-out's own). Also checked:
every branch ran (N `branch_finish` events, each `success`) and what the run's event log
weighs per branch (it grew with the square of N when each event re-recorded every branch).

Usage: `python scripts/bench/fanout.py [N] [ROUNDS]` prints the table.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from run import ENV, LL_LOOP, Row, markdown, project, timed

CHILD = """\
name: child
initial: work
context:
  item: ""
states:
  work:
    action: "true"
    on_success: done
    on_failure: done
  done:
    terminal: true
"""

MAP = """\
name: fan
initial: each
states:
  each:
    map:
      items: [{items}]
      loop: child{concurrency}
      join: all
      merge: none
    on_success: done
    on_failure: done
  done:
    terminal: true
"""

# One state that runs the child as a sub-loop, again and again, until max_iterations.
SEQUENTIAL = """\
name: seq
initial: each
max_iterations: {n}
states:
  each:
    loop: child
    with:
      item: x
    on_success: $current
    on_failure: $current
  done:
    terminal: true
"""


def git_project(root: Path, n: int) -> Path:
    """A git project holding the child, the map loops (all at once, one at a time) and the
    sub-loop loop, committed."""
    items = ", ".join(str(i) for i in range(n))
    project(
        root,
        {
            "child": CHILD,
            "fan": MAP.format(items=items, concurrency=f"\n      max_concurrency: {n}"),
            "fan1": MAP.format(items=items, concurrency="\n      max_concurrency: 1").replace(
                "name: fan", "name: fan1"
            ),
            "seq": SEQUENTIAL.format(n=n),
        },
    )
    (root / ".gitignore").write_text(".loops/.running/\n.loops/.worktrees/\n")
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"],
    ):
        subprocess.run(argv, cwd=root, check=True, env=ENV)
    return root


def _events(root: Path, loop: str) -> list[dict[str, object]]:
    running = root / ".loops" / ".running"
    lines = (running / f"{loop}.events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _log_bytes(root: Path, loop: str) -> int:
    running = root / ".loops" / ".running"
    return sum(p.stat().st_size for p in running.glob(f"{loop}.events*.jsonl"))


def run_map(root: Path, loop: str, n: int, sizes: list[int] | None = None) -> float:
    """Seconds of `ll-loop run LOOP` (checked: n branches, each a success); its log's bytes
    appended to *sizes*."""
    seconds = timed([LL_LOOP, "run", loop, "--quiet"], root)
    finished = [e for e in _events(root, loop) if e.get("event") == "branch_finish"]
    bad = [e for e in finished if e.get("verdict") != "success"]
    if len(finished) != n or bad:
        said = ""
        if bad:
            log = root / ".loops" / ".running" / f"{bad[0]['key']}.log"
            tail = log.read_text(errors="replace")[-500:] if log.exists() else ""
            said = f"; {bad[0]['key']} ended {bad[0].get('outcome')}: {tail}"
        raise SystemExit(
            f"bench: {loop} ended {len(finished)} of {n} branches, {len(bad)} not green{said}"
        )
    if sizes is not None:
        sizes.append(_log_bytes(root, loop))
    _forget(root, loop)
    return seconds


def run_sequential(root: Path, n: int) -> float:
    """Seconds of `ll-loop run seq` (checked: n sub-loop runs of the child)."""
    seconds = timed([LL_LOOP, "run", "seq", "--quiet"], root, expect=3)  # max_iterations
    ran = sum(
        1 for e in _events(root, "seq") if e.get("event") == "loop_start" and e.get("depth") == 1
    )
    if ran != n:
        raise SystemExit(f"bench: the sub-loop ran {ran} times, expected {n}")
    _forget(root, "seq")
    return seconds


def run_children(root: Path, n: int, worktree: bool) -> float:
    """Seconds of n `ll-loop run child` processes, one after another (each `--worktree`)."""
    argv: list[str | Path] = [LL_LOOP, "run", "child", "--quiet"]
    argv += ["--worktree"] if worktree else []
    seconds = sum(timed([*argv, "--set", f"item={i}"], root) for i in range(n))
    _forget(root, "child")
    return seconds


def _cpu() -> float:
    """CPU seconds (user and system) of the processes below this one that have ended."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _forget(root: Path, loop: str) -> None:
    """Remove the run's files and its children's (worktrees, branches), for the next round."""
    subprocess.run(["git", "worktree", "prune"], cwd=root, check=True, env=ENV, capture_output=True)
    running = root / ".loops" / ".running"
    for path in running.iterdir():
        if path.is_file() and (path.name.startswith(f"{loop}.") or path.name.startswith("child")):
            path.unlink()
    subprocess.run(["rm", "-rf", str(root / ".loops" / ".worktrees")], check=True)
    branches = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/ll/"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    ).stdout.split()
    subprocess.run(["git", "worktree", "prune"], cwd=root, check=True, env=ENV)
    if branches:
        subprocess.run(["git", "branch", "-qD", *branches], cwd=root, check=True, env=ENV)


def bench_fanout(n: int = 50, rounds: int = 3) -> list[Row]:
    """A map of n `true` children (all at once, and one at a time) against n sequential
    sub-loop runs of the child, alternating *rounds* times."""
    kinds = ("fan", "fan1", "seq", "runs", "worktrees")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpus: dict[str, list[float]] = {k: [] for k in kinds}  # of every process below ours
    sizes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="ll-bench-fanout-") as tmp:
        root = git_project(Path(tmp), n)
        steps: dict[str, Callable[[], float]] = {
            "fan": lambda: run_map(root, "fan", n, sizes),
            "fan1": lambda: run_map(root, "fan1", n),
            "seq": lambda: run_sequential(root, n),
            "runs": lambda: run_children(root, n, worktree=False),
            "worktrees": lambda: run_children(root, n, worktree=True),
        }
        for _ in range(rounds):
            for kind, step in steps.items():
                before = _cpu()
                times[kind].append(step())
                cpus[kind].append(_cpu() - before)
    fan, fan1, seq, runs, trees = (statistics.median(times[k]) for k in kinds)
    cpu = {k: statistics.median(v) / n * 1000 for k, v in cpus.items()}
    per_branch = (fan1 - seq) / n
    parts = [(b - a) / n * 1000 for a, b in ((seq, runs), (runs, trees), (trees, fan1))]
    cpu_parts = [
        cpu[b] - cpu[a] for a, b in (("seq", "runs"), ("runs", "worktrees"), ("worktrees", "fan1"))
    ]
    details: dict[str, object] = {"rounds": rounds, "items": n, "log_bytes": sizes}
    details |= {f"{k}_seconds": v for k, v in times.items()}
    details |= {f"{k}_cpu_seconds": v for k, v in cpus.items()}
    log_kib = statistics.median(sizes) / n / 1024
    sub = f"{seq:.2f} s ({seq / n * 1000:.0f} ms/run, {n} sequential sub-loop runs)"
    return [
        Row(
            f"fan-out: a {n}-item `map:` of `true`, all at once",
            f"{fan:.2f} s ({fan / n * 1000:.0f} ms/branch); log {log_kib:.1f} KiB/branch",
            sub,
            f"{fan / seq:.2f}x",
            "(none)",
            None,
            details,
        ),
        Row(
            "fan-out: the same map, `max_concurrency: 1`; overhead per branch",
            f"{fan1:.2f} s ({fan1 / n * 1000:.0f} ms/branch; +{per_branch * 1000:.0f} ms/branch: "
            f"a process {parts[0]:.0f}, its worktree {parts[1]:.0f}, the fan-out {parts[2]:.0f}); "
            f"CPU {cpu['fan1']:.0f} ms/branch (a process {cpu_parts[0]:.0f}, its worktree "
            f"{cpu_parts[1]:.0f}, the fan-out {cpu_parts[2]:.0f})",
            sub,
            f"{fan1 / seq:.2f}x",
            "(none)",
            None,
            {
                "overhead_seconds_per_branch": per_branch,
                "process_worktree_fanout_ms": parts,
                "process_worktree_fanout_cpu_ms": cpu_parts,
            },
        ),
    ]


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(markdown(bench_fanout(count, rounds)))
