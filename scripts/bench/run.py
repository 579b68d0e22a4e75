"""Run the ll-loop benchmarks through the real `ll-loop` console script and print a table.

Benchmarks, each against a baseline measured in the same run (alternating, so a
busy machine slows both sides alike):

* startup: `ll-loop --help` and `ll-loop validate X` against `python -c pass` of the same
  venv; targets <= 3x and <= 4x (median of the per-round ratios);
* per-iteration overhead: `ll-loop run --quiet` of a loop whose one state runs `true` 500
  times against 500 bare `subprocess.run(["bash", "-c", "true"])`; target <= 1.25x; and the
  cost of a step without start-up (the executor, event log and runner of `ll-loop run`,
  in-process, alternating with bare calls); target <= 0.3 ms;
* memory: peak RSS of `ll-loop run --quiet` while an action prints 200 MB, with and without
  `capture:` on that state; target <= 80 MiB, state file <= 1 MiB;
* validate throughput: 500 loop files (raw FSM and paradigm files) in one `ll-loop validate`;
* reuse (reuse.py): validating loops that import fragment libraries against the same loops
  compiled to plain ones, one (target <= 1.3x) and 200 in one call;
* a long run (long_run.py): `status`, `history --tail 5` and `history` after a
  1,000,000-step `maintain` run (100,000 with --quick): < 0.2 s, <= 50 MiB (history: 100 MiB).
  And `ll-loop watch` drawn on it, headless at 80x24 (watch_open.py): < 1 s.
* `ll-loop watch` over 600 and 2,000 runs, one live (watch_many.py): the longest its screen
  thread is kept from keys and drawing < 250 ms; a refresh's reading, and the time until
  every run is listed.
* fan-out (fanout.py): a 50-item `map:` of `true` (all at once, and one at a time) against
  50 sequential sub-loop runs of the same child, and the overhead per branch.

Usage: scripts/dev bench [--quick] [--json]. Exit 1 when a target is missed.
`scripts/dev bench --compare REV [--rounds N]`: the headline benchmarks for git revision REV
and the working tree in alternating rounds, one table (compare.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
LL_LOOP = BIN / "ll-loop"
MIB = 1024 * 1024
PACKAGE = Path(__file__).resolve().parents[1] / "little_loops"
# Children may write and read bytecode, as an installed ll-loop does (pip compiles it).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

HELLO = """\
name: hello
initial: check
context:
  marker: flag
states:
  check:
    action: test -f "${context.marker}" && echo present || { echo missing; exit 1; }
    on_success: done
    on_failure: fix
  fix:
    action: touch "${context.marker}"
    next: check
  done:
    terminal: true
max_iterations: 5
"""

SPIN = """\
name: spin
initial: work
max_iterations: {n}
states:
  work:
    action: "true"
    on_success: $current
    on_failure: $current
  done:
    terminal: true
"""

BIG = """\
name: big
initial: shout
states:
  shout:
    action: "head -c {size} /dev/zero | tr '\\\\0' x"{capture}
    on_success: done
    on_failure: done
  done:
    terminal: true
"""

# Runs a command and prints the peak RSS (KiB) of it and everything it waited for.
RSS_HELPER = """\
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@dataclass
class Row:
    """One line of the table."""

    benchmark: str
    measured: str
    baseline: str
    ratio: str
    target: str
    met: bool | None  # None: no target
    details: dict[str, object] = field(default_factory=dict)


def timed(argv: Sequence[str | Path], cwd: Path | None = None, expect: int = 0) -> float:
    """Wall seconds of one run of *argv*; fails loudly if it exits with another code."""
    start = time.perf_counter()
    proc = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != expect:
        detail = proc.stderr.decode(errors="replace").strip()[-500:]
        raise SystemExit(f"bench: {argv} exited {proc.returncode}, expected {expect}: {detail}")
    return elapsed


def project(root: Path, loops: dict[str, str]) -> Path:
    """A throwaway loop project in *root* with `.loops/NAME.yaml` for each of *loops*."""
    (root / ".loops").mkdir(parents=True, exist_ok=True)
    for name, text in loops.items():
        (root / ".loops" / f"{name}.yaml").write_text(text)
    return root


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# -- startup --------------------------------------------------------------------------------


