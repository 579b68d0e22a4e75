"""Did-you-mean suggestions for unknown keys, states and names."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to *word*, or None when none is close."""
    import difflib  # here: a valid loop file never needs it (startup time of validate)

    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return close[0]
    # A short form (`op` for operator) is too far off for difflib; take the one that
    # starts with it.
    starting = [choice for choice in choices if len(word) >= 2 and choice.startswith(word)]
    return starting[0] if len(starting) == 1 else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean X?)` for the closest choice, or `` when none is close."""
    close = closest(word, choices)
    return f" (did you mean {close}?)" if close else ""
