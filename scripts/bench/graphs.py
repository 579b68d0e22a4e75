"""Validation size: `ll-loop validate` of 20,000-state loops and of nested context values.

Three shapes of a big loop file, each written by a generator below:

* chain: s0 -> s1 -> ... -> done, every state moving on with `next:`;
* ring: the chain closed back to s0, with one way out (the last state routes on its exit
  code: on_success: done, on_failure: s0);
* dense: every state captures, reads the capture of the state before it and routes each
  verdict to another state, one in two with `on_success/on_failure/on_error`, the other
  with a `route:` table.

Then a chain of 2,000 states each capturing its output and reading the capture of the one
before (`captures_loop`, also compare.py's), with its own target of 0.4 s.

And a context whose values each repeat the one before four times (`a2` is
`${context.a1}` x4, ...): validation must not expand it, and past the size limit it is an
error. Usage: `python scripts/bench/graphs.py [STATES]` prints the table for one size.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from run import LL_LOOP, Row, project, timed

STATES = 20_000
TARGET_SECONDS = 2.0
# A chain whose every state captures and reads the capture before it, and its target (the
# issue's: it is where the used-before-set and reference checks scale).
CAPTURES = 2_000
CAPTURES_TARGET_SECONDS = 0.4
# Levels of the nested context: the last value expands to 4**(levels-1) characters.
NESTED_OK = 10  # 256 KiB: valid
NESTED_TOO_BIG = 12  # 4 MiB: past the limit, an error


def chain_loop(n: int) -> str:
    """s0 -> s1 -> ... -> s{n-1} -> done, with `next:`."""
    states = [f"  s{i}:\n    action: echo {i}\n    next: s{i + 1}\n" for i in range(n - 1)]
    states.append(f"  s{n - 1}:\n    action: echo {n - 1}\n    next: done\n")
    return _loop("chain", states)


def ring_loop(n: int) -> str:
    """The chain closed back to s0; the last state leaves for `done` when its test passes."""
    states = [f"  s{i}:\n    action: echo {i}\n    next: s{i + 1}\n" for i in range(n - 1)]
    states.append(
        f"  s{n - 1}:\n    action: test -f stop\n    on_success: done\n    on_failure: s0\n"
    )
    return _loop("ring", states)


def captures_loop(n: int) -> str:
    """s0 -> ... -> s{n-1} -> done; state i captures `c{i}` and reads `c{i-1}`."""
    states = ["  s0:\n    action: echo 0\n    capture: c0\n    next: s1\n"]
    for i in range(1, n):
        after = "done" if i == n - 1 else f"s{i + 1}"
        states.append(
            f"  s{i}:\n    action: echo ${{captured.c{i - 1}.exit_code}}\n"
            f"    capture: c{i}\n    next: {after}\n"
        )
    return _loop("captures", states)


def dense_loop(n: int, captures: bool = False) -> str:
    """Every state routes each verdict somewhere else; shorthand and route tables alternate.

    With *captures*, every state also captures its output and reads the capture of the
    state before it (`${captured.out.exit_code}`), for the used-before-set analysis.
    """
    states = []
    for i in range(n):
        after = "done" if i == n - 1 else f"s{i + 1}"
        back, far = f"s{i // 2}", f"s{(i * 7 + 3) % n}"
        head = f"  s{i}:\n    action: echo {i}\n"
        if i == 0:
            head = "  s0:\n    action: echo ${context.word}\n"
        elif captures:
            head = f"  s{i}:\n    action: echo {i} ${{captured.out.exit_code}}\n"
        if captures:
            head += "    capture: out\n"
        if i % 2:
            ways = f"    route:\n      success: {after}\n      failure: {far}\n"
            ways += f"      _error: {back}\n"
        else:
            ways = f"    on_success: {after}\n    on_failure: {back}\n    on_error: {far}\n"
        states.append(head + ways)
    return _loop("dense", states, context="context:\n  word: hello\n")


def nested_context_loop(levels: int) -> str:
    """`a1: x`, and each `aN` the one before four times; one state uses the last."""
    values = ["  a1: x\n"]
    values += [f'  a{k}: "{f"${{context.a{k - 1}}}" * 4}"\n' for k in range(2, levels + 1)]
    state = f"  s0:\n    action: echo ${{context.a{levels}}} > /dev/null\n    next: done\n"
    return _loop("nested", [state], context="context:\n" + "".join(values))


def _loop(name: str, states: list[str], context: str = "") -> str:
    return (
        f"name: {name}\ninitial: s0\nmax_iterations: 10\n{context}states:\n"
        + "".join(states)
        + "  done:\n    terminal: true\n"
    )


SHAPES: dict[str, Callable[[int], str]] = {
    "chain": chain_loop,
    "ring": ring_loop,
    "dense": dense_loop,
}


def bench_graphs(states: int = STATES, captures: int = CAPTURES) -> list[Row]:
    """`ll-loop validate` of each shape at *states* states, of a chain of *captures*
    captures, and of nested context values."""
    # (label, loop file, exit code of validate, the time's target in seconds or None)
    cases: list[tuple[str, str, int, float | None]] = [
        (f"{states:,}-state {shape}", make(states), 0, TARGET_SECONDS)
        for shape, make in SHAPES.items()
    ]
    # Bigger than the dense shape (a capture and a reference per state): no target.
    cases.append((f"{states:,}-state dense, with captures", dense_loop(states, True), 0, None))
    cases.append((f"{captures:,} captures", captures_loop(captures), 0, CAPTURES_TARGET_SECONDS))
    cases.append(
        (f"context nested {NESTED_OK} levels", nested_context_loop(NESTED_OK), 0, TARGET_SECONDS)
    )
    cases.append(
        (
            f"context nested {NESTED_TOO_BIG} levels (an error)",
            nested_context_loop(NESTED_TOO_BIG),
            2,
            TARGET_SECONDS,
        )
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="ll-bench-graphs-") as tmp:
        root = project(Path(tmp), {})
        for i, (label, text, expect, target) in enumerate(cases):
            # Each file goes by its own name (two files of one `name:` are a validate error).
            path = root / ".loops" / f"case-{i}.yaml"
            text = re.sub(r"^name: .*$", f"name: case-{i}", text, count=1, flags=re.M)
            path.write_text(text)
            argv: list[str | Path] = [LL_LOOP, "validate", "--quiet", path]
            seconds = timed(argv, root, expect=expect)
            size = f"{len(text) / 1024:.0f} KiB file"
            rows.append(
                Row(
                    f"validate size: {label}",
                    f"{seconds:.2f} s",
                    size,
                    "-",
                    f"< {target:g} s" if target is not None else "(none)",
                    seconds < target if target is not None else None,
                    {"seconds": seconds, "exit": expect},
                )
            )
    return rows


if __name__ == "__main__":
    from run import markdown

    print(markdown(bench_graphs(int(sys.argv[1]) if len(sys.argv) > 1 else STATES)))
