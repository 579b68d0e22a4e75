"""docs/agents/codex.md: its options table is the one in codex_options.py."""

from __future__ import annotations

import re

from support.paths import REPO

from little_loops.fsm.actions.codex_options import (
    APPROVAL_POLICIES,
    CODEX_OPTIONS,
    SANDBOX_MODES,
)

DOC = REPO / "docs" / "agents" / "codex.md"


def _rows() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- codex-options -->\n(.*?)\n<!-- /codex-options -->", text, re.S)
    assert match is not None, "docs/agents/codex.md has no <!-- codex-options --> table"
    rows = {}
    for line in match.group(1).splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_option_is_documented_with_its_flag_and_doc_in_table_order() -> None:
    rows = _rows()
    assert list(rows) == list(CODEX_OPTIONS)
    for name, option in CODEX_OPTIONS.items():
        flag, _, meaning = rows[name]
        if name in ("approval_policy", "config"):
            assert flag == "(as config)", name
        else:
            assert flag == (f"`{option.flag}`" if option.flag else "(as written)"), name
        assert meaning == option.doc, name


def test_the_choices_are_the_real_ones() -> None:
    rows = _rows()
    assert rows["sandbox"][1] == ", ".join(f"`{v}`" for v in SANDBOX_MODES)
    assert rows["approval_policy"][1] == ", ".join(f"`{v}`" for v in APPROVAL_POLICIES)
