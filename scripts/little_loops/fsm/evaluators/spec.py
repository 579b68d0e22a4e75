"""What an evaluator is: the keys it reads, the verdicts it gives, and its run(), declared once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig

# The verdict every evaluator can give: the action crashed or timed out, or evaluation failed.
ERROR_VERDICT = "error"
# The `evaluate:` keys every evaluator reads besides its own.
COMMON_KEYS: tuple[str, ...] = ("type", "source")


@dataclass
class EvaluationResult:
    """A verdict (the routing key) and evaluator-specific details (`${result.details.*}`)."""

    verdict: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "details": self.details}


def error_result(message: str, **details: Any) -> EvaluationResult:
    """The `error` verdict with its one-line reason in `details["error"]`."""
    return EvaluationResult(ERROR_VERDICT, {**details, "error": message})


def shorten(text: str, limit: int = 60) -> str:
    """*text* quoted on one line, cut to *limit* characters, for error messages."""
    one_line = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(one_line) > limit:
        one_line = one_line[: limit - 3] + "..."
    return f"'{one_line}'"


def missing(config: EvaluateConfig, *names: str) -> EvaluationResult | None:
    """An error result when *config* lacks a field its type needs (validation should have
    caught it; a hand-built config must still not crash the loop)."""
    absent = [name for name in names if getattr(config, name) is None]
    if absent:
        return error_result(f"{config.type} evaluator needs {' and '.join(absent)}")
    return None


class RunEvaluator(Protocol):
    """One evaluator's work: a resolved config plus the action's result give a verdict."""

    def __call__(
        self, config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
    ) -> EvaluationResult: ...


def _no_detail(event: Mapping[str, object]) -> str | None:
    return None


@dataclass(frozen=True)
class EvaluatorSpec:
    """Everything ll-loop knows about one evaluator; validation, analysis, the display, the
    `--dry-run` plan, the JSON Schema and the dispatcher all read it from here."""

    name: str
    summary: str  # one line, for the JSON Schema and `ll-loop compile`-style listings
    run: RunEvaluator
    keys: tuple[str, ...] = ()  # the `evaluate:` keys it reads besides COMMON_KEYS
    required: tuple[str, ...] = ()  # of those, the ones a loop file must give
    interpolated: tuple[str, ...] = ()  # of those, the ones that may hold `${...}`
    verdicts: tuple[str, ...] = ("success", "failure")  # besides `error`
    good: tuple[str, ...] = ("success",)  # of those, the ones that mean it went well (✓)
    bad: tuple[str, ...] = ("failure",)  # and the ones that mean it did not (✗), as error does
    error_causes: str = "a failed evaluation"  # what makes it answer `error`, for messages
    numeric_target: bool = False  # its `target` must be a number (or a reference)
    needs_llm: bool = False  # with `llm.enabled: false` it is judged by exit code instead
    # Its verdict is computed from the output, the exit code and its own keys alone (no
    # model, no files, no git): `simulate --compat` runs it on the simulated output.
    pure: bool = False
    # It judges the exit code itself. little-loops makes any other evaluator's verdict on a
    # non-zero exit `error` (`--compat`: evaluators/dispatch.py).
    reads_exit_code: bool = False
    # The parenthesised detail the progress line shows after a verdict, from the event.
    detail: Callable[[Mapping[str, object]], str | None] = _no_detail
    # The verdicts a given config allows, when they depend on it (a judge's schema); None
    # from this function means "whatever the model answers".
    config_verdicts: Callable[[EvaluateConfig], tuple[str, ...] | None] | None = None
    # The values of its keys a loop file leaves out (may hold `${...}`), set before resolving.
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def verdicts_for(self, config: EvaluateConfig) -> tuple[str, ...] | None:
        """The verdicts besides `error` *config* can give (None: not known from the file)."""
        if self.config_verdicts is not None:
            return self.config_verdicts(config)
        return self.verdicts
