"""Value checks for loop keys: what is wrong with a value, and the JSON Schema saying the same."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from little_loops.fsm.facts.suggest import did_you_mean

# The longest time an action may run or stay silent: the action runner waits with poll(),
# which takes at most 2**31 - 1 milliseconds (about 24.8 days).
MAX_ACTION_SECONDS = (2**31 - 1) // 1000
# The longest loop timeout, backoff or wait: a year (a wait past threading.TIMEOUT_MAX fails).
MAX_LOOP_SECONDS = 365 * 24 * 60 * 60


class UnknownKey(str):
    """A check's problem that is an unknown key inside the value (a mapping of settings):
    of a loop's or a state's key, little-loops ignores it, so `--compat` warns
    (definition/checks/key_checks.py gives it the check of an unknown key)."""

    __slots__ = ()


@dataclass(frozen=True)
class Check:
    """A key's value check: what is wrong with a value (None when it is fine), and the
    JSON Schema fragment that says the same, for the generated fsm-loop-schema.json."""

    find: Callable[[object], str | None]
    json: Mapping[str, Any]

    def __call__(self, value: object) -> str | None:
        return self.find(value)


def check_with(json: Mapping[str, Any]) -> Callable[[Callable[[object], str | None]], Check]:
    """Make the decorated function a Check standing for the JSON Schema *json*."""

    def wrap(find: Callable[[object], str | None]) -> Check:
        return Check(find, json)

    return wrap


# A whole number of more digits than this is described by its length, not written out.
_MAX_SHOWN_DIGITS = 20


def describe(value: object) -> str:
    """How a wrong value reads in a message: `'ten'`, `1.5`, `true`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int) and abs(value) >= 10**_MAX_SHOWN_DIGITS:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def type_name(value: object) -> str:
    """The YAML word for the type of a wrong value, as a paradigm spec's messages say it
    (`got integer`); `describe` says the value itself."""
    words: tuple[tuple[type, str], ...] = (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "list"),
        (dict, "mapping"),
    )
    if value is None:
        return "null"
    return next((word for kind, word in words if isinstance(value, kind)), type(value).__name__)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The largest number a loop may hold (about 1.8e308, the largest float): a whole number
# past it cannot be compared with a fraction, subtracted from one or shown with `:g`.
LARGEST_NUMBER = sys.float_info.max


def is_finite(value: int | float) -> bool:
    """Not inf or nan, and within LARGEST_NUMBER (math.isfinite fails on a huge int)."""
    return abs(value) <= LARGEST_NUMBER


def quote_hint(value: object) -> str:
    """How to keep a value YAML read as true/false or a number as the text it was meant to
    be (` (write it as a string: "true")`), for a message; '' for other values."""
    if isinstance(value, bool):
        return f' (write it as a string: "{describe(value)}")'
    # `next: 02` reads as the number 2: quoting keeps the text as written.
    return " (quote it as written)" if is_number(value) else ""


def not_a_string(value: object) -> str:
    """`expected a string, got true (write it as a string: "true")`."""
    got = f"the number {describe(value)}" if is_number(value) else describe(value)
    return f"expected a string, got {got}{quote_hint(value)}"


