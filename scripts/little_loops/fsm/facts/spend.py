"""What a run has spent on Claude: dollars and tokens, and the budget check."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.facts.pricing import estimate_cost


@dataclass
class Spend:
    """Claude Code's reported cost plus the LLM judge's estimate, and token counters
    (`claude_*` from Claude Code actions, `judge_*` from llm_structured evaluations)."""

    cost_usd: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)

    def add(self, cost: Any, usage: Any, prefix: str) -> None:
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.cost_usd += float(cost)
        if isinstance(usage, dict):
            for key, value in usage.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    self.usage[prefix + key] = self.usage.get(prefix + key, 0) + value

    def add_judge(self, model: str, usage: dict[str, Any]) -> float | None:
        """Count an LLM judge call; returns its estimated cost (None for unpriced models)."""
        cost = estimate_cost(model, usage)
        self.add(cost, usage, "judge_")
        return cost

    def add_judge_cost(self, cost: float, usage: Any) -> float:
        """Count a judge call whose cost was reported (the judge via Claude Code); returns it."""
        self.add(cost, usage, "judge_")
        return cost

    def reached(self, limit: float | None) -> bool:
        return limit is not None and self.cost_usd >= float(limit)

    def budget_message(self, limit: float, state: str) -> str:
        return (
            f"spend {format_cost(self.cost_usd)} reached max_cost_usd {dollars(limit)} "
            f"before state '{state}'"
        )


_UNKEPT = "the budget {limit} (max_cost_usd, --max-cost) cannot be kept: "


def budget_unkept(limit: float, why: str) -> str:
    """The one line of a budget that cannot be kept (refused before the first step, or
    stopped after a step whose spend was not counted): names the limit, then *why*."""
    return _UNKEPT.format(limit=dollars(limit)) + why


def is_unkept(error: str | None) -> bool:
    """Whether a run's *error* is budget_unkept's (not the budget used up)."""
    head = _UNKEPT.split("{limit}", 1)[0]
    return error is not None and error.startswith(head) and "cannot be kept: " in error


def unpriced(usage: Mapping[str, object] | None) -> str | None:
    """Why a call that reported *usage* but no cost cannot be counted (it used tokens no
    price is known for); None when it used none (nothing was spent)."""
    used = sum(
        value
        for value in (usage or {}).values()
        if isinstance(value, int) and not isinstance(value, bool) and value > 0
    )
    return f"it used {used:,} tokens, and no price is known for its model" if used else None


MOST_PLAUSIBLE_COST_USD = 10_000.0  # what one agent or judge call may say it cost, at most


def implausible_cost(cost: object) -> str | None:
    """Why a cost an agent or a judge reported cannot be one (not finite, or more than
    MOST_PLAUSIBLE_COST_USD for one call: counted, `1e300` would end every budget and print
    as a 300-digit sum), to refuse as an error of its output; None for a plausible cost or
    no number at all (no cost said)."""
    if not isinstance(cost, int | float) or isinstance(cost, bool):
        return None
    try:
        value = float(cost)
    except OverflowError:  # an integer of hundreds of digits
        value, said = float("inf"), f"a {len(str(cost))}-digit number"
    else:
        said = f"${value:.6g}" if value == value else "NaN"
    if math.isfinite(value) and value <= MOST_PLAUSIBLE_COST_USD:
        return None
    return (
        f"reported a cost of {said}, outside any plausible range (at most "
        f"{dollars(MOST_PLAUSIBLE_COST_USD)} for one call)"
    )


def reported_cost(cost: object) -> tuple[float | None, str | None]:
    """The cost an agent or a judge reported, as the run counts it: the dollars (at least
    0; None when it said no number) and None, or None and why the number cannot be a cost
    (implausible_cost), an error of its output. Every reader of a reported cost asks this."""
    implausible = implausible_cost(cost)
    if implausible is not None:
        return None, implausible
    if not isinstance(cost, int | float) or isinstance(cost, bool):
        return None, None  # no number said
    return max(0.0, float(cost)), None


MOST_PLAUSIBLE_TOKENS = 10**12  # what one agent or judge call may say it used, per kind


def implausible_tokens(counts: Mapping[str, object]) -> str | None:
    """Why token *counts* an agent reported cannot be ones (infinite, NaN, or more than
    MOST_PLAUSIBLE_TOKENS: priced, `1e400` would not even be a number), to refuse as an error
    of its output like implausible_cost; None when every number among them is plausible."""
    for key, value in counts.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        try:
            fits = float(value) <= MOST_PLAUSIBLE_TOKENS
        except OverflowError:  # an integer of hundreds of digits
            fits = False
        if not fits:  # NaN compares false too
            said = f"a {len(str(value))}-digit number" if isinstance(value, int) else str(value)
            return (
                f"reported {key} of {said}, outside any plausible range (at most "
                f"{MOST_PLAUSIBLE_TOKENS:,} for one call)"
            )
    return None


def dollars(amount: float) -> str:
    """A limit as written, without exponent: `$0.1`, `$2`, `$0.000000001`."""
    return "$" + (f"{float(amount):.10f}".rstrip("0").rstrip(".") or "0")


def format_cost(amount: float) -> str:
    """A sum spent, as every command shows one: `$0.1830`, `$0.0003`, `$12.5000`; more than
    nothing but under half a hundredth of a cent is `<$0.0001`, never `$0.0000`."""
    text = f"${amount:.4f}"
    return "<$0.0001" if amount > 0 and text == "$0.0000" else text
