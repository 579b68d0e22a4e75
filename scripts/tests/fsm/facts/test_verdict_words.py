"""The verdict words: yes is success, no is failure, any other word is itself."""

from __future__ import annotations

from little_loops.fsm.facts.verdict_words import (
    canonical_verdict,
    same_verdict,
    spellings_of,
)


def test_yes_and_no_are_success_and_failure() -> None:
    assert canonical_verdict("yes") == "success"
    assert canonical_verdict("no") == "failure"


def test_other_words_are_themselves() -> None:
    for word in ("success", "failure", "error", "partial", "blocked", "Yes"):
        assert canonical_verdict(word) == word


def test_spellings_list_ours_first() -> None:
    assert spellings_of("success") == ("success", "yes")
    assert spellings_of("no") == ("failure", "no")
    assert spellings_of("partial") == ("partial",)


def test_same_verdict() -> None:
    assert same_verdict("yes", "success")
    assert not same_verdict("yes", "failure")
