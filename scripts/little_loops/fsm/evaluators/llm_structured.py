"""The `llm_structured` evaluator: the one place ll-loop asks a model for a verdict.

One Messages API call with a forced `evaluate` tool whose input schema is the verdict
schema. It is bounded in time (one deadline over every attempt) and in size (the last
4000 characters of output), and every failure becomes the `error` verdict with a
one-line reason in `details["error"]`; it never raises into the loop. The anthropic
package is imported only when a call is about to be made.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from little_loops.fsm.evaluators.config import DEFAULT_LLM_MODEL, EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.judge_rules import (
    DEFAULT_LLM_PROMPT,
    MAX_OUTPUT_CHARS,
    UNCERTAIN_SUFFIX,
    judge_error,
    judge_input_error,
    judge_text,
    one_line,
    verdict_enum,
    verdict_from_answer,
)
from little_loops.fsm.evaluators.judge_theirs import evidence_rule, their_question, their_schema
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec
from little_loops.fsm.facts.verdict_words import canonical_verdict
from little_loops.fsm.values.interpolation import to_text

DEFAULT_LLM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {
            "type": "string",
            "enum": ["success", "failure", "blocked", "partial"],
            "description": (
                "- success: The action completed its goal\n"
                "- failure: The action failed, should retry\n"
                "- blocked: Cannot proceed without external help\n"
                "- partial: Made progress but not complete\n"
            ),
        },
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Confidence in this verdict (0-1)",
        },
        "reason": {"type": "string", "description": "Brief explanation"},
    },
    "required": ["verdict", "confidence", "reason"],
}
DEFAULT_LLM_VERDICTS: tuple[str, ...] = tuple(DEFAULT_LLM_SCHEMA["properties"]["verdict"]["enum"])

__all__ = [
    "DEFAULT_LLM_PROMPT",
    "DEFAULT_LLM_SCHEMA",
    "DEFAULT_LLM_VERDICTS",
    "MAX_OUTPUT_CHARS",
    "SPEC",
    "UNCERTAIN_SUFFIX",
    "build_message_request",
    "evaluate_llm_structured",
    "schema_verdicts",
]

TOOL_NAME = "evaluate"
TOOL_DESCRIPTION = "Provide your evaluation of the action result"
NO_API_KEY = "no API key: set ANTHROPIC_API_KEY"

# Transient answers worth another attempt while the deadline allows one.
_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MAX_ATTEMPTS = 3
_FIRST_BACKOFF = 0.5
# An attempt is only worth starting with at least this many seconds left.
_MIN_ATTEMPT_SECONDS = 1.0


def build_message_request(
    output: str,
    prompt: str | None = None,
    schema: dict[str, Any] | None = None,
    model: str = DEFAULT_LLM_MODEL,
    max_tokens: int = 256,
) -> dict[str, Any]:
    """The keyword arguments of the `messages.create` call that judges *output*."""
    content = judge_text(output, prompt)
    return {
        "model": model,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": content}],
        "tools": [
            {
                "name": TOOL_NAME,
                "description": TOOL_DESCRIPTION,
                "input_schema": schema or DEFAULT_LLM_SCHEMA,
            }
        ],
        "tool_choice": {"type": "tool", "name": TOOL_NAME},
    }


def evaluate_llm_structured(
    output: str,
    prompt: str | None = None,
    schema: dict[str, Any] | None = None,
    min_confidence: float = 0.5,
    uncertain_suffix: bool = False,
    model: str = DEFAULT_LLM_MODEL,
    max_tokens: int = 256,
    timeout: float = 30,
    client: Any = None,
) -> EvaluationResult:
    """Ask *model* for a verdict on *output* and return it with its confidence.

    `details`: confidence, confident (confidence >= min_confidence), reason, raw (the
    tool input), model, usage {input_tokens, output_tokens}. With *uncertain_suffix*, an
    unconfident verdict becomes `<verdict>_uncertain`. *timeout* bounds the whole call,
    retries included. *client* is an `anthropic.Anthropic` to use instead of one built
    from the environment (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL).
    """
    schema = schema or DEFAULT_LLM_SCHEMA
    problem = judge_input_error(schema, min_confidence, model)
    if problem is not None:
        return problem
    request = build_message_request(output, prompt, schema, model, max_tokens)
    if client is None:
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            return _error(NO_API_KEY, model)
        try:
            import anthropic
        except ImportError:
            return _error("the anthropic package is not installed (pip install anthropic)", model)
        client = anthropic.Anthropic(timeout=timeout, max_retries=0)
    response, failure = _call(client, request, timeout)
    if response is None:
        return _error(failure, model)
    return _verdict(response, schema, min_confidence, uncertain_suffix, model)


_error = judge_error


def _call(client: Any, request: dict[str, Any], timeout: float) -> tuple[Any, str]:
    """(response, "") or (None, one-line reason); retries transient failures until the
    deadline, each attempt's own timeout being the time that is left."""
    import anthropic

    deadline = time.monotonic() + timeout
    reason = "no attempt made"
    for attempt in range(_MAX_ATTEMPTS):
        left = deadline - time.monotonic()
        if attempt and left < _MIN_ATTEMPT_SECONDS:
            break
        retry_after: float | None = None
        try:
            return client.with_options(timeout=max(left, 0.1), max_retries=0).messages.create(
                **request
            ), ""
        except anthropic.APITimeoutError:
            return None, f"API call timed out after {timeout:g}s"
        except anthropic.APIStatusError as exc:
            reason = f"API error {exc.status_code}: {_status_message(exc)}"
            if exc.status_code not in _RETRY_STATUSES:
                return None, reason
            retry_after = _retry_after(exc)
        except anthropic.APIConnectionError as exc:
            reason = f"cannot reach the API: {one_line(str(exc.__cause__ or exc))}"
        except anthropic.AnthropicError as exc:  # e.g. a response that is not a message
            return None, f"bad API response: {one_line(str(exc))}"
        except ValueError as exc:  # json.JSONDecodeError and pydantic errors on a bad body
            return None, f"bad API response: {one_line(str(exc))}"
        pause = _FIRST_BACKOFF * 2**attempt if retry_after is None else retry_after
        if deadline - time.monotonic() - pause < _MIN_ATTEMPT_SECONDS:
            break
        time.sleep(pause)
    return None, reason


