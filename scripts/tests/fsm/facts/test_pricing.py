"""Pricing: what Claude tokens cost, by model name as Claude Code and providers write it."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.pricing import estimate_cost

# --- moved from test_spend.py ---


class TestPricing:
    def test_known_model_and_dated_snapshot(self) -> None:
        usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}
        assert estimate_cost("claude-haiku-4-5", usage) == pytest.approx(1.5)
        assert estimate_cost("claude-haiku-4-5-20251001", usage) == pytest.approx(1.5)

    def test_unknown_model_is_not_guessed(self) -> None:
        assert estimate_cost("someone-elses-model", {"input_tokens": 5}) is None
        assert estimate_cost("claude-haiku-4-5", {"input_tokens": "5"}) is None

    def test_a_newer_model_is_priced_as_its_family(self) -> None:
        usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
        assert estimate_cost("claude-opus-4-8", usage) == pytest.approx(5 + 25)
        assert estimate_cost("claude-sonnet-4-6-20260101", usage) == pytest.approx(3 + 15)
        assert estimate_cost("claude-3-7-sonnet-latest", usage) == pytest.approx(3 + 15)
        assert estimate_cost("claude-opus-4-1", usage) == pytest.approx(15 + 75)  # listed
        # Older models are listed with their own (higher) price, dated or not.
        assert estimate_cost("claude-opus-4-20250514", usage) == pytest.approx(15 + 75)
        assert estimate_cost("claude-3-opus-20240229", usage) == pytest.approx(15 + 75)
        # Provider prefixes name the same model; names that only contain a family do not.
        assert estimate_cost("us.anthropic.claude-sonnet-4-5-20250929-v1:0", usage) == 18
        assert estimate_cost("anthropic/claude-haiku-4-5", usage) == pytest.approx(1 + 5)
        assert estimate_cost("my-claude-haiku", usage) is None
        # Vertex, OpenRouter-style dotted versions, context-window tags, any case.
        for name, price in (
            ("claude-sonnet-4-5@20250929", 3 + 15),
            ("claude-3-5-sonnet-v2@20241022", 3 + 15),
            ("claude-opus-4-1@20250805", 15 + 75),
            ("anthropic/claude-opus-4.1", 15 + 75),
            ("anthropic/claude-opus-4", 15 + 75),
            ("anthropic/claude-3.5-sonnet", 3 + 15),
            ("claude-sonnet-4-5-20250929[1m]", 3 + 15),
            ("Claude-Haiku-4-5 ", 1 + 5),
        ):
            assert estimate_cost(name, usage) == pytest.approx(price), name
        assert estimate_cost("claude-haikus", usage) is None

    def test_cache_tokens_are_priced(self) -> None:
        # A Claude Code session is mostly cache reads: leaving them out would count ~nothing.
        usage = {
            "input_tokens": 3,
            "output_tokens": 200,
            "cache_creation_input_tokens": 20_000,
            "cache_read_input_tokens": 150_000,
        }
        expected = (3 * 3 + 200 * 15 + 20_000 * 3 * 1.25 + 150_000 * 3 * 0.1) / 1e6
        assert estimate_cost("claude-sonnet-4-5", usage) == pytest.approx(expected)
