"""Value checks: each says what is wrong with a value, and carries the JSON Schema for it."""

from __future__ import annotations

import pytest

from little_loops.fsm.values.value_checks import (
    MAX_ATTEMPTS,
    RETRY_ATTEMPTS,
    describe,
    integer,
    number,
    one_of,
    optional,
    string,
    string_list,
    text,
    type_name,
)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        (True, "true"),
        ("ten", "'ten'"),
        (1.5, "1.5"),
        ({}, "a mapping"),
        ([], "a list"),
    ],
)
def test_describe_shows_a_value_as_the_user_wrote_it(value: object, shown: str) -> None:
    assert describe(value) == shown


def test_optional_accepts_null_in_the_check_and_in_the_schema() -> None:
    check = optional(number(0, above=True))
    assert check(None) is None
    assert check(0) == "expected a number > 0, got 0"
    assert check.json == {"type": ["number", "null"], "exclusiveMinimum": 0}


def test_a_whole_number_written_as_a_float_is_refused_with_the_fix() -> None:
    assert integer(1)(2.0) == "expected a whole number >= 1, got 2.0 (write it as 2)"
    assert integer(1).json == {"type": "integer", "minimum": 1}


def test_a_whole_number_past_its_bound_is_refused_with_the_bound() -> None:
    # (not told to write 1e10 as 10000000000, which is refused all the same)
    check = integer(1, MAX_ATTEMPTS)
    assert check(MAX_ATTEMPTS) is None
    assert check(10**10) == "expected a whole number from 1 to 10000, got 10000000000"
    assert check(1e10) == "expected a whole number from 1 to 10000, got 10000000000.0"
    assert check(2.0) == "expected a whole number from 1 to 10000, got 2.0 (write it as 2)"
    assert RETRY_ATTEMPTS.json == {"type": "integer", "minimum": 1, "maximum": MAX_ATTEMPTS}


def test_one_of_suggests_the_closest_choice() -> None:
    assert one_of(("shell", "prompt"))("shel") == (
        "expected one of shell, prompt, got 'shel' (did you mean shell?)"
    )
    assert string(3) == "expected a string, got the number 3 (quote it as written)"


def test_a_true_false_or_number_where_text_belongs_says_to_quote_it() -> None:
    assert text(True) == 'expected a string, got true (write it as a string: "true")'
    assert string(False) == 'expected a string, got false (write it as a string: "false")'
    assert text(1.5) == "expected a string, got the number 1.5 (quote it as written)"
    assert text(None) == "expected a string, got null"
    assert string_list(["a", True]) == (
        'expected a list of strings, got true in it (write it as a string: "true")'
    )


@pytest.mark.parametrize(
    ("value", "word"),
    [
        (None, "null"),
        (True, "boolean"),
        (1, "integer"),
        (1.5, "number"),
        ("x", "string"),
        ([], "list"),
        ({}, "mapping"),
    ],
)
def test_type_name_uses_the_yaml_word(value: object, word: str) -> None:
    assert type_name(value) == word
