"""`retry:` and `rate_limit:` keys (definition/model/retry_keys.py)."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.retry_keys import (
    RATE_LIMIT_KEYS,
    RETRY_KEYS,
    retry_on,
    unknown_verdicts,
    wait_ladder,
)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("failure", None),
        (["error", 1, "blocked"], None),
        ([], "expected at least one verdict, `error` or exit code"),
        (300, "an exit code is a whole number from 0 to 255, got 300"),
        (True, "expected verdicts, `error` or exit codes (whole numbers), got true"),
        ([""], "expected verdicts, `error` or exit codes (whole numbers), got ''"),
    ],
)
def test_retry_on(value: object, problem: str | None) -> None:
    assert retry_on(value) == problem


def test_wait_ladder() -> None:
    assert wait_ladder([1, 2.5]) is None
    assert wait_ladder([]) == "expected a list of seconds, got a list"
    assert wait_ladder([1, -1]) == "expected a number >= 0, got -1"
    assert RATE_LIMIT_KEYS["ladder"] is wait_ladder
    assert RETRY_KEYS["on"] is retry_on
    assert RETRY_KEYS["jitter"]("some") is not None


def test_unknown_verdicts_of_the_states_evaluator() -> None:
    shell = {"action": "pytest"}
    assert unknown_verdicts({"on": ["sucess", "failure"]}, shell) == [
        "'sucess' is not a verdict of this state (did you mean success?)"
    ]
    assert unknown_verdicts({"on": ["error", 3, "failure_uncertain"]}, shell) == []
    # The verdicts are not known (an unknown evaluator), or `on` is wrong: nothing to add.
    assert unknown_verdicts({"on": ["odd"]}, {"evaluate": {"type": "nope"}}) == []
    assert unknown_verdicts({"on": []}, shell) == []
