"""The judge's shared rules: its default question and schema, and how an answer becomes a verdict.

Every way of asking (the Messages API in llm_structured.py, Claude Code in judge_claude.py,
another agent's CLI in judge_agent.py) puts the same text to the model and reads its answer
with `verdict_from_answer`; the CLIs are run by `run_judge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from little_loops.fsm.evaluators.spec import EvaluationResult, error_result
from little_loops.fsm.facts.verdict_words import canonical_verdict
from little_loops.fsm.values.value_checks import is_finite

if TYPE_CHECKING:
    from little_loops.fsm.actions.request import ActionResult

DEFAULT_LLM_PROMPT = "Evaluate whether this action succeeded based on its output."

# With `uncertain_suffix: true`, an unconfident verdict gets this suffix (`success_uncertain`).
UNCERTAIN_SUFFIX = "_uncertain"

MAX_OUTPUT_CHARS = 4000


def judge_text(output: str, prompt: str | None = None) -> str:
    """What the judge is asked: the question, then the end of *output* (MAX_OUTPUT_CHARS)."""
    truncated = output[-MAX_OUTPUT_CHARS:]
    note = ""
    if len(output) > MAX_OUTPUT_CHARS:
        note = f"(Output truncated: the last {MAX_OUTPUT_CHARS} of {len(output)} characters.)\n"
    return f"{prompt or DEFAULT_LLM_PROMPT}\n\n{note}<action_output>\n{truncated}\n</action_output>"


def judge_error(message: str, model: str, **details: Any) -> EvaluationResult:
    """The error verdict of a judge call, with its one-line reason and model."""
    return error_result(message, **details, model=model)


def run_judge(
    argv: Sequence[str], timeout: float, who: str, missing: str, model: str
) -> ActionResult | EvaluationResult:
    """Run a judge's CLI (*argv*) to its end within *timeout* seconds: what it printed, or
    the `error` verdict (judged by *model*) when it cannot start (*missing*: the message for
    a program not on PATH) or *who* timed out. For every judge that asks a CLI."""
    import time

    from little_loops.fsm.actions.supervisor import ProcessSupervisor

    supervisor = ProcessSupervisor()
    try:
        result = supervisor.spawn(argv, None, None, (timeout, None), -1, None, time.monotonic())
    except FileNotFoundError:
        return judge_error(missing, model)
    except OSError as exc:
        return judge_error(f"{argv[0]}: cannot run: {exc.strerror}", model)
    except ValueError:
        return judge_error("the output to judge contains a NUL byte", model)
    finally:
        supervisor.close()
    if result.timed_out:
        return judge_error(f"{who} timed out after {timeout:g}s", model)
    return result


def judge_input_error(schema: Any, min_confidence: Any, model: str) -> EvaluationResult | None:
    """The error verdict for a schema or min_confidence no judge can use, else None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return judge_error("schema must be a mapping with type: object", model)
    if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float):
        return judge_error(f"min_confidence must be a number, not {min_confidence!r}", model)
    return None


def one_line(text: str, limit: int = 200) -> str:
    """*text* on one line of at most *limit* characters (for an error reason)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def verdict_from_answer(
    answer: Any,
    schema: dict[str, Any],
    min_confidence: float,
    uncertain_suffix: bool,
    model: str,
    usage: dict[str, Any],
) -> EvaluationResult:
    """The verdict the model's *answer* (the object it gave for the schema) stands for:
    an error when it is not an object, has no verdict or one outside the enum, or a
    confidence that is not a number; `<verdict>_uncertain` below *min_confidence* with
    *uncertain_suffix*."""
    import json  # here, not at the top: `ll-loop validate` reads the evaluators' specs only

    if not isinstance(answer, dict):
        return judge_error("the model's evaluation is not an object", model, usage=usage)
    verdict = answer.get("verdict")
    if not isinstance(verdict, str) or not verdict:
        return judge_error("the model's evaluation has no verdict", model, raw=answer, usage=usage)
    allowed = verdict_enum(schema)
    if allowed and verdict not in allowed:
        return judge_error(
            f"the model answered verdict '{one_line(verdict, 40)}', "
            f"which is not one of: {', '.join(map(str, allowed))}",
            model,
            raw=answer,
            usage=usage,
        )
    confidence = answer.get("confidence", 1.0)
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not is_finite(confidence)  # math.isfinite fails on a 400-digit int
    ):
        return judge_error(
            f"the model's confidence is not a number: {one_line(json.dumps(confidence), 40)}",
            model,
            raw=answer,
            usage=usage,
        )
    confidence = min(max(float(confidence), 0.0), 1.0)
    confident = confidence >= min_confidence
    verdict = canonical_verdict(verdict)  # a judge's `yes` is success (facts/verdict_words.py)
    if uncertain_suffix and not confident:
        verdict += UNCERTAIN_SUFFIX
    reason = answer.get("reason", "")
    return EvaluationResult(
        verdict,
        {
            "confidence": confidence,
            "confident": confident,
            "reason": reason if isinstance(reason, str) else json.dumps(reason),
            "raw": answer,
            "model": model,
            "usage": usage,
        },
    )


def verdict_enum(schema: Any) -> list[Any] | None:
    """The verdict enum of a judge schema, as written (None when it has none)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    spec = props.get("verdict") if isinstance(props, dict) else None
    enum = spec.get("enum") if isinstance(spec, dict) else None
    return list(enum) if isinstance(enum, list) else None
