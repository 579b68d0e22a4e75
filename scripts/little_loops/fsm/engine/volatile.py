"""Mask what differs between two runs of the same command: durations, clock times, pids, temp paths.

`stall: same_result` compares a state's outputs; a test runner prints its duration
(`1 failed in 0.33s`), so no two outputs of an unchanged failure would be the same. Each
rule below is one pattern and the mark it leaves; docs/loop-files.md lists them.
"""

from __future__ import annotations

import re
from functools import cache

# A temporary folder's path: a per-run name (`/tmp/pytest-of-root/pytest-12/test_x0`,
# `/tmp/tmpk3j_x9a2`) is new each run. The whole path is masked, up to a character that
# cannot be part of it in a tool's message (space, quote, colon, bracket, comma).
_TEMP_ROOTS: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm", "/var/folders", "/private/var")
_PATH_TAIL = r"(?:/[^\s'\"`:,;()\[\]<>{}]*)?"
# Durations: a number with a unit of time (`0.33s`, `12 ms`, `1.2 seconds`, `0m0.004s`).
_UNITS = r"(?:ns|us|µs|ms|s|sec|secs|second|seconds|min|mins|minute|minutes|hours?)"
_RULES: tuple[tuple[str, str], ...] = (
    # ISO 8601 date and time (`2026-12-06T23:07:38.123Z`, `2026-12-06 23:07:38+01:00`), also
    # cut short: pytest cuts its summary lines to the terminal's width (`2026-12-06T23:1...`).
    # A date alone is kept: it changes once a day, and a loop's own progress may be dates.
    (
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d(?:[\d:.,]*\d)?(?:Z|[+-]\d{2}:?\d{2})?|(?=[T ]?\.\.\.))",
        "<time>",
    ),
    (r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>"),  # a clock time: 23:07:38, 00:00:01.5
    (r"\b\d+m\d+(?:\.\d+)?s\b", "<duration>"),  # bash's `time`: 0m0.004s
    # pytest adds the clock form past a minute (`in 65.00s (0:01:05)`): one duration, so a
    # suite taking 59 s and then 61 s prints the same masked line.
    (rf"(?<![\w.])\d+(?:\.\d+)?\s?{_UNITS}\b(?: \(\d+:\d{{2}}:\d{{2}}\))?", "<duration>"),
    (r"(?i:\bpid\b)[\s:=#]*\d+", "pid <pid>"),  # `pid 4242`, `PID: 4242`, `pid=4242`
    (r"\b0x[0-9a-fA-F]{6,}\b", "0x<address>"),  # `<Foo object at 0x7f3a2c1b9d60>`
)
# A run of one separator (`=====`, `-----`, spaces) stands for any length: pytest centres
# its summary line, so its `=` padding changes with the length of the masked duration.
_SEPARATORS = r"([=\-_*#~ \t])\1{2,}"


@cache
def _pattern() -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The rules as one pattern (one pass over an output of megabytes) with a group for
    each, and the mark of each group; compiled once, when first used (not at import:
    `ll-loop validate` never needs it). At a place where several match, the first wins."""
    import tempfile

    roots = {*_TEMP_ROOTS, tempfile.gettempdir().rstrip("/") or "/tmp"}
    alternatives = "|".join(re.escape(root) for root in sorted(roots, key=len, reverse=True))
    temp = (rf"(?<![\w./-])(?:{alternatives})(?![\w.-]){_PATH_TAIL}", "<tmp>")
    rules = (temp, *_RULES)
    # The separator rule's back reference is to its own group: the one group it holds.
    separator = _SEPARATORS.replace("\\1", f"\\{len(rules) + 2}")
    groups = [f"({pattern})" for pattern, _ in rules] + [f"({separator})"]
    # Every match starts with one of these: other places are passed at the cost of one test.
    first = r"(?=[/0-9pP=\-_*#~ \t])"
    return re.compile(first + "(?:" + "|".join(groups) + ")"), tuple(m for _, m in rules)


def masked(output: str) -> str:
    """*output* with each part that differs from run to run replaced by its mark."""
    pattern, marks = _pattern()

    def mark(found: re.Match[str]) -> str:
        index = found.lastindex or 0
        if index > len(marks):  # a separator run: three of its character
            return found.group(index)[0] * 3
        return marks[index - 1]

    return pattern.sub(mark, output)
