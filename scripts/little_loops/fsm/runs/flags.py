"""What a run flag is: its option strings, its value kind, its help, whether resume repeats it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

_ROW = "run_flag"  # the key of a dataclass field's metadata that holds its RunFlag


def positive_int(text: str) -> int:
    """An integer of at least 1 (ValueError with the message a user reads)."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def positive_dollars(text: str) -> float:
    """A spend limit in US dollars, more than 0 (a leading `$` is allowed)."""
    try:
        value = float(text.removeprefix("$"))
    except ValueError:
        raise ValueError(f"expected an amount in dollars, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"must be more than 0, got {text}")
    return value


def _switch(value: object) -> bool:
    return value is True


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _dollars(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return value


def _either(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _name(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Kind:
    """A kind of flag value: how the command line's text is read, how a value read back
    from the options record is checked, and how it is written as a command-line word."""

    default: object  # the value when the flag is not given
    parse: Callable[[str], object] | None  # None: a switch (no value), or text as given
    check: Callable[[object], object]  # a recorded value, or the default when it is not one
    word: Callable[[Any], str] = str
    takes_value: bool = True
    paired: bool = False  # a switch with a `--no-` twin: True, False, or None (neither given)


SWITCH = Kind(False, None, _switch, takes_value=False)
# `--x` / `--no-x`: True or False when given, None when neither was (the loop file says).
PAIRED = Kind(None, None, _either, takes_value=False, paired=True)
COUNT = Kind(None, positive_int, _count)
DOLLARS = Kind(None, positive_dollars, _dollars, word=repr)
TEXT = Kind(None, None, _text)
NAME = Kind(None, None, _name)  # text, but an empty one in the record is no value


def given_else_saved(given: object, saved: object) -> object:
    """The merge of most flags on resume: given again, it wins; not given, the saved one."""
    return saved if given is None or given is False or given == "" else given


def given_pair_else_saved(given: object, saved: object) -> object:
    """The merge of a PAIRED flag: `--x` or `--no-x` given again wins, else the saved one."""
    return saved if given is None else given


@dataclass(frozen=True)
class RunFlag:
    """One run flag, written once: `run`/`resume` parse it, the options record keeps it."""

    options: tuple[str, ...]  # the long form last: what a background run is started with
    help: str
    kind: Kind = SWITCH
    metavar: str | None = None
    resumed: bool = False  # kept in `<name>.options.json`: a resume repeats it
    merge: Callable[[object, object], object] = given_else_saved  # given on resume, saved

    @property
    def negative(self) -> str:
        """A PAIRED flag's twin: `--no-sandbox` of `--sandbox`."""
        return "--no-" + self.options[-1].removeprefix("--")


def flag(
    *options: str,
    help: str,
    kind: Kind = SWITCH,
    metavar: str | None = None,
    resumed: bool = False,
    merge: Callable[[object, object], object] = given_else_saved,
) -> Any:
    """A dataclass field that is a run flag: its default is the kind's, its row the metadata."""
    row = RunFlag(options, help, kind, metavar, resumed, merge)
    return field(default=kind.default, metadata={_ROW: row})


def flag_rows(table: Any) -> tuple[tuple[str, RunFlag], ...]:
    """(field name, row) of each run flag of the dataclass *table* (or an instance), in order.

    The field name is also the flag's key in the options record and its argparse dest."""
    return tuple((f.name, f.metadata[_ROW]) for f in fields(table) if _ROW in f.metadata)
