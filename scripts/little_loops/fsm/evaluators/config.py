"""How a state's result is judged, as written in the loop file: `evaluate:` and `llm:`.

The evaluators own these settings; definition/model/typed.py reads them into each state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from little_loops.fsm.values.fields import non_default_items

DEFAULT_LLM_MODEL = "claude-haiku-4-5"
# `llm.model: "${DEFAULT_LLM_MODEL}"` (as the design doc writes it) means the default model.
DEFAULT_LLM_MODEL_TOKEN = "${DEFAULT_LLM_MODEL}"
# The evaluator of a state without `evaluate:` and without an action (the evaluators are
# fsm/evaluators/registry.py; a state's action kind names its own: `spec.default_evaluator`).
DEFAULT_EVALUATOR = "exit_code"
# Who the llm_structured judge asks: auto (the API with ANTHROPIC_API_KEY, else the state's
# agent when it can judge, else Claude Code); `llm.backend` may also name any agent whose
# kind can judge (its `spec.judge`; definition/checks/agent_checks.py says which).
JUDGE_BACKENDS: tuple[str, ...] = ("auto", "api", "claude")
OPERATORS: tuple[str, ...] = ("eq", "ne", "lt", "le", "gt", "ge")
DIRECTIONS: tuple[str, ...] = ("minimize", "maximize")


@dataclass
class EvaluateConfig:
    """How to turn an action's result into a verdict (`evaluate:` of a state)."""

    type: str  # a name in fsm/evaluators/registry.py
    operator: str | None = None
    target: Any = None
    tolerance: Any = None
    pattern: str | None = None
    negate: bool = False
    path: str | None = None
    previous: str | None = None
    direction: str = "minimize"
    prompt: str | None = None
    schema: dict[str, Any] | None = None
    min_confidence: float = 0.5
    uncertain_suffix: bool = False
    source: str | None = None
    key: str | None = None  # output_numeric: read the number of a `key=NUMBER` field
    error_patterns: list[str] | None = None  # output_contains: texts that mean `error`
    line: str | int | None = None  # classify: which non-empty line (first, last, index)
    scope: list[str] | None = None  # diff_stall: the paths whose `git diff` counts
    max_stall: int = 1  # the *_stall evaluators: rounds without progress before `failure`
    history_file: str | None = None  # score_stall, open_question_stall: one number a line
    epsilon: float | None = None  # the least change that counts as progress (per evaluator)
    # Not a loop key: judge as little-loops judges (`--compat`), set by the engine per call.
    theirs: bool = field(default=False, compare=False, metadata={"derived": True})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluateConfig:
        known = {f.name for f in fields(cls) if not f.metadata.get("derived")}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.type}
        out.update(non_default_items(self))
        out.pop("theirs", None)
        return out


@dataclass
class LLMConfig:
    """Settings of the one LLM touchpoint, the `llm_structured` evaluator (`llm:`)."""

    enabled: bool = True
    model: str = DEFAULT_LLM_MODEL
    max_tokens: int = 256
    timeout: float = 30
    backend: str = "auto"  # one of JUDGE_BACKENDS, or an agent that can judge
    # Not a loop key: the agent of the state being judged, set by the engine (`for_agent`),
    # for `backend: auto`.
    agent: str | None = field(default=None, metadata={"derived": True})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMConfig:
        known = {f.name for f in fields(cls)} - {"agent"}
        kwargs = {k: v for k, v in data.items() if k in known}
        if kwargs.get("model") == DEFAULT_LLM_MODEL_TOKEN:
            kwargs["model"] = DEFAULT_LLM_MODEL
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        out = non_default_items(self)
        out.pop("agent", None)
        return out

    def for_agent(self, agent: str | None) -> LLMConfig:
        """These settings for judging a state whose agent is *agent* (see `agent`)."""
        return self if agent == self.agent else replace(self, agent=agent)


# The seed-era name of the judge's settings (the seeds build one from `llm.model`,
# `llm.max_tokens` and `llm.timeout`): the same class.
LLMEvaluatorConfig = LLMConfig
