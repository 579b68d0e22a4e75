"""The typed loop model: dataclasses built from a validated definition, and back to dicts."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, get_args

DEFAULT_LLM_MODEL = "claude-haiku-4-5"
# `llm.model: "${DEFAULT_LLM_MODEL}"` (as the design doc writes it) means the default model.
DEFAULT_LLM_MODEL_TOKEN = "${DEFAULT_LLM_MODEL}"
DEFAULT_MAX_ITERATIONS = 50

ActionType = Literal["prompt", "slash_command", "shell"]

# The evaluator of a state without `evaluate:` (the evaluators are fsm/evaluators/registry.py).
DEFAULT_EVALUATOR = "exit_code"
DEFAULT_PROMPT_EVALUATOR = "llm_structured"  # for a prompt or slash command
ACTION_TYPES: tuple[str, ...] = get_args(ActionType)
OPERATORS: tuple[str, ...] = ("eq", "ne", "lt", "le", "gt", "ge")
DIRECTIONS: tuple[str, ...] = ("minimize", "maximize")

# Route-table keys with a meaning of their own; every other key is a verdict.
ROUTE_DEFAULT_KEY = "_"
ROUTE_ERROR_KEY = "_error"
# A route target that means "run this state again".
CURRENT_STATE_TOKEN = "$current"


def _non_default_items(obj: Any) -> dict[str, Any]:
    """The dataclass fields of *obj* whose value differs from the field's default."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        if value != default:
            out[f.name] = value
    return out


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluateConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.type}
        out.update(_non_default_items(self))
        return out


@dataclass
class RouteConfig:
    """A verdict → state table (`route:`); `_` is the default, `_error` the error route."""

    routes: dict[str, str] = field(default_factory=dict)
    default: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RouteConfig:
        routes = {
            str(k): v for k, v in data.items() if k not in (ROUTE_DEFAULT_KEY, ROUTE_ERROR_KEY)
        }
        return cls(
            routes=routes,
            default=data.get(ROUTE_DEFAULT_KEY),
            error=data.get(ROUTE_ERROR_KEY),
        )

    def to_dict(self) -> dict[str, str]:
        out = dict(self.routes)
        if self.default is not None:
            out[ROUTE_DEFAULT_KEY] = self.default
        if self.error is not None:
            out[ROUTE_ERROR_KEY] = self.error
        return out


@dataclass
class RetryConfig:
    """When and how often to run a state's action again (`retry:`), as in AWS Step Functions."""

    on: list[str | int] = field(default_factory=lambda: ["error"])  # verdicts, error, exit codes
    max_attempts: int = 3  # attempts in all, the first one included
    interval: float = 1.0  # seconds before the second attempt
    backoff_rate: float = 2.0  # each further wait is this many times the one before
    max_interval: float | None = None  # no wait is longer than this
    jitter: str = "none"  # "full": each wait is a random time from 0 to its length

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetryConfig:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if "on" in kwargs and not isinstance(kwargs["on"], list):
            kwargs["on"] = [kwargs["on"]]
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return _non_default_items(self)


# Seconds to wait for each successive rate limit of Claude with no reset time given.
DEFAULT_RATE_LIMIT_LADDER: tuple[float, ...] = (60, 300, 900, 1800)
DEFAULT_RATE_LIMIT_MAX_WAIT = 6 * 60 * 60.0  # a usage limit resets within five hours


@dataclass
class RateLimitConfig:
    """How to wait out Claude's rate, overload and usage limits (`rate_limit:`)."""

    ladder: list[float] = field(default_factory=lambda: list(DEFAULT_RATE_LIMIT_LADDER))
    max_wait: float = DEFAULT_RATE_LIMIT_MAX_WAIT  # longest wait in a row for one step

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RateLimitConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return _non_default_items(self)


