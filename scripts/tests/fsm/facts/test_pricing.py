"""Pricing: what every model's tokens cost, by name as the agents and providers write it."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.pricing import PRICES_PER_MTOK, estimate_cost, price_of, priced_models

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


MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gemini-2.5-pro", (1.25, 10.0)),
        ("models/gemini-2.5-flash", (0.30, 2.50)),
        ("gemini-2.5-flash-lite", (0.10, 0.40)),  # the longest match, not gemini-2.5-flash
        ("gemini-2.5-flash-preview-09-2025", (0.30, 2.50)),
        ("gemini-3.1-pro-preview", (2.0, 12.0)),
        ("gemini-3.5-flash-lite", (0.10, 0.40)),  # not listed: its family's
        ("gemini-9-pro", (2.0, 12.0)),
        ("gpt-5-2025-08-07", (1.25, 10.0)),
        ("openai/gpt-5-mini", (0.25, 2.0)),
        ("gpt-5.1-codex-max", (1.25, 10.0)),
        ("gpt-4.1-nano", (0.1, 0.4)),  # not gpt-4.1's price
        ("o3-pro", (20.0, 80.0)),  # not o3's
        ("gpt-5-pro", (15.0, 120.0)),  # not gpt-5's
        ("gpt-5.2-pro-2025-12-11", (21.0, 168.0)),  # not gpt-5.2's
        ("anthropic/claude-3.5-sonnet", (3.0, 15.0)),
        ("llama-3", None),
        ("my-local-model", None),
    ],
)
def test_one_lookup_prices_every_vendors_models(
    model: str, price: tuple[float, float] | None
) -> None:
    found = price_of(model)
    assert (found.input, found.output) == price if found else price is None


@pytest.mark.parametrize(
    ("model", "read", "write"),
    [
        # Anthropic: reads 0.1x and (5-minute) writes 1.25x the input price, every model.
        ("claude-sonnet-4-5", 0.3, 3.75),
        ("claude-haiku-4-5", 0.1, 1.25),
        # OpenAI: each model's own cached-input price; writing the cache is input price.
        ("gpt-5", 0.125, 1.25),
        ("gpt-5-mini", 0.025, 0.25),
        ("gpt-4.1", 0.5, 2.0),
        ("gpt-4.1-mini", 0.1, 0.4),
        ("o3", 0.5, 2.0),
        ("o4-mini", 0.275, 1.1),
        ("gpt-4o", 1.25, 2.5),
        ("o3-mini", 0.55, 1.1),
        # Google: each model's own context-caching price; the implicit cache costs no write.
        ("gemini-2.5-pro", 0.125, 1.25),
        ("gemini-2.5-flash", 0.03, 0.30),
        ("gemini-2.5-flash-lite", 0.01, 0.10),
        ("gemini-3-pro-preview", 0.2, 2.0),
        ("gemini-2.0-flash", 0.025, 0.10),
    ],
)
def test_cached_input_follows_its_vendors_rule(model: str, read: float, write: float) -> None:
    price = price_of(model)
    assert price is not None
    assert (price.cache_read, price.cache_write) == (pytest.approx(read), pytest.approx(write))
    usage = {"cache_read_input_tokens": MILLION, "cache_creation_input_tokens": MILLION}
    assert estimate_cost(model, usage) == pytest.approx(read + write)


@pytest.mark.parametrize(
    ("model", "dollars"),
    [
        # The same model costs the same whichever agent ran it (opencode priced cached
        # gpt-5 and gemini input apart from Codex and Gemini CLI before).
        ("openai/gpt-5", 1.25 + 10.0 + 0.125),
        ("gpt-5", 1.25 + 10.0 + 0.125),
        ("openai/gpt-5-mini-2025-08-07", 0.25 + 2.0 + 0.025),
        ("anthropic/claude-sonnet-4-5", 3.0 + 15.0 + 0.3),
        ("google/gemini-2.5-flash", 0.3 + 2.5 + 0.03),
        ("models/gemini-2.5-flash", 0.3 + 2.5 + 0.03),
        ("o3", 2.0 + 8.0 + 0.5),
        ("gpt-4.1", 2.0 + 8.0 + 0.5),
    ],
)
def test_a_model_costs_the_same_whichever_agent_names_it(model: str, dollars: float) -> None:
    usage = {"input_tokens": MILLION, "output_tokens": MILLION, "cache_read_input_tokens": MILLION}
    assert estimate_cost(model, usage) == pytest.approx(dollars)


def test_the_models_named_in_a_message_are_the_vendors() -> None:
    openai = priced_models("openai")
    assert openai == sorted(openai)
    assert {"gpt-5", "gpt-5-codex", "o3", "o4-mini", "gpt-4.1"} <= set(openai)
    assert not [name for name in openai if name.startswith(("claude", "gemini"))]
    assert set(priced_models("anthropic")) | set(openai) | set(priced_models("google")) == set(
        PRICES_PER_MTOK
    )
