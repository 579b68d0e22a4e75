"""The price of every model ll-loop counts, and the one lookup and cost of a model's tokens.

An agent that reports no cost (or a Claude Code session cut short) and the LLM judge are
priced here: each agent kind only reads its tokens into USAGE_KEYS and asks
`estimate_cost`. Each vendor's prices are written once, by its own rule for cached input
(see docs/cli.md, "Prices").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple


class Price(NamedTuple):
    """US dollars per million tokens of one model: fresh input, output, input read from
    the prompt cache and input written to it, and whose published price it is."""

    vendor: str
    input: float
    output: float
    cache_read: float
    cache_write: float


def _anthropic(per_in: float, per_out: float) -> Price:
    # Anthropic prices prompt caching as multiples of the input price, the same for every
    # model: a cache read 0.1x, a cache write (the 5-minute cache) 1.25x.
    return Price("anthropic", per_in, per_out, per_in * 0.1, per_in * 1.25)


def _openai(per_in: float, cached: float, per_out: float) -> Price:
    # OpenAI publishes each model's own cached-input price (a tenth of the input price for
    # gpt-5, a quarter for gpt-4.1, o3 and o4-mini, a half for gpt-4o and o3-mini); writing
    # the cache costs nothing over the input price.
    return Price("openai", per_in, per_out, cached, per_in)


def _google(per_in: float, cached: float, per_out: float) -> Price:
    # Google publishes each model's own context-caching price (a tenth of the input price
    # for the 2.5 and 3 models, a quarter for 2.0 Flash); the implicit cache costs nothing
    # to write. Standard tier, prompts up to 200k tokens; thinking is output.
    return Price("google", per_in, per_out, cached, per_in)


# The one price table: from Anthropic's, OpenAI's and Google's published prices. A name
# also matches its dated snapshots and versions (`claude-haiku-4-5-20251001`,
# `gpt-5-2025-08-07`, `gemini-2.5-flash-preview-09-2025`); the longest match wins.
PRICES_PER_MTOK: dict[str, Price] = {
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-0": _anthropic(15.0, 75.0),
    "claude-opus-4-20250514": _anthropic(15.0, 75.0),
    "claude-sonnet-4-0": _anthropic(3.0, 15.0),
    "claude-sonnet-4-20250514": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-opus": _anthropic(15.0, 75.0),
    "claude-3-sonnet": _anthropic(3.0, 15.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    "gpt-5": _openai(1.25, 0.125, 10.0),
    "gpt-5-codex": _openai(1.25, 0.125, 10.0),
    "gpt-5-mini": _openai(0.25, 0.025, 2.0),
    "gpt-5-nano": _openai(0.05, 0.005, 0.4),
    "gpt-5-pro": _openai(15.0, 15.0, 120.0),  # no cached-input price: input's
    "gpt-5.1": _openai(1.25, 0.125, 10.0),
    "gpt-5.1-codex": _openai(1.25, 0.125, 10.0),
    "gpt-5.1-codex-mini": _openai(0.25, 0.025, 2.0),
    "gpt-5.2": _openai(1.75, 0.175, 14.0),
    "gpt-5.2-codex": _openai(1.75, 0.175, 14.0),
    "gpt-5.2-pro": _openai(21.0, 21.0, 168.0),  # no cached-input price: input's
    "gpt-4.1": _openai(2.0, 0.5, 8.0),
    "gpt-4.1-mini": _openai(0.4, 0.1, 1.6),
    "gpt-4.1-nano": _openai(0.1, 0.025, 0.4),
    "gpt-4o": _openai(2.5, 1.25, 10.0),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.6),
    "o3": _openai(2.0, 0.5, 8.0),
    "o3-mini": _openai(1.1, 0.55, 4.4),
    "o3-pro": _openai(20.0, 20.0, 80.0),  # no cached-input price: input's
    "o4-mini": _openai(1.1, 0.275, 4.4),
    "gemini-3.1-pro": _google(2.0, 0.2, 12.0),
    "gemini-3-pro": _google(2.0, 0.2, 12.0),
    "gemini-3-flash": _google(0.5, 0.05, 3.0),
    "gemini-2.5-pro": _google(1.25, 0.125, 10.0),
    "gemini-2.5-flash": _google(0.30, 0.03, 2.50),
    "gemini-2.5-flash-lite": _google(0.10, 0.01, 0.40),
    "gemini-2.0-flash": _google(0.10, 0.025, 0.40),
    "gemini-2.0-flash-lite": _google(0.075, 0.075, 0.30),  # no context caching: input's
}

# A Claude or Google model not listed above (a newer version) is priced as the newest
# listed model of its family: an estimate, but a budget that counts nothing for it would
# not stop anything. A model of no known family is counted in tokens only. (Patterns as
# text, compiled when first used: a run whose steps spend nothing compiles none.)
_FAMILIES: tuple[tuple[str, dict[str, str]], ...] = (
    (
        r"^claude-(?:[0-9-]+-)?(opus|sonnet|haiku)(?:-|$)",
        {"opus": "claude-opus-4-5", "sonnet": "claude-sonnet-4-5", "haiku": "claude-haiku-4-5"},
    ),
    (
        r"^gemini-.*?(flash-lite|flash|pro)\b",
        {"flash-lite": "gemini-2.5-flash-lite", "flash": "gemini-3-flash", "pro": "gemini-3.1-pro"},
    ),
)
# Claude names without a minor version that mean the first release (only as the whole
# name: a prefix `claude-opus-4-` would also match the newer claude-opus-4-8).
ALIASES: dict[str, str] = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}
# The Claude model inside a provider's name for it: `anthropic/claude-3.5-sonnet`,
# `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5@20250929` (Vertex).
_CLAUDE_NAME = r"(?:^|[/.@ ])(claude-[a-z0-9.-]*[a-z0-9])"

# The token counters every agent's usage is read into (Claude Code's and the API's
# names): all four are priced, and summed into the loop's spend.
USAGE_KEYS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def model_id(model: str) -> str:
    """The table's spelling of *model* as an agent or provider writes it: the Claude model
    inside a provider's name (dots as dashes: `claude-3.5-sonnet` is `claude-3-5-sonnet`),
    else the last part of `provider/model` (`openai/gpt-5`, `models/gemini-2.5-pro`)."""
    name = model.strip().lower()
    found = re.search(_CLAUDE_NAME, name)
    if found is not None:
        claude = found.group(1).replace(".", "-")
        return ALIASES.get(claude, claude)
    return name.rsplit("/", 1)[-1]


def price_of(model: str) -> Price | None:
    """The price of *model* (any vendor's, as any agent or provider names it), or None."""
    name = model_id(model)
    matches = [key for key in PRICES_PER_MTOK if name == key or name.startswith(key + "-")]
    if matches:
        return PRICES_PER_MTOK[max(matches, key=len)]
    for pattern, newest in _FAMILIES:
        family = re.match(pattern, name)
        if family is not None:
            return PRICES_PER_MTOK[newest[family.group(1)]]
    return None


def priced_models(vendor: str) -> list[str]:
    """The models of *vendor* the table prices, sorted (for a message naming them)."""
    return sorted(name for name, price in PRICES_PER_MTOK.items() if price.vendor == vendor)


def estimate_cost(model: str, usage: Mapping[str, object]) -> float | None:
    """Dollars for *usage* (USAGE_KEYS: fresh input, output, cache writes and reads) on
    *model*, or None when its price is unknown or a count is not a number."""
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
    dollars = (
        tokens_in * price.input
        + tokens_out * price.output
        + cache_write * price.cache_write
        + cache_read * price.cache_read
    )
    return dollars / 1_000_000
