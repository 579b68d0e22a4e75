"""Estimate what tokens cost, for LLM judge calls and for cut-short Claude Code sessions.

A Claude Code session that was cut short never reports its own cost; its tokens are priced here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# US dollars per million (input, output) tokens, from Anthropic's published prices. A name
# also matches its dated snapshots (`claude-haiku-4-5-20251001`); the longest match wins.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4-20250514": (15.0, 75.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-sonnet-4-20250514": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-3-sonnet": (3.0, 15.0),
    "claude-3-haiku": (0.25, 1.25),
}

# A Claude model not listed above (a newer version) is priced as the newest listed model of
# its family: an estimate, but a budget that counts nothing for it would not stop anything.
# A model of no known family is counted in tokens only; its cost is not guessed.
FAMILY_PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "opus": PRICES_PER_MTOK["claude-opus-4-5"],
    "sonnet": PRICES_PER_MTOK["claude-sonnet-4-5"],
    "haiku": PRICES_PER_MTOK["claude-haiku-4-5"],
}
# Names without a minor version that mean the first release (only as the whole name: a
# prefix `claude-opus-4-` would also match the newer claude-opus-4-8).
ALIASES: dict[str, str] = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}
_FAMILY = re.compile(r"^claude-(?:[0-9-]+-)?(opus|sonnet|haiku)(?:-|$)")
# The model inside a provider's name for it: `anthropic/claude-3.5-sonnet`,
# `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5@20250929` (Vertex).
_MODEL_NAME = re.compile(r"(?:^|[/.@ ])(claude-[a-z0-9.-]*[a-z0-9])")

# Token counters of a `usage` (Claude Code's and the API's): all four are priced, and
# summed into the loop's spend.
USAGE_KEYS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)

# Prompt caching, as multiples of the input price: writing the cache (5-minute) and
# reading from it. Claude Code sessions are mostly cache reads.
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


def price_of(model: str) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens for *model*, or None if unknown."""
    found = _MODEL_NAME.search(model.strip().lower())
    if found is None:
        return None
    name = found.group(1).replace(".", "-")  # `claude-3.5-sonnet` is `claude-3-5-sonnet`
    name = ALIASES.get(name, name)
    matches = [key for key in PRICES_PER_MTOK if name == key or name.startswith(key + "-")]
    if matches:
        return PRICES_PER_MTOK[max(matches, key=len)]
    family = _FAMILY.match(name)
    return FAMILY_PRICES_PER_MTOK[family.group(1)] if family else None


def estimate_cost(model: str, usage: Mapping[str, object]) -> float | None:
    """Dollars for *usage* (input, output and cache tokens) on *model*, or None if unknown."""
    price = price_of(model)
    if price is None:
        return None
    counts = []
    for key in USAGE_KEYS:
        value = usage.get(key, 0)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        counts.append(value)
    tokens_in, tokens_out, cache_write, cache_read = counts
    per_input = price[0]
    dollars = (
        tokens_in * per_input
        + tokens_out * price[1]
        + cache_write * per_input * CACHE_WRITE_FACTOR
        + cache_read * per_input * CACHE_READ_FACTOR
    )
    return dollars / 1_000_000
