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


def test_the_kept_scans_stay_small_for_texts_full_of_references() -> None:
    """The scans a run keeps (at most 256 texts of 64 Ki characters) hold little more than
    the texts: a text of thousands of references or `$${` escapes (a context value made
    literal) is scanned again, not kept with a match object for each (about 5 MiB a text:
    256 such texts held 1.4 GB)."""
    import gc
    import tracemalloc

    from little_loops.fsm.values import references as refs

    refs._found.cache_clear()
    texts = [("$${" * 21_000) + f"{n:06d}" for n in range(8)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts:
            assert len(refs.found(text)) == 21_000
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        refs._found.cache_clear()
    assert held < len(texts) * 256 * 1024, f"{held / 2**20:.1f} MiB kept for {len(texts)} texts"


def test_a_long_path_is_parsed_each_time_not_kept() -> None:
    """Paths of any length are parsed; only short ones are kept (4,096 kept paths of a
    megabyte each would be gigabytes)."""
    from little_loops.fsm.values import references as refs

    refs._segments.cache_clear()
    long = "a" * 100_000
    assert parse_path(f"x.{long}", "${context.x}") == ["x", long]
    assert refs._segments.cache_info().currsize == 0
    assert parse_path("x.y[1]", "${context.x}") == ["x", "y", 1]
    assert refs._segments.cache_info().currsize == 1


def test_an_index_of_more_digits_than_int_reads_is_a_malformed_path() -> None:
    """`${context.x[999…]}` of 5,000 digits: a malformed path (an InterpolationError the run
    routes as `error`), not int()'s ValueError ending the run as an internal error; a name
    of as many digits is a key's name."""
    digits = "9" * 5000
    with pytest.raises(InterpolationError, match="malformed path"):
        parse_path(f"x[{digits}]", "${context.x}")
    assert parse_path(f"x.{digits}", "${context.x}") == ["x", digits]