def bench_startup(rounds: int) -> list[Row]:
    """`ll-loop --help` and `ll-loop validate` against `python -c pass`, alternating."""
    with tempfile.TemporaryDirectory(prefix="ll-bench-startup-") as tmp:
        root = project(Path(tmp), {"hello": HELLO})
        commands: dict[str, list[str | Path]] = {
            "pass": [sys.executable, "-c", "pass"],
            "help": [LL_LOOP, "--help"],
            "validate": [LL_LOOP, "validate", ".loops/hello.yaml"],
        }
        for argv in commands.values():  # warm the page cache and the .pyc files
            timed(argv, root)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                times[name].append(timed(argv, root))
    base = statistics.median(times["pass"])
    rows = []
    # The targets of issue 21: --help <= 3x, validate <= 4x.
    for name, label, target in (
        ("help", "`ll-loop --help`", 3),
        ("validate", "`ll-loop validate X`", 4),
    ):
        ratio = statistics.median(t / b for t, b in zip(times[name], times["pass"], strict=True))
        rows.append(
            Row(
                f"startup: {label}",
                ms(statistics.median(times[name])),
                f"{ms(base)} (`python -c pass`)",
                f"{ratio:.2f}x",
                f"<= {target}x",
                ratio <= target,
                {"rounds": rounds, "seconds": times[name], "baseline_seconds": times["pass"]},
            )
        )
    return rows


# -- per-iteration overhead -----------------------------------------------------------------


