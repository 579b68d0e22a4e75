"""The `claude:` options table of docs/loop-files.md is the one in claude_options.py."""

from __future__ import annotations

import re

from support.paths import REPO

from little_loops.fsm.actions.claude_options import (
    CLAUDE_OPTIONS,
    EFFORT_LEVELS,
    PERMISSION_MODES,
)

DOC = REPO / "docs" / "loop-files.md"


def _rows() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- claude-options -->\n(.*?)\n<!-- /claude-options -->", text, re.S)
    assert match is not None, "docs/loop-files.md has no <!-- claude-options --> table"
    rows = {}
    for line in match.group(1).splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_option_is_documented_with_its_flag_in_table_order() -> None:
    rows = _rows()
    assert list(rows) == list(CLAUDE_OPTIONS)
    for name, option in CLAUDE_OPTIONS.items():
        flag = rows[name][0]
        assert flag == (f"`{option.flag}`" if option.flag else "(as written)"), name


def test_the_choices_are_the_real_ones() -> None:
    rows = _rows()
    assert rows["effort"][1] == ", ".join(f"`{v}`" for v in EFFORT_LEVELS)
    assert rows["permission_mode"][1] == ", ".join(f"`{v}`" for v in PERMISSION_MODES)
