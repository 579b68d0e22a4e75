"""The judge through a coding agent's CLI that answers schema-checked JSON (its `spec.judge`).

`llm.backend: <agent>` (or `auto` on a state whose agent can judge, with no Anthropic key)
asks that agent's CLI the same question as the API judge: the verdict schema, as the agent
needs it, in a temporary file; its answer read by the agent's own `finish` and checked by
the shared rules. Its tokens and cost are recorded like the API judge's.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.evaluators.judge_rules import (
    judge_error,
    judge_text,
    one_line,
    run_judge,
    verdict_from_answer,
)
from little_loops.fsm.evaluators.spec import EvaluationResult
from little_loops.fsm.facts.spend import reported_cost


def evaluate_with_agent(
    spec: ActionKindSpec,
    output: str,
    prompt: str | None,
    schema: dict[str, Any],
    min_confidence: float,
    uncertain_suffix: bool,
    model: str | None,
    timeout: float,
) -> EvaluationResult:
    """*spec*'s agent's verdict on *output* (asked with *model*, or the agent's own default
    when None); an `error` verdict with the reason when it cannot run, times out, fails or
    gives no JSON object."""
    judge = spec.judge
    shown = model or spec.name
    if judge is None:
        return judge_error(f"{spec.name} cannot judge: {spec.no_judge}", shown)
    question = judge_text(output, prompt)
    options = {"model": model} if model else {}
    with tempfile.TemporaryDirectory(prefix="ll-judge-") as folder:
        schema_file = Path(folder) / "schema.json"
        schema_file.write_text(json.dumps(judge.schema(schema)), encoding="utf-8")
        argv = judge.argv(question, schema_file, options, spec.program)
        missing = f"{spec.program[0]}: command not found on PATH"
        raw = run_judge(argv, timeout, spec.name, missing, shown)
    if isinstance(raw, EvaluationResult):
        return raw
    request = ActionRequest(question, timeout, spec.name, env=dict(os.environ), options=options)
    result = spec.finish(raw, request)
    details: dict[str, Any] = {"backend": spec.name}
    cost, implausible = reported_cost(result.cost_usd)
    if implausible is not None:
        return judge_error(f"{spec.name} {implausible}", shown, **details)
    if cost is not None:
        details["cost_usd"] = cost
    usage: dict[str, Any] = dict(result.usage or {})
    limit = spec.usage_limit(result)
    if limit is not None:  # waited out like the API judge's 429 (ratelimit.judge_limit)
        details.update(limit=limit.kind, resets_at=limit.resets_at)
        return judge_error(f"{spec.name} is limited: {limit.message}", shown, **details)
    answer = judge.verdict(result)
    if answer is None:
        why = result.error or f"no JSON object in its answer: {one_line(result.output or '')}"
        return judge_error(f"{spec.name} gave no verdict: {one_line(why)}", shown, **details)
    verdict = verdict_from_answer(answer, schema, min_confidence, uncertain_suffix, shown, usage)
    verdict.details.update(details)
    return verdict
