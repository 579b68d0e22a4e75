"""The syntax of `${namespace.path}` references (values/references.py)."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.references import (
    ESCAPE,
    NAMESPACES,
    OPEN,
    near_misses,
    parse_path,
    raw_references,
    reference_pattern,
    references,
)


def test_references_in_order_without_escapes() -> None:
    text = "a ${context.x} $${HOME} ${raw:captured.out.output} ${prev.items[0].name}"
    assert references(text) == [
        ("context", "x"),
        ("captured", "out.output"),
        ("prev", "items[0].name"),
    ]
    assert raw_references(text)[1] == ("captured", "out.output", True)
    assert raw_references(text)[0] == ("context", "x", False)
    assert references("${notadotted}") == []


def test_the_pattern_matches_an_escape_and_a_reference() -> None:
    found = [m.group(0) for m in reference_pattern().finditer("$${x} ${state.name}")]
    assert found == [ESCAPE, "${state.name}"]
    assert OPEN == "${"
    assert "env" in NAMESPACES


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("a.b[0].c", ["a", "b", 0, "c"]),
        ("items.0", ["items", 0]),
        ("context.010", ["context", "010"]),
        ("a-b", ["a-b"]),
    ],
)
def test_parse_path(path: str, parts: list[str | int]) -> None:
    assert parse_path(path, "${x}") == parts


@pytest.mark.parametrize("path", ["a..b", "a.", "[x]", "a[0", ""])
def test_a_malformed_path_names_the_reference(path: str) -> None:
    with pytest.raises(InterpolationError, match=r"^\$\{ref\}: malformed path$"):
        parse_path(path, "${ref}")


def test_near_misses_are_our_namespaces_written_wrong() -> None:
    text = "${ context.x } ${captured.} ${context.ok} ${state} $${ context.x }"
    assert near_misses(text) == ["${ context.x }", "${captured.}"]
    assert near_misses("${HOME} ${PATH:-x}") == []
