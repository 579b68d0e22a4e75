"""little-loops' judge, for `--compat`: a `cannot_judge` verdict, and no evidence is `failure`.

Only for a judge with no schema of the loop's own, as there: the default schema gains the
verdict `cannot_judge` and a required `evidence` (a quote of the output), the question asks
for both, and a verdict other than `cannot_judge` given with no evidence becomes `failure`
(little-loops' `no`), its confidence suffix kept.
"""

from __future__ import annotations

import copy
from typing import Any

from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.evaluators.spec import EvaluationResult
from little_loops.fsm.facts.verdict_words import FAILURE

CANNOT_JUDGE = "cannot_judge"
# How many times in a row little-loops runs a state again whose judge answered cannot_judge
# with no route for it (its `_ABSTENTION_HOLD_CAP`), before its error route: the run's rule
# is engine/rules/abstentions.py.
HOLD_CAP = 2
EVIDENCE = "evidence"
ERROR = "error"
# What the question adds: the rule, in our words.
EVIDENCE_RULE = (
    "Support a verdict with evidence: quote, word for word, the part of the output it rests "
    f"on, in '{EVIDENCE}'. When nothing in the output supports any verdict, answer "
    f"'{CANNOT_JUDGE}' instead of guessing; a verdict given without a quote counts as failure."
)


def is_abstention(verdict: str) -> bool:
    """Whether *verdict* is little-loops' `cannot_judge`, or it with a confidence suffix."""
    return verdict == CANNOT_JUDGE or verdict.startswith(f"{CANNOT_JUDGE}_")


def their_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Our default *schema* with little-loops' `cannot_judge` verdict and `evidence` field."""
    out = copy.deepcopy(schema)
    verdict = out["properties"]["verdict"]
    verdict["enum"] = [*verdict["enum"], CANNOT_JUDGE]
    verdict["description"] += f"- {CANNOT_JUDGE}: Nothing in the output shows either way\n"
    out["properties"][EVIDENCE] = {
        "type": "string",
        "description": "A word-for-word quote of the output the verdict rests on ('' if none)",
    }
    out["required"] = [*out["required"], EVIDENCE]
    return out


def their_question(prompt: str | None, default: str) -> str:
    """The judge's question (*prompt*, else *default*) with little-loops' evidence rule."""
    return f"{prompt or default}\n\n{EVIDENCE_RULE}"


def evidence_rule(result: EvaluationResult) -> EvaluationResult:
    """*result* with a verdict given without evidence made `failure`, as little-loops does
    (`cannot_judge` and `error` need none); `details["evidence_coerced"]` says whether."""
    base = result.verdict.removesuffix(UNCERTAIN_SUFFIX)
    if base in (ERROR, CANNOT_JUDGE):
        return result
    raw = result.details.get("raw")
    evidence = raw.get(EVIDENCE) if isinstance(raw, dict) else None
    coerced = not (isinstance(evidence, str) and evidence.strip())
    result.details["evidence_coerced"] = coerced
    if coerced:
        result.verdict = FAILURE + result.verdict[len(base) :]
    return result
