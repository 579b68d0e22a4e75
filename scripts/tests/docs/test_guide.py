"""docs/guide.md, the user guide's front page: its examples run through the real checks and
the numbers it quotes come from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.paths import REPO
from support.subloop_docs import check_with_siblings, has_subloops

from little_loops.fsm.actions import claude_code, shell
from little_loops.fsm.definition.model.typed import DEFAULT_MAX_ITERATIONS
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.facts.outcomes import TERMINATION_EXIT_CODE
from little_loops.fsm.validate.loopfile import check_document

DOCS = REPO / "docs"
GUIDE = DOCS / "guide.md"


def blocks(language: str) -> list[str]:
    pattern = re.compile(rf"^```{language}\n(.*?)^```$", re.MULTILINE | re.DOTALL)
    return pattern.findall(GUIDE.read_text())


YAML_BLOCKS = blocks("yaml")


def test_the_guide_links_every_other_doc() -> None:
    text = GUIDE.read_text()
    others = sorted(p.name for p in DOCS.glob("*.md") if p != GUIDE)
    assert others
    assert [name for name in others if f"]({name}" not in text] == []


@pytest.mark.parametrize("index", range(len(YAML_BLOCKS)))
def test_every_yaml_example_is_a_valid_loop_without_warnings(index: int, tmp_path: Path) -> None:
    text = YAML_BLOCKS[index]
    if has_subloops(text):  # its children are the guide's other examples
        report = check_with_siblings(text, YAML_BLOCKS, tmp_path)
    else:
        report = check_document(load_text(text, f"guide.md yaml block {index + 1}"))
    assert [str(e) for e in report.errors] == []
    assert [str(w) for w in report.warnings] == []


def test_the_limits_table_quotes_the_real_defaults() -> None:
    text = GUIDE.read_text()
    assert f"| `max_iterations` | {DEFAULT_MAX_ITERATIONS} |" in text
    shell_s, claude_s = shell.SPEC.default_timeout, claude_code.SPEC.default_timeout
    assert f"{shell_s:g} s for shell, {claude_s:g} s for Claude" in text


def test_the_exit_codes_quoted_are_the_real_ones() -> None:
    text = " ".join(GUIDE.read_text().split())
    for terminated_by, phrase in (
        ("terminal", "0 completed"),
        ("error", "1 failed"),
        ("max_iterations", "3 `max_iterations`"),
        ("timeout", "4 timeout"),
        ("handoff", "5 context handoff"),
        ("budget", "6 budget"),
        ("terminal_failure", "7 terminal failure"),
        ("interrupted", "130 interrupted"),
        ("stopped", "143 stopped"),
    ):
        code = phrase.split()[0]
        assert TERMINATION_EXIT_CODE[terminated_by] == int(code), terminated_by
        assert phrase in text, phrase
