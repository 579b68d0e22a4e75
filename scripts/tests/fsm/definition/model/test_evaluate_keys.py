"""The evaluate keys of classify, the stall evaluators, `key` and `error_patterns`."""

from __future__ import annotations

from little_loops.fsm.definition.model.evaluate_keys import EVALUATE_EXTRA_KEYS, line_choice


def test_line_choices() -> None:
    assert line_choice("last") is None
    assert line_choice(-1) is None
    assert line_choice("middle") is not None
    assert line_choice(True) is not None


def test_the_keys_check_their_values() -> None:
    assert EVALUATE_EXTRA_KEYS["max_stall"](0) is not None
    assert EVALUATE_EXTRA_KEYS["error_patterns"](["x"]) is None
    assert EVALUATE_EXTRA_KEYS["scope"]("src") is not None
    assert EVALUATE_EXTRA_KEYS["epsilon"](-1) is not None