@dataclass
class StateConfig:
    """One state: an optional action, how to evaluate it, and where to go next."""

    action: str | None = None
    action_type: ActionType | None = None
    capture: str | None = None
    timeout: float | None = None
    idle_timeout: float | None = None
    evaluate: EvaluateConfig | None = None
    route: RouteConfig | None = None
    on_success: str | None = None
    on_failure: str | None = None
    on_error: str | None = None
    next: str | None = None
    terminal: bool = False
    on_maintain: str | None = None
    retry: RetryConfig | None = None
    on_retry_exhausted: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StateConfig:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if isinstance(data.get("retry"), dict):
            kwargs["retry"] = RetryConfig.from_dict(data["retry"])
        if isinstance(data.get("evaluate"), dict):
            kwargs["evaluate"] = EvaluateConfig.from_dict(data["evaluate"])
        if isinstance(data.get("route"), dict):
            kwargs["route"] = RouteConfig.from_dict(data["route"])
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        out = _non_default_items(self)
        if self.evaluate is not None:
            out["evaluate"] = self.evaluate.to_dict()
        if self.route is not None:
            out["route"] = self.route.to_dict()
        if self.retry is not None:
            out["retry"] = self.retry.to_dict()
        return out

    def is_prompt(self) -> bool:
        """True when the action goes to Claude Code (prompt or slash command), not bash."""
        if self.action_type is not None:
            return self.action_type in ("prompt", "slash_command")
        return bool(self.action) and str(self.action).startswith("/")

    def effective_evaluate(self) -> EvaluateConfig:
        """The evaluator this state uses: its `evaluate:`, else the design doc's default:
        `llm_structured` for a prompt or slash command, `exit_code` for everything else."""
        if self.evaluate is not None:
            return self.evaluate
        if self.action and self.is_prompt():
            return EvaluateConfig(type=DEFAULT_PROMPT_EVALUATOR)
        return EvaluateConfig(type=DEFAULT_EVALUATOR)


@dataclass
class LLMConfig:
    """Settings of the one LLM touchpoint, the `llm_structured` evaluator (`llm:`)."""

    enabled: bool = True
    model: str = DEFAULT_LLM_MODEL
    max_tokens: int = 256
    timeout: float = 30

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMConfig:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if kwargs.get("model") == DEFAULT_LLM_MODEL_TOKEN:
            kwargs["model"] = DEFAULT_LLM_MODEL
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return _non_default_items(self)


@dataclass
class FSMLoop:
    """A whole loop: named states, where to start, and loop-level limits and settings."""

    name: str
    initial: str
    states: dict[str, StateConfig]
    paradigm: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    scope: list[str] = field(default_factory=list)
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    backoff: float | None = None
    timeout: float | None = None
    idle_timeout: float | None = None
    max_cost_usd: float | None = None
    maintain: bool = False
    llm: LLMConfig = field(default_factory=LLMConfig)
    retry: RetryConfig | None = None  # the default of states without their own
    rate_limit: RateLimitConfig = field(default_factory=RateLimitConfig)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FSMLoop:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["states"] = {
            str(name): StateConfig.from_dict(state if isinstance(state, dict) else {})
            for name, state in (data.get("states") or {}).items()
        }
        if isinstance(data.get("llm"), dict):
            kwargs["llm"] = LLMConfig.from_dict(data["llm"])
        if isinstance(data.get("retry"), dict):
            kwargs["retry"] = RetryConfig.from_dict(data["retry"])
        if isinstance(data.get("rate_limit"), dict):
            kwargs["rate_limit"] = RateLimitConfig.from_dict(data["rate_limit"])
        if kwargs.get("context") is None:
            kwargs.pop("context", None)
        if kwargs.get("scope") is None:
            kwargs.pop("scope", None)
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """The loop as plain data, keys in reading order: name, initial, context, states,
        then settings; fields left at their defaults are dropped."""
        rest = _non_default_items(self)
        out: dict[str, Any] = {"name": self.name}
        if self.paradigm is not None:
            out["paradigm"] = self.paradigm
        out["initial"] = self.initial
        if self.context:
            out["context"] = self.context
        out["states"] = {name: state.to_dict() for name, state in self.states.items()}
        for key in (
            "scope",
            "max_iterations",
            "backoff",
            "timeout",
            "idle_timeout",
            "max_cost_usd",
            "maintain",
        ):
            if key in rest:
                out[key] = rest[key]
        llm = self.llm.to_dict()
        if llm:
            out["llm"] = llm
        if self.retry is not None:
            out["retry"] = self.retry.to_dict()
        rate_limit = self.rate_limit.to_dict()
        if rate_limit:
            out["rate_limit"] = rate_limit
        return out

    def retry_of(self, state: StateConfig) -> RetryConfig | None:
        """The retry policy of *state*: its own `retry:`, else the loop's (None: no retries)."""
        return state.retry if state.retry is not None else self.retry

    def terminal_states(self) -> list[str]:
        return [name for name, state in self.states.items() if state.terminal]

    def effective_scope(self) -> list[str]:
        """The paths this loop claims; no `scope:` means the whole project."""
        return list(self.scope) if self.scope else ["."]
