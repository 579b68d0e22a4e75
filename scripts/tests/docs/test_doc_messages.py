"""Message samples the docs show but no test reproduces: their fixed wording is the code's."""

from __future__ import annotations

import re

import pytest
from support.doc_blocks import Block, all_blocks
from support.doc_checks import MESSAGES, keyed
from support.paths import REPO

SAMPLES = [b for b in all_blocks() if keyed(b, MESSAGES) is not None]
# What differs from run to run: `loop 'NAME'`, quoted names, ${...}, paths, numbers, commands.
VARIABLE = re.compile(
    r"loop '[^']*'|'[^']*'|\$\{[^}]*\}|\S*[/\\]\S*|\S+\.\w+\S*|\S*\d\S*"
    r"|ll-loop [a-z]+( [\w.-]+)?( --[\w-]+( [A-Z]+)?)?"
)
# Wording from Python or the OS, not from ll-loop.
EXTERNAL = ("No space left on device", "Unterminated string starting at")
PREFIX = re.compile(r"^(ll-loop: )?(error: |queued: |warning: )?")


def source_text() -> str:
    """The package's code, with adjacent string literals joined into one."""
    code = "\n".join(p.read_text() for p in (REPO / "scripts" / "little_loops").rglob("*.py"))
    code = re.sub(r"(['\"])\s*\n\s*f?(['\"])", "", code)
    return re.sub(r"\{[^{}\n]*\}", " ", code)


SOURCE = source_text()


def phrases(sample: str, breaks: str = "") -> list[str]:
    """The runs of two or more fixed words in the lines of *sample*, cut at *breaks*."""
    found = []
    for line in sample.splitlines():
        if line.startswith("$ "):
            continue
        line = VARIABLE.sub(";", PREFIX.sub("", line))
        for word in (*EXTERNAL, *breaks.split()):
            line = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", ";", line)
        for piece in re.split(r"[>:;,()→]|  ", line):
            words = piece.split()
            if len(words) >= 2:
                found.append(" ".join(words))
    return found


@pytest.mark.parametrize("sample", SAMPLES, ids=[b.where for b in SAMPLES])
def test_the_wording_is_the_codes(sample: Block) -> None:
    breaks = keyed(sample, MESSAGES)
    assert isinstance(breaks, str)
    found = phrases(sample.text, breaks)
    assert found, "no fixed wording to check"
    missing = [p for p in found if p not in SOURCE]
    assert missing == [], f"{sample.where}: not in scripts/little_loops"


def test_a_reworded_message_fails() -> None:
    right = "ll-loop: error: loop 'x' has no saved run to resume; start it with 'll-loop run x'"
    assert [p for p in phrases(right) if p not in SOURCE] == []
    wrong = right.replace("no saved run", "no stored run")
    assert [p for p in phrases(wrong) if p not in SOURCE] == ["has no stored run to resume"]
