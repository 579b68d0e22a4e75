"""The exit codes README.md and docs/guide.md list are ExitCode's, every one of them
(docs/cli.md's and docs/persistence.md's tables are held to it in fsm/runs/test_outcomes.py)."""

from __future__ import annotations

import re

import pytest
from support.paths import REPO

from little_loops.fsm.facts.outcomes import ExitCode

# The sentence that lists them: `Exit codes ...: 0 done, 1 failed, ..., 143 stopped.`
LIST = re.compile(r"Exit codes[^:]*: (0 .*?\b143 \w+)\.")


def listed_codes(text: str) -> list[int]:
    """The codes of the exit-code sentence in *text*, in the order written."""
    found = LIST.search(" ".join(text.split()))
    assert found, "no `Exit codes ...: 0 ..., 143 ...` sentence"
    return [int(item.split()[0]) for item in found.group(1).split(", ")]


@pytest.mark.parametrize("doc", ["README.md", "docs/guide.md"])
def test_the_exit_code_list_is_every_exit_code(doc: str) -> None:
    assert listed_codes((REPO / doc).read_text()) == sorted(ExitCode)


def test_a_list_missing_a_code_is_caught() -> None:
    text = "Exit codes: 0 done, 1 failed, 2 usage, 3 max, 4 timeout, 5 handoff, 6 budget, "
    text += "8 stall, 9 approval, 130 interrupted, 143 stopped."
    assert listed_codes(text) != sorted(ExitCode)
    assert 7 not in listed_codes(text)
