"""`scripts/dev bench --compare REV`: the headline benchmarks for REV and the working tree.

REV is checked out with `git worktree add --detach` into a temp folder; each side's package
is byte-compiled, then run by this venv's interpreter and console script with its own
`scripts/` first on `PYTHONPATH` (the venv's editable install is only a fallback). Rounds
alternate the two sides (which goes first flips each round), so a busy machine slows both
alike; each figure is the median of the rounds, a ratio the median of the per-round ratios.

Measured on each side: `ll-loop validate X` against `python -c pass`; `ll-loop run` of 500
steps of `true` against 500 `bash -c true`; the per-step overhead without start-up; validate
of a 2,000-state chain whose every state captures its own name and reads the one before
(2,000 captures); validate of a 20,000-state ring; `ll-loop history --tail 5` after a
20,000-step run; peak RSS of a run whose action prints 200 MB into a capture.

Usage: scripts/dev bench --compare REV [--rounds N] [--json]. Exit 1 when the working
tree misses a target.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graphs import captures_loop, ring_loop
from long_run import LONG, RUN_LONG
from run import BIG, ENV, HELLO, LL_LOOP, RSS_HELPER, SPIN, machine, steps_in_process

ROOT = Path(__file__).resolve().parents[2]
STEP_RUNS = 3  # measured runs of the steps per side and round (their median), after a warm-up


@dataclass(frozen=True)
class Sizes:
    """How big each bench is (smaller in the test of this script)."""

    steps: int = 500
    captures: int = 2_000
    ring: int = 20_000
    long_steps: int = 20_000
    output_bytes: int = 200_000_000


@dataclass
class Side:
    """One side of the comparison: a checkout's `scripts/` folder and the environment that
    makes this venv run its package."""

    label: str
    scripts: Path
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = {**ENV, "PYTHONPATH": str(self.scripts)}


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: Sequence[str | Path], side: Side, cwd: Path, expect: int = 0) -> tuple[float, float]:
    """Wall and CPU seconds of *argv* run with *side*'s package; fails loudly on another
    exit code. The CPU time is what a machine busy with other work blurs least."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=side.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    took = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != expect:
        detail = proc.stderr.decode(errors="replace").strip()[-500:]
        raise SystemExit(
            f"bench: [{side.label}] {argv} exited {proc.returncode}, expected {expect}: {detail}"
        )
    return took


def write(root: Path, name: str, text: str) -> Path:
    (root / ".loops").mkdir(parents=True, exist_ok=True)
    path = root / ".loops" / f"{name}.yaml"
    path.write_text(text)
    return path


