"""Reuse: `ll-loop validate` of loops that import fragment libraries, against the same loops
written out plain (`ll-loop compile` of each), alternating in one run.

* start-up: one such loop (two libraries, one importing the other; ten states taking
  fragments, most with `with:` parameters) against its plain form; target <= 1.3x;
* throughput: 200 such loops in one call against their 200 plain forms (no target).

Usage: `python scripts/bench/reuse.py` prints the table.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from run import LL_LOOP, Row, markdown, ms, project, timed

TARGET_RATIO = 1.3

CHECKS = """\
fragments:
  shell_exit:
    description: a shell command judged by its exit code
    action_type: shell
    evaluate:
      type: exit_code
  counter:
    parameters:
      key: {type: string, required: true}
      limit: {type: integer, default: 3}
    action_type: shell
    action: |
      n=$(( $(cat .count-${param.key} 2>/dev/null || echo 0) + 1 ))
      echo $n > .count-${param.key}; echo $n
    evaluate:
      type: output_numeric
      operator: le
      target: "${param.limit}"
"""
PROMPTS = """\
import:
  - checks.yaml
fragments:
  review:
    parameters:
      topic: {type: string, required: true}
    action_type: prompt
    action: "Review ${param.topic} and fix what is wrong."
    evaluate:
      type: llm_structured
      prompt: "Is ${param.topic} fixed?"
"""


def reuse_loop(i: int) -> str:
    """A loop importing both libraries: ten states alternating check, count and review."""
    states = []
    for k in range(10):
        kind = k % 3
        on = f"    on_success: s{k + 1}\n    on_failure: s0\n"
        if kind == 0:
            states.append(f"  s{k}:\n    fragment: shell_exit\n    action: test -f f{i}-{k}\n{on}")
        elif kind == 1:
            states.append(f"  s{k}:\n    fragment: counter\n    with:\n      key: c{i}-{k}\n{on}")
        else:
            states.append(f"  s{k}:\n    fragment: review\n    with:\n      topic: part {k}\n{on}")
    return (
        f"name: reuse-{i}\nimport:\n  - lib/checks.yaml\n  - lib/prompts.yaml\n"
        f"initial: s0\nmax_iterations: 20\nstates:\n{''.join(states)}"
        "  s10:\n    terminal: true\n"
    )


def write_pairs(root: Path, count: int) -> tuple[list[str], list[str]]:
    """*count* loops importing the libraries, and each one's plain form (compiled)."""
    project(root, {})
    (root / ".loops" / "lib").mkdir()
    (root / ".loops" / "lib" / "checks.yaml").write_text(CHECKS)
    (root / ".loops" / "lib" / "prompts.yaml").write_text(PROMPTS)
    reused, plain = [], []
    for i in range(count):
        (root / ".loops" / f"reuse-{i}.yaml").write_text(reuse_loop(i))
        reused.append(f".loops/reuse-{i}.yaml")
        out = root / ".loops" / f"plain-{i}.yaml"
        timed([LL_LOOP, "compile", reused[-1], "-o", out], root)
        out.write_text(out.read_text().replace(f"name: reuse-{i}", f"name: plain-{i}"))
        plain.append(str(out.relative_to(root)))
    return reused, plain


def bench_reuse(rounds: int, count: int = 200) -> list[Row]:
    """Start-up and throughput of validating loops that import fragment libraries."""
    with tempfile.TemporaryDirectory(prefix="ll-bench-reuse-") as tmp:
        root = Path(tmp)
        reused, plain = write_pairs(root, count)
        one = {"plain": [LL_LOOP, "validate", plain[0]], "reuse": [LL_LOOP, "validate", reused[0]]}
        many = {
            "plain": [LL_LOOP, "validate", "--quiet", *plain],
            "reuse": [LL_LOOP, "validate", "--quiet", *reused],
        }
        for argv in [*one.values(), *many.values()]:
            timed(argv, root)  # warm
        times: dict[str, list[float]] = {f"{k}-{w}": [] for k in ("one", "many") for w in one}
        for _ in range(rounds):
            for which in ("plain", "reuse"):
                times[f"one-{which}"].append(timed(one[which], root))
                times[f"many-{which}"].append(timed(many[which], root))
    startup = statistics.median(
        r / p for r, p in zip(times["one-reuse"], times["one-plain"], strict=True)
    )
    bulk = statistics.median(
        r / p for r, p in zip(times["many-reuse"], times["many-plain"], strict=True)
    )
    return [
        Row(
            "startup: `ll-loop validate X`, X importing 2 fragment libraries",
            ms(statistics.median(times["one-reuse"])),
            f"{ms(statistics.median(times['one-plain']))} (X compiled to a plain loop)",
            f"{startup:.2f}x",
            f"<= {TARGET_RATIO}x",
            startup <= TARGET_RATIO,
            {"rounds": rounds, "seconds": times["one-reuse"], "baseline": times["one-plain"]},
        ),
        Row(
            f"validate throughput: {count} files importing fragment libraries",
            f"{statistics.median(times['many-reuse']):.2f} s",
            f"{statistics.median(times['many-plain']):.2f} s (the same, compiled to plain loops)",
            f"{bulk:.2f}x",
            "(none)",
            None,
            {"rounds": rounds, "seconds": times["many-reuse"], "baseline": times["many-plain"]},
        ),
    ]


if __name__ == "__main__":
    print(markdown(bench_reuse(int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
