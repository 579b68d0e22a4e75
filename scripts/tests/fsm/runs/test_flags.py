"""What a run flag is: its kinds read a command line and a record, a row per dataclass field."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from little_loops.fsm.runs.flags import (
    COUNT,
    DOLLARS,
    NAME,
    SWITCH,
    TEXT,
    Kind,
    flag,
    flag_rows,
    given_else_saved,
    positive_dollars,
    positive_int,
)


def test_positive_int_and_dollars_say_what_is_wrong() -> None:
    assert positive_int("3") == 3
    assert positive_dollars("$1.50") == 1.5
    for parse, text, message in [
        (positive_int, "x", "expected a whole number, got 'x'"),
        (positive_int, "0", "must be at least 1, got 0"),
        (positive_dollars, "x", "expected an amount in dollars, got 'x'"),
        (positive_dollars, "0", "must be more than 0, got 0"),
        (positive_dollars, "inf", "must be more than 0, got inf"),
    ]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            parse(text)


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        (SWITCH, [True], [False, "yes", 1, None]),
        (COUNT, [1, 40], [0, -2, True, 2.5, "3", None]),
        (DOLLARS, [0.5, 2], [0, -1, True, "1", None]),
        (TEXT, ["m", ""], [3, None, True]),
        (NAME, ["m"], ["", 3, None]),
    ],
)
def test_a_kind_keeps_a_recorded_value_only_of_its_kind(
    kind: Kind, good: list[object], bad: list[object]
) -> None:
    for value in good:
        assert kind.check(value) == value
    for value in bad:
        assert kind.check(value) == kind.default


def test_a_value_is_written_back_as_the_command_line_reads_it() -> None:
    assert DOLLARS.word(0.1) == "0.1"
    assert positive_dollars(DOLLARS.word(1 / 3)) == 1 / 3  # repr: no digit lost
    assert COUNT.word(5) == "5"


def test_given_again_wins_and_not_given_keeps_the_saved_value() -> None:
    assert given_else_saved(9, 3) == 9
    assert given_else_saved(None, 3) == 3
    assert given_else_saved(False, True) is True
    assert given_else_saved(True, False) is True
    assert given_else_saved("", "m") == "m"  # as `--llm-model ""` always did


@dataclass(frozen=True)
class _Table:
    first: bool = flag("-f", "--first", help="one")
    count: int | None = flag("--count", kind=COUNT, metavar="N", resumed=True, help="two")
    not_a_flag: str = "x"


def test_the_rows_are_the_flag_fields_in_order_with_their_defaults() -> None:
    rows = flag_rows(_Table)
    assert [name for name, _ in rows] == ["first", "count"]
    (_, first), (_, count) = rows
    assert (first.options, first.help, first.resumed, first.kind) == (
        ("-f", "--first"),
        "one",
        False,
        SWITCH,
    )
    assert (count.metavar, count.resumed, count.kind) == ("N", True, COUNT)
    assert _Table() == _Table(first=False, count=None)
    assert flag_rows(_Table(count=2)) == rows
