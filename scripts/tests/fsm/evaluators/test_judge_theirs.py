"""little-loops' judge for `--compat`: its schema, its question, its evidence rule
(evaluators/judge_theirs.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from little_loops.fsm.evaluators.judge_theirs import (
    CANNOT_JUDGE,
    EVIDENCE,
    EVIDENCE_RULE,
    evidence_rule,
    their_question,
    their_schema,
)
from little_loops.fsm.evaluators.llm_structured import DEFAULT_LLM_SCHEMA
from little_loops.fsm.evaluators.spec import EvaluationResult


def test_their_schema_adds_cannot_judge_and_a_required_evidence_quote() -> None:
    before = copy.deepcopy(DEFAULT_LLM_SCHEMA)
    schema = their_schema(DEFAULT_LLM_SCHEMA)
    verdict = schema["properties"]["verdict"]
    assert verdict["enum"] == ["success", "failure", "blocked", "partial", CANNOT_JUDGE]
    assert verdict["description"].endswith(
        "- cannot_judge: Nothing in the output shows either way\n"
    )
    assert schema["properties"][EVIDENCE]["type"] == "string"
    assert schema["required"] == ["verdict", "confidence", "reason", EVIDENCE]
    assert before == DEFAULT_LLM_SCHEMA  # ours is left as it was


def test_their_question_is_the_prompt_or_the_default_with_the_rule() -> None:
    assert their_question("Did the tests pass?", "Default?") == (
        f"Did the tests pass?\n\n{EVIDENCE_RULE}"
    )
    assert their_question(None, "Default?") == f"Default?\n\n{EVIDENCE_RULE}"
    assert their_question("", "Default?") == f"Default?\n\n{EVIDENCE_RULE}"
    assert "word for word" in EVIDENCE_RULE
    assert CANNOT_JUDGE in EVIDENCE_RULE


def _judged(verdict: str, raw: Any) -> EvaluationResult:
    return evidence_rule(EvaluationResult(verdict, {"raw": raw, "confidence": 0.9}))


@pytest.mark.parametrize(
    ("verdict", "raw", "kept"),
    [
        ("success", {"verdict": "success", EVIDENCE: "3 tests passed"}, "success"),
        ("partial", {"verdict": "partial", EVIDENCE: "2 of 3"}, "partial"),
        ("success_uncertain", {EVIDENCE: "3 tests passed"}, "success_uncertain"),
        ("success", {"verdict": "success"}, "failure"),
        ("success", {EVIDENCE: ""}, "failure"),
        ("success", {EVIDENCE: " \n\t"}, "failure"),
        ("success", {EVIDENCE: None}, "failure"),
        ("success", {EVIDENCE: ["3 tests passed"]}, "failure"),
        ("blocked", {}, "failure"),
        ("success", "not a mapping", "failure"),
        ("success", None, "failure"),
        ("success_uncertain", {}, "failure_uncertain"),  # the confidence suffix is kept
    ],
)
def test_a_verdict_without_a_quote_is_failure(verdict: str, raw: Any, kept: str) -> None:
    result = _judged(verdict, raw)
    assert result.verdict == kept
    assert result.details["evidence_coerced"] is (kept != verdict)
    assert result.details["confidence"] == 0.9


@pytest.mark.parametrize(
    "verdict", [CANNOT_JUDGE, f"{CANNOT_JUDGE}_uncertain", "error", "error_uncertain"]
)
def test_cannot_judge_and_error_need_no_quote(verdict: str) -> None:
    result = _judged(verdict, {"verdict": verdict})
    assert result.verdict == verdict
    assert "evidence_coerced" not in result.details
