"""Did-you-mean suggestions (facts/suggest.py)."""

from __future__ import annotations

from little_loops.fsm.facts.suggest import closest, did_you_mean


def test_closest_finds_a_near_spelling_or_a_unique_prefix() -> None:
    assert closest("on_sucess", ["on_success", "on_failure"]) == "on_success"
    assert closest("oper", ["operator", "output"]) == "operator"
    assert closest("pa", ["path_a", "path_b"]) is None  # the prefix of two: no guess
    assert closest("thr", ["threshold", "timeout"]) == "threshold"
    assert closest("zzz", ["operator", "output"]) is None
    assert closest("t", ["threshold"]) is None  # one letter is no prefix


def test_did_you_mean_is_a_phrase_or_nothing() -> None:
    assert did_you_mean("chek", ["check", "fix"]) == " (did you mean check?)"
    assert did_you_mean("zzz", ["check", "fix"]) == ""
