"""Did-you-mean suggestions for unknown keys, states and names."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to *word*, or None when none is close."""
    import difflib  # here: a valid loop file never needs it (startup time of validate)

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean X?)` for the closest choice, or `` when none is close."""
    close = closest(word, choices)
    return f" (did you mean {close}?)" if close else ""
