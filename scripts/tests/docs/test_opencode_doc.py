"""docs/agents/opencode.md: its options table is the kind's options table, word for word."""

from __future__ import annotations

import re

from support.paths import REPO

from little_loops.fsm.actions.opencode import OPENCODE_OPTIONS

DOC = REPO / "docs" / "agents" / "opencode.md"
ROW = re.compile(r"^\| `(\w+)` \| ?(?:`(--[\w-]+)`)? ?\| [^|]+ \| (.+) \|$", re.MULTILINE)


def test_the_options_table_lists_each_option_its_flag_and_doc_in_order() -> None:
    rows = ROW.findall(DOC.read_text(encoding="utf-8"))
    assert [name for name, _, _ in rows] == list(OPENCODE_OPTIONS)
    for name, flag, doc in rows:
        option = OPENCODE_OPTIONS[name]
        assert (flag or None, doc) == (option.flag, option.doc), name


def test_the_page_names_the_install_and_login_commands_the_kind_gives() -> None:
    from little_loops.fsm.actions.opencode import INSTALL_HINT

    text = DOC.read_text(encoding="utf-8")
    assert f"`{INSTALL_HINT.removeprefix('install opencode: ')}`" in text
    assert "`opencode auth login`" in text