@check_with({"type": "string", "minLength": 1})
def string(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return None
    if isinstance(value, str):
        return "expected a non-empty string, got ''"
    return not_a_string(value)


@check_with({"type": "string"})
def text(value: object) -> str | None:
    """A string that may be empty (an action or prompt of '' is odd but well-formed)."""
    return None if isinstance(value, str) else not_a_string(value)


@check_with({"type": "boolean"})
def boolean(value: object) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {describe(value)}"


@check_with({"type": "object"})
def mapping(value: object) -> str | None:
    return None if isinstance(value, Mapping) else f"expected a mapping, got {describe(value)}"


@check_with({"type": "object", "required": ["type"], "properties": {"type": {"const": "object"}}})
def judge_schema(value: object) -> str | None:
    """An llm_structured schema: a mapping whose verdict enum, if any, lists names."""
    if not isinstance(value, Mapping):
        return mapping(value)
    if value.get("type") != "object":
        return (
            f"expected type: object (the judge answers with an object holding its verdict), "
            f"got type: {describe(value.get('type'))}"
        )
    props = value.get("properties")
    spec = props.get("verdict") if isinstance(props, Mapping) else None
    enum = spec.get("enum") if isinstance(spec, Mapping) else None
    if isinstance(enum, list):
        if not enum:
            return "the verdict enum is empty: list the verdicts the judge may give"
        for item in enum:
            if not isinstance(item, str):
                quote = " (quote it)" if not isinstance(item, list | Mapping) else ""
                return (
                    f"the verdict enum must list names (strings), got {describe(item)}"
                    f"{quote}: the judge's verdict is text, routed by name"
                )
    return None


@check_with({"type": "array", "items": {"type": "string", "minLength": 1}})
def string_list(value: object) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of strings, got {describe(value)}"
    for item in value:
        if string(item) is not None:
            return f"expected a list of strings, got {describe(item)} in it{quote_hint(item)}"
    return None


def integer(minimum: int, maximum: int | None = None) -> Check:
    want = f"a whole number >= {minimum}"
    if maximum is not None:
        want = f"a whole number from {minimum} to {maximum}"

    def within(value: float) -> bool:
        return value >= minimum and (maximum is None or value <= maximum)

    def check(value: object) -> str | None:
        if isinstance(value, float) and value.is_integer() and within(value):
            return f"expected {want}, got {value!r} (write it as {int(value)})"
        if not isinstance(value, int) or isinstance(value, bool) or not within(value):
            return f"expected {want}, got {describe(value)}"
        return None

    json: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        json["maximum"] = maximum
    return Check(check, json)


def show_number(value: float) -> str:
    """*value* as a message writes it: `31536000`, not `3.1536e+07`; `0.5`, `1e+308`."""
    if isinstance(value, int) or (is_finite(value) and value.is_integer() and value < 1e16):
        return str(int(value))
    return f"{value:g}"


def number(low: float, high: float | None = None, *, above: bool = False, why: str = "") -> Check:
    """A finite int or float, >= low (or > low when *above*), <= high when given.

    A range (`from 0 to 1`) is said in every message; a cap with a reason (*why*: `a year`)
    only when a value is over it, so `timeout: 0` reads `expected a number > 0, got 0`.
    """
    least = f"a number {'>' if above else '>='} {show_number(low)}"
    want = least
    if high is not None and not why:
        want = f"a number from {show_number(low)} to {show_number(high)}"
    too_high = f"{least} and at most {show_number(high or 0)} ({why})" if why else want

    def check(value: object) -> str | None:
        if not is_number(value):
            return f"expected {want}, got {describe(value)}"
        if isinstance(value, float) and not is_finite(value):
            return f"expected {want} (a finite one), got {value}"
        if high is not None and value > high:
            return f"expected {too_high}, got {describe(value)}"
        if not is_finite(value):
            return f"expected {want} (at most {LARGEST_NUMBER:.1e}), got {describe(value)}"
        if value <= low if above else value < low:
            return f"expected {want}, got {describe(value)}"
        return None

    json: dict[str, Any] = {"type": "number", "exclusiveMinimum" if above else "minimum": low}
    if high is not None:
        json["maximum"] = high
    return Check(check, json)


# Seconds an action may run or stay silent (a state's `timeout:`, the loop's
# `default_timeout:` ...).
ACTION_SECONDS = number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")
# Seconds a loop may run or a wait last, more than none (a loop's `timeout:`, a pr's wait).
LOOP_SECONDS = number(0, MAX_LOOP_SECONDS, above=True, why="a year")
# Seconds to wait, none allowed (`backoff:`, a rate-limit ladder's step).
WAIT_SECONDS = number(0, MAX_LOOP_SECONDS, why="a year")
# How many times longer each wait is than the one before (`retry:`'s and `pr:`'s
# `backoff_rate`): more than a hundredfold jumps from the first wait to the longest.
BACKOFF_RATE = number(1, 100, why="a hundredfold")
# Attempts of one state's action in all (`retry:`'s `max_attempts`): ten thousand is hours
# of retrying even with no wait between; a number past it is a slip of the keyboard.
MAX_ATTEMPTS = 10_000
RETRY_ATTEMPTS = integer(1, MAX_ATTEMPTS)


def number_or_reference(low: float | None = None) -> Check:
    """A number, a numeric string, or a string with a `${...}` reference resolved at run time."""

    def check(value: object) -> str | None:
        if isinstance(value, str):
            if "${" in value:
                return None
            try:
                value = float(value)
            except ValueError:
                return f"expected a number or a ${{...}} reference, got {describe(value)}"
        if isinstance(value, int) and not isinstance(value, bool) and not is_finite(value):
            return f"expected a number of at most {LARGEST_NUMBER:.1e}, got {describe(value)}"
        if not is_number(value) or not is_finite(value):
            return f"expected a number or a ${{...}} reference, got {describe(value)}"
        if low is not None and value < low:
            return f"expected a number >= {low:g}, got {value}"
        return None

    number: dict[str, Any] = (
        {"type": "number"} if low is None else {"type": "number", "minimum": low}
    )
    return Check(check, {"anyOf": [number, {"type": "string"}]})


@check_with({"type": ["string", "number", "boolean"]})
def scalar(value: object) -> str | None:
    if isinstance(value, str | int | float | bool):
        return None
    return f"expected a string, number or true/false, got {describe(value)}"


def one_of(choices: tuple[str, ...]) -> Check:
    def check(value: object) -> str | None:
        if isinstance(value, str) and value in choices:
            return None
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        return f"expected one of {', '.join(choices)}, got {describe(value)}{hint}"

    return Check(check, {"enum": list(choices)})


def words(choices: tuple[str, ...]) -> Check:
    """A non-empty list of names, each one of *choices* (a near miss gets a did-you-mean)."""

    def check(value: object) -> str | None:
        if not isinstance(value, list) or not value:
            got = "an empty list" if value == [] else describe(value)
            return f"expected a list of some of {', '.join(choices)}, got {got}"
        for item in value:
            if not isinstance(item, str) or item not in choices:
                hint = did_you_mean(item, choices) if isinstance(item, str) else ""
                return f"expected one of {', '.join(choices)}, got {describe(item)}{hint}"
        return None

    return Check(check, {"type": "array", "minItems": 1, "items": {"enum": list(choices)}})


def web_address(value: object) -> str | None:
    """An http:// or https:// URL with a host. A message never shows the URL past its host:
    its path or query may hold a secret token."""
    problem = string(value)
    if problem is not None or not isinstance(value, str):
        return problem
    scheme, _, rest = value.partition("://")
    shown = f"'{_scheme_and_host(scheme, rest)}...'" if rest else describe(value)[:40]
    if scheme.lower() not in ("http", "https") or not rest.split("/", 1)[0]:
        return f"expected an http:// or https:// URL, got {shown}"
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in value):
        return f"expected a URL without spaces or control characters, got {shown}"
    from urllib.parse import urlsplit  # here: only a loop with a webhook needs it

    try:
        parts = urlsplit(value)
        if not parts.hostname or (parts.port or 0) < 0:
            raise ValueError("no host")
    except ValueError as exc:  # `http://[::1/x`, `http://h:99999/x`: urllib cannot post there
        return f"expected a URL with a valid host and port ({exc}), got {shown}"
    return None


