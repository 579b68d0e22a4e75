"""The judge's question and how its answer becomes a verdict (evaluators/judge_rules.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.evaluators.judge_rules import (
    DEFAULT_LLM_PROMPT,
    MAX_OUTPUT_CHARS,
    judge_input_error,
    judge_text,
    one_line,
    verdict_enum,
    verdict_from_answer,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["success", "failure"]}},
}


def test_judge_text_asks_the_question_about_the_end_of_the_output() -> None:
    assert judge_text("ok") == f"{DEFAULT_LLM_PROMPT}\n\n<action_output>\nok\n</action_output>"
    long = "x" * (MAX_OUTPUT_CHARS + 10)
    text = judge_text(long, "Did it pass?")
    assert text.startswith("Did it pass?\n\n(Output truncated: the last 4000 of 4010 characters.)")
    assert "x" * MAX_OUTPUT_CHARS + "\n</action_output>" in text


def test_inputs_no_judge_can_use() -> None:
    assert judge_input_error(SCHEMA, 0.5, "m") is None
    bad = judge_input_error({"type": "array"}, 0.5, "m")
    assert bad is not None
    assert (bad.verdict, bad.details["error"]) == (
        "error",
        "schema must be a mapping with type: object",
    )
    worse = judge_input_error(SCHEMA, True, "m")
    assert worse is not None
    assert worse.details["error"] == "min_confidence must be a number, not True"


def test_a_verdict_from_the_answer() -> None:
    result = verdict_from_answer(
        {"verdict": "success", "confidence": 0.9, "reason": "ok"}, SCHEMA, 0.5, False, "m", {}
    )
    assert result.verdict == "success"
    assert (result.details["confidence"], result.details["confident"]) == (0.9, True)
    unsure = verdict_from_answer(
        {"verdict": "failure", "confidence": 0.2}, SCHEMA, 0.5, True, "m", {}
    )
    assert unsure.verdict == "failure_uncertain"
    clamped = verdict_from_answer(
        {"verdict": "success", "confidence": 7}, SCHEMA, 0.5, True, "m", {}
    )
    assert clamped.details["confidence"] == 1.0


def test_answers_that_are_errors() -> None:
    def error(answer: Any) -> str:
        result = verdict_from_answer(answer, SCHEMA, 0.5, False, "m", {})
        assert result.verdict == "error"
        return str(result.details["error"])

    assert error([]) == "the model's evaluation is not an object"
    assert error({"confidence": 1}) == "the model's evaluation has no verdict"
    assert error({"verdict": "maybe"}) == (
        "the model answered verdict 'maybe', which is not one of: success, failure"
    )
    assert error({"verdict": "success", "confidence": "high"}) == (
        'the model\'s confidence is not a number: "high"'
    )


def test_one_line_and_verdict_enum() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 10, 5) == "xx..."
    assert verdict_enum(SCHEMA) == ["success", "failure"]
    assert verdict_enum({"type": "object"}) is None
    assert verdict_enum("nope") is None


def test_a_judge_saying_yes_or_no_gives_success_or_failure() -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["yes", "no", "partial"]}},
    }
    said = {"yes": "success", "no": "failure", "partial": "partial"}
    for answer, verdict in said.items():
        result = verdict_from_answer({"verdict": answer}, schema, 0.5, False, "m", {})
        assert result.verdict == verdict
    unsure = verdict_from_answer({"verdict": "no", "confidence": 0.1}, schema, 0.5, True, "m", {})
    assert unsure.verdict == "failure_uncertain"
