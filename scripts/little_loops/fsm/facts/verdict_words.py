"""The verdict words a loop may write or an evaluator may give, and our name for each."""

from __future__ import annotations

# Our names for the two verdicts every pass/fail judgement gives (canonical everywhere:
# events, reports, route labels).
SUCCESS = "success"
FAILURE = "failure"

# The other words for them: little-loops' yes/no. `yes` IS `success` and `no` IS
# `failure`, wherever a verdict is written (`on_yes`, a route key `yes:`) or given (a
# judge's answer, simulate's scripted verdicts). The one table of the pairs.
VERDICT_SYNONYMS: dict[str, str] = {"yes": SUCCESS, "no": FAILURE}


def canonical_verdict(word: str) -> str:
    """Our name for the verdict *word* (`yes` -> `success`); any other word unchanged."""
    return VERDICT_SYNONYMS.get(word, word)


def spellings_of(verdict: str) -> tuple[str, ...]:
    """Every word that gives *verdict* (ours first): `success` -> (`success`, `yes`)."""
    ours = canonical_verdict(verdict)
    return (ours, *(word for word, means in VERDICT_SYNONYMS.items() if means == ours))


def same_verdict(first: str, second: str) -> bool:
    """Whether two written verdicts are one (`yes` and `success` are)."""
    return canonical_verdict(first) == canonical_verdict(second)


__all__ = [
    "FAILURE",
    "SUCCESS",
    "VERDICT_SYNONYMS",
    "canonical_verdict",
    "same_verdict",
    "spellings_of",
]
