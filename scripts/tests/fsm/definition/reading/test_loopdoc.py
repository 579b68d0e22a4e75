"""Which loop files go through the reuse resolver: only those that use a reuse key."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.loopdoc import load_loop, resolve_document, uses_reuse


@pytest.mark.parametrize(
    ("data", "uses"),
    [
        ({"name": "x", "states": {"a": {"terminal": True}}}, False),
        ({"name": "x", "states": "not a mapping"}, False),
        ({"name": "x", "import": ["lib/a.yaml"]}, True),
        ({"name": "x", "from": "base"}, True),
        ({"name": "x", "flow": ["a"]}, True),
        ({"name": "x", "states": {"a": {"fragment": "f"}}}, True),
    ],
)
def test_uses_reuse(data: dict[str, object], uses: bool) -> None:
    assert uses_reuse(data) is uses


def test_a_plain_loop_is_the_document_as_read(tmp_path: Path) -> None:
    doc = load_text("name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n", "x.yaml")
    assert resolve_document(doc) is doc


def test_load_loop_resolves_a_local_fragment(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(
        "name: x\nfragments:\n  end:\n    terminal: true\n"
        "initial: a\nstates:\n  a:\n    fragment: end\n"
    )
    doc = load_loop(path)
    assert doc.data == {"name": "x", "initial": "a", "states": {"a": {"terminal": True}}}
    assert doc.where_of(("states", "a", "terminal")) == (str(path), 4)
