"""Fuzzing `${...}` interpolation: only InterpolationError escapes, and nothing hangs.

Properties: text without `${` comes back unchanged; escaping every `${` as `$${` gives the
text back (the round trip); a value that is exactly one reference keeps its type; bash's
own forms (`$VAR`, `${VAR:-x}`, `$(cmd)`) pass through.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.timelimit import time_limit

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_dict,
    interpolate_value,
)
from little_loops.fsm.values.references import NAMESPACES, references

pytestmark = pytest.mark.reliability

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
LIMIT_S = 2.0

PIECES = [
    "${", "$${", "$$", "$", "{", "}", ".", "[", "]", "[0]", "[99]", "0", "-", "_", ":-", "#",
    "/", "(", ")", " ", "\n", "\\", "'", '"', "`", "$(", "${#", "}}", "..", "x", "output",
    "details", *NAMESPACES, "nope", "ctx", "\u00e9", "\U0001f600",
]  # fmt: skip
templates = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=30).map(
    "".join
)
leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=10),
    st.sampled_from(["${context.a}", "${context.b}", "$${x}", "${nope.x}", "${captured.a}"]),
)
trees = st.recursive(
    leaf,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["a", "b", "0", "output", "x", "1"]), children, max_size=4
        )
    ),
    max_leaves=10,
)
mappings = st.dictionaries(st.sampled_from(["a", "b", "0", "output", "x", "1"]), trees, max_size=4)


@st.composite
def contexts(draw: st.DrawFn) -> InterpolationContext:
    return InterpolationContext(
        context=draw(mappings),
        captured=draw(mappings),
        prev=draw(st.none() | mappings),
        result=draw(st.none() | mappings),
        state_name=draw(st.text(max_size=5)),
        iteration=draw(st.integers(min_value=0, max_value=10**6)),
        loop_name="fuzz",
        elapsed_ms=draw(st.integers(min_value=0, max_value=10**12)),
        env=draw(st.dictionaries(st.sampled_from(["HOME", "a", "x"]), st.text(max_size=5))),
    )


def attempt(func: Any, *args: Any) -> Any:
    """Call func; only InterpolationError (with a message naming a reference) may escape."""
    with time_limit(LIMIT_S, "interpolation"):
        try:
            return func(*args)
        except InterpolationError as exc:
            error = exc
    message = str(error)
    assert "${" in message, message  # it names the reference
    return error


@FUZZ
@given(templates, contexts())
def test_interpolate_raises_only_interpolation_errors(text: str, ctx: InterpolationContext) -> None:
    result = attempt(interpolate, text, ctx)
    if "${" not in text:
        assert result == text
    refs = references(text)
    if isinstance(result, str) and not refs:
        # Only escapes were there: each `$${` became `${`, nothing else changed.
        assert result == text.replace("$${", "${")


@FUZZ
@given(templates, contexts())
def test_escaping_round_trips(text: str, ctx: InterpolationContext) -> None:
    assert attempt(interpolate, text.replace("${", "$${"), ctx) == text


@FUZZ
@given(st.text(), contexts())
def test_text_without_a_reference_is_unchanged(text: str, ctx: InterpolationContext) -> None:
    assume("${" not in text)
    assert attempt(interpolate, text, ctx) == text
    assert attempt(interpolate_value, text, ctx) == text


@FUZZ
@given(trees, contexts())
def test_interpolate_value_and_dict(value: Any, ctx: InterpolationContext) -> None:
    attempt(interpolate_value, value, ctx)
    attempt(interpolate_dict, {"k": value, "t": [value]}, ctx)


@FUZZ
@given(st.sampled_from(["a", "b", "x", "0"]), trees, contexts())
def test_a_lone_reference_keeps_its_type(key: str, value: Any, ctx: InterpolationContext) -> None:
    assume(not isinstance(value, str))
    # (a `$${` in a list's or mapping's text reads as a literal `${`: test_data_values.py)
    assume("$${" not in repr(value))
    ctx.context = {key: value}
    assert attempt(interpolate_value, f"${{context.{key}}}", ctx) is value


@FUZZ
@given(st.sampled_from(["$HOME", "${HOME}", "${HOME:-x}", "${#HOME}", "$(date)", "${a/b/c}"]))
def test_bash_forms_pass_through(text: str) -> None:
    assert interpolate(text, InterpolationContext()) == text


@FUZZ
@given(st.integers(min_value=1, max_value=40))
def test_context_values_that_refer_to_each_other_end(length: int) -> None:
    # a chain (or, at length 1, a cycle) of context values referring to the next one
    chain = {f"k{i}": f"<${{context.k{(i + 1) % length}}}>" for i in range(length)}
    result = attempt(interpolate, "${context.k0}", InterpolationContext(context=chain))
    assert isinstance(result, InterpolationError)
    assert "cycle" in str(result)
