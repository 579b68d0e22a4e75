"""The likely cause of a YAML syntax error (definition/reading/yaml_hints.py)."""

from __future__ import annotations

import pytest
import yaml

from little_loops.fsm.definition.reading.yaml_hints import explain


def _explain(text: str) -> tuple[str, int, int] | None:
    with pytest.raises(yaml.MarkedYAMLError) as caught:
        # The C loader, as the loader uses when it is there (its messages differ).
        yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return explain(text, caught.value)


def test_a_tab_in_the_indentation() -> None:
    assert _explain("states:\n\ta: 1\n") == (
        "tabs are not allowed for indentation; use spaces",
        2,
        1,
    )


def test_an_unclosed_quote_is_placed_where_it_opens() -> None:
    hint = _explain('name: x\naction: "echo hi\nnext: b\n')
    assert hint == ('the string that opens with " here is never closed (add the closing ")', 2, 9)


def test_bad_indentation_names_the_lines_it_could_line_up_with() -> None:
    hint = _explain("name: x\nstates:\n  a:\n    action: echo\n   terminal: true\n")
    assert hint == (
        "bad indentation: line 5 is indented 3 spaces, like no line above it (0, 2 or 4)",
        5,
        4,
    )
    value = _explain("a:\n  action: echo\n    next: b\n")
    assert value is not None
    assert value[0] == (
        "bad indentation: line 3 is indented more than line 2, so it reads as more of the "
        "value of 'action'; indent it like line 2 (2 spaces)"
    )


def test_other_errors_get_no_hint() -> None:
    assert _explain("a: [1, 2\n") is None