def validate_ratio(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    """`ll-loop validate` of the hello loop over `python -c pass`, the medians of 3 each."""
    write(root, "hello", HELLO)
    passes, validates = [], []
    for _ in range(3):
        passes.append(run([sys.executable, "-c", "pass"], side, root))
        validates.append(run([LL_LOOP, "validate", ".loops/hello.yaml"], side, root))
    wall, cpu = (
        statistics.median(v[k] for v in validates) / statistics.median(p[k] for p in passes)
        for k in (0, 1)
    )
    return wall, cpu


def spin_ratio(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    """`ll-loop run` of N steps of `true` over N `bash -c true` from this process."""
    write(root, "spin", SPIN.format(n=sizes.steps))
    cpu, start = children_cpu(), time.perf_counter()
    for _ in range(sizes.steps):
        subprocess.run(["bash", "-c", "true"], check=False, env=side.env)
    bare = time.perf_counter() - start, children_cpu() - cpu
    loop = run([LL_LOOP, "run", "spin", "--quiet"], side, root, expect=3)
    events = (root / ".loops/.running/spin.events.jsonl").read_text().splitlines()
    if sum('"event":"action_start"' in line for line in events) != sizes.steps:
        raise SystemExit(f"bench: [{side.label}] the spin loop did not run {sizes.steps} actions")
    return loop[0] / bare[0], loop[1] / bare[1]


def step_overhead(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    """Milliseconds a step of `true` costs on top of bash, in-process (engine, log, runner),
    without the run's start-up or its first uses (run.steps_in_process): of the wall clock,
    and of the process's own CPU (on top of what a bare call costs it)."""
    return steps_in_process(sizes.steps, 1, STEP_RUNS, side.env, cwd=root)[0]


def validate_captures(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    path = write(root, "captures", captures_loop(sizes.captures))
    return run([LL_LOOP, "validate", "--quiet", path], side, root)


def validate_ring(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    path = write(root, "ring", ring_loop(sizes.ring))
    return run([LL_LOOP, "validate", "--quiet", path], side, root)


def history_tail(side: Side, root: Path, sizes: Sizes) -> tuple[float, float]:
    """`ll-loop history long --tail 5` after a long run (made once per side)."""
    if not (root / ".loops/.running/long.state.json").exists():
        write(root, "long", LONG.format(n=sizes.long_steps))
        subprocess.run([sys.executable, "-c", RUN_LONG], cwd=root, env=side.env, check=True)
    return run([LL_LOOP, "history", "long", "--tail", "5"], side, root)


def output_memory(side: Side, root: Path, sizes: Sizes) -> tuple[float, None]:
    """Peak RSS (MiB) of `ll-loop run` while its action prints into a capture."""
    write(root, "big", BIG.format(size=sizes.output_bytes, capture="\n    capture: big"))
    proc = subprocess.run(
        [sys.executable, "-c", RSS_HELPER, str(LL_LOOP), "run", "big", "--quiet"],
        cwd=root,
        env=side.env,
        capture_output=True,
        text=True,
        check=True,
    )
    code, kib = proc.stdout.split()
    if code != "0":
        raise SystemExit(f"bench: [{side.label}] the big-output loop exited {code}")
    return int(kib) / 1024, None


@dataclass
class Bench:
    """One row: what is measured, its unit, its target (None: none) and how to measure."""

    label: str
    unit: str
    target: float | None
    measure: Callable[[Side, Path, Sizes], tuple[float, float | None]]


def benches(sizes: Sizes) -> list[Bench]:
    """The rows of the table, in order."""
    return [
        Bench("`ll-loop validate X` / `python -c pass`", "x", 4.0, validate_ratio),
        Bench(
            f"{sizes.steps} steps of `true` / {sizes.steps} x `bash -c true`",
            "x",
            1.25,
            spin_ratio,
        ),
        Bench("per-step overhead (in-process, on top of bash)", "ms", 0.3, step_overhead),
        Bench(f"validate a loop with {sizes.captures:,} captures", "s", 0.4, validate_captures),
        Bench(f"validate a {sizes.ring:,}-state ring", "s", 1.3, validate_ring),
        Bench(f"`history --tail 5` after {sizes.long_steps:,} steps", "s", 0.2, history_tail),
        Bench(
            f"peak RSS, action prints {sizes.output_bytes / 1e6:g} MB into a capture",
            "MiB",
            80.0,
            output_memory,
        ),
    ]


def checkout(rev: str, into: Path) -> Path:
    """REV checked out (detached) at *into*; its `scripts/` folder."""
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(into), rev],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["git worktree add failed"])[-1]
        raise SystemExit(f"bench: cannot check out {rev!r}: {why}")
    return into / "scripts"


def compile_bytecode(scripts: Path) -> None:
    """Byte-compile a side's package, as `pip install` leaves it."""
    package = scripts / "little_loops"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=ENV, check=True)


def fmt(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "ms":
        return f"{value:.3f} ms"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    return f"{value:.3f} s"


def compare(rev: str, rounds: int, sizes: Sizes | None = None) -> dict[str, Any]:
    """Every bench for REV and the working tree over *rounds* alternating rounds: for each
    bench and side, its (wall, CPU) figure of each round."""
    if rounds < 1:
        raise SystemExit("bench: --rounds must be at least 1")
    sizes = sizes or Sizes()
    rows = benches(sizes)
    with tempfile.TemporaryDirectory(prefix="ll-bench-compare-") as tmp:
        base = Path(tmp)
        sides = [Side(rev, checkout(rev, base / "rev")), Side("working tree", ROOT / "scripts")]
        try:
            for side in sides:
                compile_bytecode(side.scripts)
            figures: dict[str, dict[str, list[tuple[float, float | None]]]] = {
                b.label: {s.label: [] for s in sides} for b in rows
            }
            for i in range(rounds):
                print(f"bench --compare: round {i + 1} of {rounds}", file=sys.stderr, flush=True)
                order = sides if i % 2 == 0 else sides[::-1]
                for n, bench in enumerate(rows):
                    for side in order:
                        root = base / f"side{sides.index(side)}" / str(n)
                        root.mkdir(parents=True, exist_ok=True)
                        figures[bench.label][side.label].append(bench.measure(side, root, sizes))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base / "rev")],
                check=False,
            )
    return {
        "rev": rev,
        "rounds": rounds,
        "machine": machine(),
        "load_average": os.getloadavg()[0],
        "sizes": asdict(sizes),
        "figures": figures,
    }


def _median(figures: list[tuple[float, float | None]], k: int) -> float | None:
    values = [f[k] for f in figures if f[k] is not None]
    return statistics.median(values) if values else None  # type: ignore[type-var]


def table(result: dict[str, Any]) -> tuple[str, bool]:
    """The Markdown table of *result* and whether the working tree meets every target (by
    the wall clock, as the targets are set)."""
    rev, tree = str(result["rev"]), "working tree"
    lines = [
        f"| benchmark (median of {result['rounds']} rounds) | {rev} | working tree "
        f"| tree / {rev} | CPU: {rev} | CPU: tree | CPU: tree / {rev} | target | met? |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    ok = True
    for bench in benches(Sizes(**result["sizes"])):
        figures = result["figures"][bench.label]
        cells = []
        for k in (0, 1):
            old, new = _median(figures[rev], k), _median(figures[tree], k)
            if old is None or new is None:
                cells += ["-", "-", "-"]
                continue
            cells += [fmt(old, bench.unit), fmt(new, bench.unit)]
            cells.append(f"{new / old:.2f}" if old > 0 else "-")
        met = "-"
        new_wall = _median(figures[tree], 0)
        if bench.target is not None and new_wall is not None:
            met = "yes" if new_wall <= bench.target else "**no**"
            ok &= new_wall <= bench.target
        target = fmt(bench.target, bench.unit) if bench.target is not None else "-"
        lines.append(f"| {bench.label} | {' | '.join(cells)} | <= {target} | {met} |")
    return "\n".join(lines), ok


def main(rev: str, rounds: int, as_json: bool) -> int:
    # Stopped by SIGTERM as by Ctrl-C: the checkout of REV and the temp folder are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        result = compare(rev, rounds)
    except KeyboardInterrupt:
        print("bench --compare: interrupted", file=sys.stderr)
        return 130
    text, ok = table(result)
    if as_json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print(f"Machine: {result['machine']}; load average {result['load_average']:.1f}\n")
        print(text)
    return 0 if ok else 1