def _scheme_and_host(scheme: str, rest: str) -> str:
    """`https://example.com` of a URL's parts, its host cut at `/`, `?`, `#` or an `@`."""
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    host = "".join(char if char.isprintable() else "?" for char in host)[:80]
    return f"{scheme[:10]}://{host}"


URL = Check(web_address, {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^/\\s]+"})


def pattern(rx: str, why: str) -> Check:
    """A string matching the regular expression *rx* (compiled when first used, by re)."""

    def check(value: object) -> str | None:
        problem = string(value)
        if problem is not None or not isinstance(value, str):
            return problem
        return None if re.match(rx, value) else f"expected {why}, got {describe(value)}"

    return Check(check, {"type": "string", "pattern": rx})


def optional(check: Check) -> Check:
    """null is the same as leaving the key out (for fields whose default is unset)."""

    find = check.find  # (called directly: a key's check runs for every state of a file)

    def optional(value: object) -> str | None:
        return None if value is None else find(value)

    return Check(optional, nullable(check.json))


def nullable(json: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema *json* that also accepts null."""
    if "enum" in json:
        return {**json, "enum": [*json["enum"], None]}
    if "anyOf" in json:
        return {**json, "anyOf": [*json["anyOf"], {"type": "null"}]}
    kinds = json["type"] if isinstance(json["type"], list) else [json["type"]]
    return {**json, "type": [*kinds, "null"]}