def _status_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return one_line(err["message"])
    return one_line(str(exc.message))


def _retry_after(exc: Any) -> float | None:
    try:
        value = float(exc.response.headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _verdict(
    response: Any,
    schema: dict[str, Any],
    min_confidence: float,
    uncertain_suffix: bool,
    model: str,
) -> EvaluationResult:
    """The EvaluationResult a Messages API *response* stands for (error if it is unusable)."""

    usage = {
        "input_tokens": getattr(getattr(response, "usage", None), "input_tokens", None),
        "output_tokens": getattr(getattr(response, "usage", None), "output_tokens", None),
    }
    answer = None
    for block in getattr(response, "content", None) or []:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == TOOL_NAME:
            answer = block.input
            break
    if answer is None:
        stop = getattr(response, "stop_reason", None)
        return _error(
            f"the model did not call the {TOOL_NAME} tool (stop_reason: {stop})",
            model,
            usage=usage,
        )
    return verdict_from_answer(answer, schema, min_confidence, uncertain_suffix, model, usage)


def schema_verdicts(schema: Any) -> list[str] | None:
    """The verdicts a judge *schema* allows (the default schema's when None; None when it
    has no verdict enum, so the verdict is whatever the model answers)."""
    if schema is None:
        return list(DEFAULT_LLM_VERDICTS)
    enum = verdict_enum(schema)
    return None if enum is None else [str(v) for v in enum]


def _config_verdicts(config: EvaluateConfig) -> tuple[str, ...] | None:
    enum = schema_verdicts(config.schema)
    if enum is None:
        return None
    verdicts = tuple(dict.fromkeys(canonical_verdict(v) for v in enum))  # yes is success
    if config.uncertain_suffix:
        verdicts += tuple(v + UNCERTAIN_SUFFIX for v in verdicts)
    return verdicts


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    """The judge's verdict; under `--compat` (a judge with no schema of the loop's own)
    little-loops' judge: judge_theirs.py."""
    if not config.theirs or config.schema is not None:
        return _ask(config, output, llm, client)
    prompt = to_text(config.prompt) if config.prompt is not None else None
    asked = replace(
        config,
        schema=their_schema(DEFAULT_LLM_SCHEMA),
        prompt=their_question(prompt, DEFAULT_LLM_PROMPT),
    )
    return evidence_rule(_ask(asked, output, llm, client))


def _ask(config: EvaluateConfig, output: str, llm: LLMConfig, client: Any) -> EvaluationResult:
    # Here, not at the top: `ll-loop validate` reads SPEC only, not the process machinery.
    from little_loops.fsm.actions.registry import AGENTS
    from little_loops.fsm.evaluators.judge_agent import evaluate_with_agent
    from little_loops.fsm.evaluators.judge_claude import (
        API_BACKEND,
        CLAUDE_BACKEND,
        evaluate_with_claude,
        judge_backend,
    )

    backend = judge_backend(llm, client)
    if backend != API_BACKEND:
        schema = config.schema or DEFAULT_LLM_SCHEMA
        problem = judge_input_error(schema, config.min_confidence, llm.model)
        if problem is not None:
            return problem
        prompt = to_text(config.prompt) if config.prompt is not None else None
        if backend == CLAUDE_BACKEND:
            return evaluate_with_claude(
                output,
                prompt,
                schema,
                config.min_confidence,
                config.uncertain_suffix,
                llm.model,
                llm.timeout,
            )
        spec = AGENTS.get(backend)
        if spec is None:
            return _error(f"no agent {backend} to judge with (llm.backend)", llm.model)
        judge = spec.judge
        own_default = judge is not None and judge.own_model and llm.model == DEFAULT_LLM_MODEL
        return evaluate_with_agent(
            spec,
            output,
            prompt,
            schema,
            config.min_confidence,
            config.uncertain_suffix,
            None if own_default else llm.model,
            llm.timeout,
        )
    return evaluate_llm_structured(
        output,
        prompt=to_text(config.prompt) if config.prompt is not None else None,
        schema=config.schema,
        min_confidence=config.min_confidence,
        uncertain_suffix=config.uncertain_suffix,
        model=llm.model,
        max_tokens=llm.max_tokens,
        timeout=llm.timeout,
        client=client,
    )


def _detail(event: Mapping[str, object]) -> str | None:
    confidence = event.get("confidence")
    if isinstance(confidence, int | float):
        return f"(confidence: {confidence:.2f})"
    return None


SPEC = EvaluatorSpec(
    name="llm_structured",
    summary="a model reads the output and answers a verdict from the schema's enum",
    run=_run,
    reads_exit_code=True,
    keys=("prompt", "schema", "min_confidence", "uncertain_suffix"),
    interpolated=("prompt",),
    verdicts=DEFAULT_LLM_VERDICTS,
    bad=("failure", "blocked"),
    error_causes="a failed LLM call",
    needs_llm=True,
    detail=_detail,
    config_verdicts=_config_verdicts,
)