def bare_bash(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(["bash", "-c", "true"], check=False, env=ENV)
    return time.perf_counter() - start


def spin_run(root: Path, n: int) -> float:
    """Seconds of `ll-loop run --quiet` of a loop of n `true` actions (checked: exactly n)."""
    project(root, {"spin": SPIN.format(n=n)})
    # Exit 3: the loop ends by max_iterations after exactly n actions.
    loop = timed([LL_LOOP, "run", "spin", "--quiet"], root, expect=3)
    events = (root / ".loops/.running/spin.events.jsonl").read_text().splitlines()
    actions = sum('"event":"action_start"' in line for line in events)
    if actions != n:
        raise SystemExit(f"bench: the loop ran {actions} actions, expected {n}")
    return loop


# One step of `ll-loop run` without its start-up: the executor, the event log and the
# runner `ll-loop run` uses, in this process, against bare bash calls from it. A warm-up
# run (not counted) pays for the imports and first uses a step makes; then each round
# times RUNS runs of N steps and RUNS of 1 step, each in a fresh folder, alternating with
# N - 1 bare calls: a run of N steps less a run of 1 is N - 1 steps without the run's start
# and end (its first and last events, the archive). Each round prints the steps counted,
# the median wall seconds of the bare calls and of the steps, then the same in CPU seconds
# of this process (not of bash): the step's own work, which a busy machine blurs least;
# last, how many modules the counted runs imported (0: no first use was counted). It
# imports the seed paths (fsm.schema, fsm.persistence), which every revision keeps:
# `--compare REV` runs it there too.
STEPS_IN_PROCESS = """\
import resource, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.schema import FSMLoop, StateConfig
from little_loops.fsm.persistence import PersistentExecutor

n, rounds, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
work = StateConfig(action="true", on_success="$current", on_failure="$current")
root = Path(tempfile.mkdtemp(prefix="ll-bench-steps-"))
folders = iter(range(10**9))
def cpu():
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime
def bare():
    start, used = time.perf_counter(), cpu()
    for _ in range(n - 1):
        subprocess.run(["bash", "-c", "true"], check=False)
    return time.perf_counter() - start, cpu() - used
def loop(steps):
    fsm = FSMLoop(name="spin", initial="w", states={"w": work}, max_iterations=steps)
    folder = root / str(next(folders))
    start, used = time.perf_counter(), cpu()
    runner = DefaultActionRunner(cwd=folder)
    result = PersistentExecutor(fsm, loops_dir=folder / ".loops", action_runner=runner).run()
    took = time.perf_counter() - start, cpu() - used
    assert result.iterations == steps, result
    return took
bare(), loop(n), loop(1)  # the warm-up
for _ in range(rounds):
    modules = len(sys.modules)
    bares, steps = [], []
    for _ in range(runs):
        bares.append(bare())
        long, short = loop(n), loop(1)
        steps.append((long[0] - short[0], long[1] - short[1]))
    median = [statistics.median(t[k] for t in times) for times in (bares, steps) for k in (0, 1)]
    print(n - 1, *median, len(sys.modules) - modules)
"""


def steps_in_process(
    n: int, rounds: int, runs: int, env: dict[str, str], cwd: Path | None = None
) -> list[tuple[float, float]]:
    """Each round's (wall, CPU) milliseconds a step costs on top of bash (STEPS_IN_PROCESS)."""
    out = subprocess.run(
        [sys.executable, "-c", STEPS_IN_PROCESS, str(n), str(rounds), str(runs)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    figures = []
    for line in out:
        steps, bare, bare_cpu, loop, loop_cpu, imported = line.split()  # the order printed
        if int(imported):
            raise SystemExit(f"bench: the counted steps imported {imported} modules")
        count = int(steps)
        figures.append(
            (
                (float(loop) - float(bare)) / count * 1000,
                (float(loop_cpu) - float(bare_cpu)) / count * 1000,
            )
        )
    return figures


def bench_iterations(n: int, rounds: int) -> list[Row]:
    """A loop of n `true` actions via `ll-loop run --quiet` against n bare bash calls, and
    the cost of a step without start-up: the same n steps run in-process by the code
    `ll-loop run` uses, against n bare calls from that process, alternating."""
    loop_times, bare_times, ratios = [], [], []
    with tempfile.TemporaryDirectory(prefix="ll-bench-loop-") as tmp:
        root = Path(tmp)
        for _ in range(rounds):
            bare = bare_bash(n)
            loop = spin_run(root, n)
            bare_times.append(bare)
            loop_times.append(loop)
            ratios.append(loop / bare)
    figures = steps_in_process(n, rounds, 3, ENV)  # each round the median of 3 runs
    extra = [wall / 1000 for wall, _ in figures]
    extra_cpu = [used / 1000 for _, used in figures]
    ratio = statistics.median(ratios)
    per_loop = statistics.median(loop_times) / n
    per_bare = statistics.median(bare_times) / n
    per_step = statistics.median(extra)
    details = {"rounds": rounds, "loop_seconds": loop_times, "bare_seconds": bare_times}
    return [
        Row(
            f"per-iteration: {n} x `true` via `ll-loop run`",
            f"{statistics.median(loop_times):.2f} s ({per_loop * 1000:.2f} ms/iter)",
            f"{statistics.median(bare_times):.2f} s ({per_bare * 1000:.2f} ms/call, bare bash)",
            f"{ratio:.2f}x",
            "<= 1.25x",
            ratio <= 1.25,
            details,
        ),
        Row(
            "per-step overhead: a step of `true` without start-up (engine, log, runner)",
            f"{per_step * 1000:.3f} ms/step on top of bash "
            f"({statistics.median(extra_cpu) * 1000:.3f} ms of CPU)",
            f"{per_bare * 1000:.2f} ms/call (bare bash)",
            "-",
            "<= 0.3 ms",
            per_step <= 0.0003,
            {"overhead_seconds_per_step": extra, "overhead_cpu_seconds_per_step": extra_cpu},
        ),
    ]


# -- memory ---------------------------------------------------------------------------------


def peak_rss(argv: Sequence[str | Path], cwd: Path) -> tuple[int, int]:
    """(exit code, peak RSS in KiB) of *argv*, measured by a fresh helper process."""
    proc = subprocess.run(
        [sys.executable, "-c", RSS_HELPER, *map(str, argv)],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    code, kib = proc.stdout.split()
    return int(code), int(kib)


def bench_memory(size: int) -> list[Row]:
    """Peak RSS and file sizes of a run whose action prints *size* bytes."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="ll-bench-memory-") as tmp:
        root = project(Path(tmp), {"hello": HELLO})
        _, idle_kib = peak_rss([LL_LOOP, "--help"], root)
        for capture in (False, True):
            text = BIG.format(size=size, capture="\n    capture: big" if capture else "")
            project(root, {"big": text})
            start = time.perf_counter()
            code, kib = peak_rss([LL_LOOP, "run", "big", "--quiet"], root)
            seconds = time.perf_counter() - start
            if code != 0:
                raise SystemExit(f"bench: the 200 MB loop exited {code}")
            running = root / ".loops/.running"
            state = (running / "big.state.json").stat().st_size
            events = (running / "big.events.jsonl").stat().st_size
            out = (running / "big.shout.out").stat().st_size
            if out != size:
                raise SystemExit(f"bench: the output file has {out} bytes, expected {size}")
            label = "with `capture:`" if capture else "no capture"
            rows.append(
                Row(
                    f"memory: action prints {size // 1_000_000} MB, {label}",
                    f"peak RSS {kib / 1024:.1f} MiB; state file {state / 1024:.1f} KiB; "
                    f"events {events / 1024:.1f} KiB",
                    f"{idle_kib / 1024:.1f} MiB (`ll-loop --help`)",
                    "-",
                    "RSS <= 80 MiB, state <= 1 MiB",
                    kib <= 80 * 1024 and state <= MIB,
                    {
                        "peak_rss_kib": kib,
                        "state_bytes": state,
                        "events_bytes": events,
                        "output_file_bytes": out,
                        "seconds": seconds,
                    },
                )
            )
    return rows


# -- validate throughput --------------------------------------------------------------------


def loop_file(i: int) -> str:
    """The i-th generated loop file: five shapes, all valid, each with its own name."""
    kind = i % 5
    if kind == 0:
        return HELLO.replace("name: hello", f"name: fsm-{i}").replace("flag", f"flag-{i}")
    if kind == 1:
        return textwrap.dedent(
            f"""\
            paradigm: goal
            name: goal-{i}
            goal: "no type errors in pkg{i}/"
            tools:
              - mypy pkg{i}/
              - /ll:manage_issue bug fix
            max_iterations: {10 + i % 7}
            """
        )
    if kind == 2:
        return textwrap.dedent(
            f"""\
            paradigm: convergence
            name: converge-{i}
            check: "ruff check src{i}/ | wc -l"
            toward: 0
            using: "ruff check --fix src{i}/"
            tolerance: {i % 3}
            """
        )
    if kind == 3:
        return textwrap.dedent(
            f"""\
            paradigm: imperative
            name: steps-{i}
            steps:
              - echo step one {i}
              - echo step two {i}
            until:
              check: "test -f done-{i}"
              passes: true
            max_iterations: 20
            """
        )
    states = "\n".join(
        f"""\
  s{k}:
    action: "echo {i}-{k} && test {k} -lt 3"
    capture: out{k}
    evaluate:
      type: output_contains
      pattern: "{i}-{k}"
    on_success: s{k + 1}
    on_failure: s0
    on_error: done"""
        for k in range(6)
    )
    return (
        f"name: chain-{i}\ninitial: s0\nmax_iterations: 50\nstates:\n{states}\n"
        "  s6:\n    next: done\n  done:\n    terminal: true\n"
    )


def bench_validate(count: int, rounds: int) -> Row:
    """One `ll-loop validate` call on *count* distinct loop files."""
    times = []
    with tempfile.TemporaryDirectory(prefix="ll-bench-validate-") as tmp:
        root = project(Path(tmp), {})
        paths = []
        for i in range(count):
            path = root / ".loops" / f"gen-{i:04d}.yaml"
            path.write_text(loop_file(i))
            paths.append(str(path.relative_to(root)))
        argv: list[str | Path] = [LL_LOOP, "validate", "--quiet", *paths]
        timed(argv, root)  # warm
        for _ in range(rounds):
            times.append(timed(argv, root))
    total = statistics.median(times)
    return Row(
        f"validate throughput: {count} files in one call",
        f"{total:.2f} s ({count / total:.0f} files/s)",
        "-",
        "-",
        "(none)",
        None,
        {"rounds": rounds, "seconds": times},
    )


# -- report ---------------------------------------------------------------------------------


def markdown(rows: Sequence[Row]) -> str:
    lines = [
        "| benchmark | measured | baseline | ratio | target | met? |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        met = "-" if row.met is None else ("yes" if row.met else "**no**")
        lines.append(
            f"| {row.benchmark} | {row.measured} | {row.baseline} | {row.ratio} "
            f"| {row.target} | {met} |"
        )
    return "\n".join(lines)


def machine() -> str:
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument(
        "--compare",
        metavar="REV",
        help="only the headline benchmarks, for REV and the working tree side by side",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --compare (5)")
    args = parser.parse_args(argv)
    if args.compare:
        import compare

        return compare.main(args.compare, args.rounds, args.json)
    import long_run  # here: it imports this module's helpers

    if not LL_LOOP.exists():
        raise SystemExit(f"bench: {LL_LOOP} not found; run it with the venv's python")
    steps: list[tuple[str, Callable[[], list[Row]]]] = [
        ("startup", lambda: bench_startup(5 if args.quick else 15)),
        ("per-iteration", lambda: bench_iterations(500, 1 if args.quick else 3)),
        ("memory", lambda: bench_memory(200_000_000)),
        ("validate", lambda: [bench_validate(500, 1 if args.quick else 3)]),
        ("reuse", lambda: __import__("reuse").bench_reuse(3 if args.quick else 9)),
        ("validation size", lambda: __import__("graphs").bench_graphs()),
        ("long run", lambda: long_run.bench_long_run(100_000 if args.quick else 1_000_000)),
        ("report", lambda: __import__("report").bench_report(1 if args.quick else 3)),
        ("sandbox", lambda: __import__("sandbox").bench_sandbox(200, 1 if args.quick else 3)),
        ("watch, many runs", lambda: __import__("watch_many").bench_watch_many((600, 2000))),
        ("fan-out", lambda: __import__("fanout").bench_fanout(50, 1 if args.quick else 3)),
    ]
    # Bytecode as `pip install` leaves it; an editable install may not have it yet.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PACKAGE)], env=ENV, check=True)
    rows: list[Row] = []
    for name, step in steps:
        print(f"bench: {name}...", file=sys.stderr, flush=True)
        rows.extend(step())
    if args.json:
        json.dump({"machine": machine(), "rows": [asdict(r) for r in rows]}, sys.stdout, indent=2)
        print()
    else:
        print(f"Machine: {machine()}\n")
        print(markdown(rows))
    return 1 if any(row.met is False for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
