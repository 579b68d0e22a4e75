"""Values that remember where they were written, merged the way `from:` and fragments merge."""

from __future__ import annotations

from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.located import Node, deep_merge, unwrap, wrap


def test_wrap_and_unwrap_keep_data_and_lines() -> None:
    doc = load_text("a:\n  b: 1\n  c: [x, y]\n", "f.yaml")
    back = unwrap(wrap(doc), "f.yaml")
    assert back.data == doc.data
    assert back.lines == doc.lines
    assert back.files == {}


def test_deep_merge_merges_mappings_and_the_override_wins_elsewhere() -> None:
    base = wrap(load_text("e:\n  type: a\n  pattern: p\nl: [1, 2]\nk: 1\n", "base.yaml"))
    over = wrap(load_text("e:\n  pattern: q\nl: [3]\n", "over.yaml"))
    merged = deep_merge(base, over)
    assert merged.plain() == {"e": {"type": "a", "pattern": "q"}, "l": [3], "k": 1}
    doc = unwrap(merged, "over.yaml")
    assert doc.where_of(("e", "type")) == ("base.yaml", 2)
    assert doc.where_of(("e", "pattern")) == ("over.yaml", 2)
    assert doc.where_of(("k",)) == ("base.yaml", 5)


def test_a_node_fails_at_its_file_and_line() -> None:
    assert str(Node("x", "lib.yaml", 4).fail("bad")) == "lib.yaml:4: bad"
