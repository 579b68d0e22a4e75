"""Spend: dollars and tokens added up per source (`claude_*`, `judge_*`), and how they read."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.facts.spend import Spend, dollars, format_cost, reported_cost


class TestSpend:
    def test_spend_adds_tokens_with_prefix(self) -> None:
        spend = Spend()
        spend.add(0.5, {"input_tokens": 3, "output_tokens": 1, "junk": "x"}, "claude_")
        spend.add(None, {"input_tokens": 2}, "claude_")
        assert spend.cost_usd == 0.5
        assert spend.usage == {"claude_input_tokens": 5, "claude_output_tokens": 1}
        assert spend.reached(0.5)
        assert not spend.reached(0.6)
        assert not spend.reached(None)
        assert [dollars(x) for x in (0.1, 2, 2.50, 1e-9, 0.12345)] == [
            "$0.1",
            "$2",
            "$2.5",
            "$0.000000001",
            "$0.12345",
        ]


def test_llm_judge_tokens_and_estimate_count_toward_spend(fake_anthropic: Any) -> None:
    fake_anthropic.reply_tool(
        {"verdict": "success", "confidence": 0.9, "reason": "ok"},
        usage={"input_tokens": 1000, "output_tokens": 50},
    )

    class Runner:
        def run(self, request: ActionRequest) -> ActionResult:
            return ActionResult("done", "", 0, 1)

    fsm = FSMLoop(
        name="judged",
        initial="fix",
        states={
            "fix": StateConfig(action="/fix", on_success="done", on_failure="fix"),
            "done": StateConfig(terminal=True),
        },
        llm=LLMConfig(model="claude-haiku-4-5"),
    )
    events: list[dict[str, Any]] = []
    result = FSMExecutor(fsm, event_callback=events.append, action_runner=Runner()).run()
    assert result.final_state == "done"
    assert result.usage == {"judge_input_tokens": 1000, "judge_output_tokens": 50}
    assert result.cost_usd == pytest.approx(0.00125)
    assert next(e for e in events if e["event"] == "evaluate")["cost_usd"] == 0.00125


def test_a_cost_is_shown_with_four_decimals_and_a_tiny_one_not_as_zero() -> None:
    amounts = (0.1830, 0.0003, 0.00005, 0.00004, 0.0, 12.5)
    assert [format_cost(x) for x in amounts] == [
        "$0.1830",
        "$0.0003",
        "$0.0001",
        "<$0.0001",
        "$0.0000",
        "$12.5000",
    ]


@pytest.mark.parametrize(
    ("said", "counted"),
    [(0.25, 0.25), (3, 3.0), (0, 0.0), (-1.5, 0.0), (10_000, 10_000.0), (None, None),
     ("0.25", None), (True, None), ([1], None)],
)  # fmt: skip
def test_a_reported_cost_is_counted_as_the_dollars_it_says(said: object, counted: object) -> None:
    assert reported_cost(said) == (counted, None)


@pytest.mark.parametrize(
    ("said", "shown"),
    [(float("inf"), "$inf"), (float("-inf"), "$-inf"), (float("nan"), "NaN"),
     (1e300, "$1e+300"), (10**400, "a 401-digit number"), (10_000.5, "$10000.5")],
)  # fmt: skip
def test_a_cost_no_call_can_have_is_an_error_never_counted(said: object, shown: str) -> None:
    counted, error = reported_cost(said)
    assert counted is None
    assert error == (
        f"reported a cost of {shown}, outside any plausible range (at most $10000 for one call)"
    )
