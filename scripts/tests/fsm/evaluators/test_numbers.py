"""Numbers read from action output and compared (evaluators/numbers.py)."""

from __future__ import annotations

import pytest

from little_loops.fsm.evaluators.numbers import (
    TooLarge,
    as_number,
    comparison,
    difference,
    number_text,
    output_number,
    parse_number,
)


def test_parse_number() -> None:
    assert parse_number(" 3 ") == 3
    assert isinstance(parse_number("3"), int)
    assert parse_number("2.5") == 2.5
    for text in ("nan", "inf", "-Infinity", "three"):
        with pytest.raises(ValueError, match="."):
            parse_number(text)
    with pytest.raises(TooLarge):
        parse_number("9" * 400)


def test_as_number_names_what_it_read() -> None:
    assert as_number("4", "target") == 4
    assert as_number(1.5, "target") == 1.5
    with pytest.raises(ValueError, match="^target is not a number: 'x'$"):
        as_number("x", "target")
    with pytest.raises(ValueError, match="^target is not a number: true$"):
        as_number(True, "target")
    with pytest.raises(ValueError, match=r"^target is too large a number \(400 digits;"):
        as_number("9" * 400, "target")


def test_output_number_is_the_last_line() -> None:
    assert output_number("checking...\n0\n0\n") == 0
    with pytest.raises(ValueError, match="^output is empty, expected a number$"):
        output_number("\n \n")
    with pytest.raises(ValueError, match="^output is not a number: '3 errors'$"):
        output_number("3 errors")


def test_difference_number_text_and_comparison() -> None:
    assert difference(5, 3) == 2
    assert difference(1.7e308, -1.7e308) is None
    assert number_text(3) == "3"
    assert number_text(3, "+") == "+3"
    assert number_text(1.5e12) == "1.5e+12"
    assert number_text("x") == "'x'"
    assert comparison("lt")(1, 2) is True
    assert comparison("ge")(1, 2) is False
    with pytest.raises(ValueError, match=r"^unknown operator 'lte' \(expected one of eq, ne"):
        comparison("lte")
