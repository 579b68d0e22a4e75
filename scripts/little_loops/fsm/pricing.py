"""Estimate what an LLM judge call cost from its tokens (Claude Code reports its own cost)."""

from __future__ import annotations

from collections.abc import Mapping

# US dollars per million (input, output) tokens, from Anthropic's published prices. A model
# that is not listed is counted in tokens only; its cost is not guessed.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku-latest": (0.8, 4.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-opus-4-1": (15.0, 75.0),
}


def estimate_cost(model: str, usage: Mapping[str, object]) -> float | None:
    """Dollars for *usage* (input_tokens, output_tokens) on *model*, or None if unknown."""
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        # Dated snapshots share their family's price: claude-haiku-4-5-20251001.
        price = next(
            (p for name, p in PRICES_PER_MTOK.items() if model.startswith(name + "-")), None
        )
    if price is None:
        return None
    tokens_in = usage.get("input_tokens", 0)
    tokens_out = usage.get("output_tokens", 0)
    if not isinstance(tokens_in, int | float) or not isinstance(tokens_out, int | float):
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000
