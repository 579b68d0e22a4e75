"""The settings blocks as dataclasses: routes, rate limits, archive; the others by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Self

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.definition.model import pr_keys
from little_loops.fsm.values.fields import non_default_items

DEFAULT_KEEP_RUNS = 50  # finished runs of a loop the archive keeps (`archive.keep`)
DEFAULT_NOTIFY_TIMEOUT = 10.0  # seconds a notification's command or one webhook try may take
DEFAULT_NOTIFY_RETRIES = 3  # webhook tries after the first (1 s, 2 s, 4 s ... apart)
# Route-table keys with a meaning of their own; every other key is a verdict.
ROUTE_DEFAULT_KEY = "_"
ROUTE_ERROR_KEY = "_error"


class Block:
    """A settings mapping read into a dataclass: its known keys in, its non-default fields out."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return non_default_items(self)


# Seconds to wait for each successive rate limit of Claude with no reset time given.
DEFAULT_RATE_LIMIT_LADDER: tuple[float, ...] = (60, 300, 900, 1800)
DEFAULT_RATE_LIMIT_MAX_WAIT = 6 * 60 * 60.0  # a usage limit resets within five hours


@dataclass
class RateLimitConfig(Block):
    """How to wait out Claude's rate, overload and usage limits (`rate_limit:`)."""

    ladder: list[float] = field(default_factory=lambda: list(DEFAULT_RATE_LIMIT_LADDER))
    max_wait: float = DEFAULT_RATE_LIMIT_MAX_WAIT  # longest wait in a row for one step


@dataclass
class ArchiveConfig(Block):
    """How many finished runs of the loop the archive keeps, and for how long (`archive:`)."""

    keep: int = DEFAULT_KEEP_RUNS
    max_age_days: float | None = None


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


# A state's settings blocks by key, each read from and written back to its own mapping (a
# key's row may name one more: key_row.Key.block): the dataclass's "MODULE:CLASS" name,
# MODULE under little_loops.fsm (block_class loads it).
STATE_BLOCKS: dict[str, str] = {
    "evaluate": "evaluators.config:EvaluateConfig",
    "route": "definition.model.blocks:RouteConfig",
    "stall": "definition.model.policy_blocks:StallConfig",
    "retry": "definition.model.policy_blocks:RetryConfig",
    "learning": "definition.model.learning:LearningConfig",
    "parallel": "definition.model.fanout:ParallelConfig",
    "map": "definition.model.fanout:MapConfig",
    pr_keys.PR_KEY: "definition.model.pr_block:PullRequestConfig",
}
# The loop's blocks that are None when the file leaves them out, by key, named so.
LOOP_BLOCKS: dict[str, str] = {
    "stall": STATE_BLOCKS["stall"],
    "notify": "definition.model.policy_blocks:NotifyConfig",
    "retry": STATE_BLOCKS["retry"],
    "circuit": "definition.model.circuit:CircuitConfig",
}


@cache
def block_class(name: str) -> Any:
    """The block dataclass *name* names ("MODULE:CLASS", MODULE under little_loops.fsm), its
    module imported the first time (a loop without the block never loads it)."""
    module, _, cls = name.partition(":")
    return getattr(import_module(f"little_loops.fsm.{module}"), cls)


def yaml_key(field_name: str) -> str:
    """The loop-file key of a model field: `with_` is `with` (a Python keyword)."""
    return field_name.removesuffix("_")


def field_name(key: str) -> str:
    """The model field of a loop-file key (see yaml_key)."""
    return "with_" if key == "with" else key


# The metadata of the field that holds the action kinds' options blocks (`options`): it
# stands for one loop-file key per kind with options, its `options_key`, where it is.
BLOCKS_FIELD = {"blocks": True}


def model_keys(cls: type) -> list[str]:
    """The loop-file keys of a model dataclass: its fields, less the derived ones, with the
    options blocks' field as the key of each block."""
    out: list[str] = []
    for f in fields(cls):
        if f.metadata.get("blocks"):
            out += BY_OPTIONS_KEY
        elif f.metadata.get("keys"):
            out += f.metadata["keys"]  # one field for several keys (the lint flags)
        elif f.metadata.get("rows"):
            out += f.metadata["rows"]()  # the keys whose rows name no field (`more`)
        elif not f.metadata.get("derived"):
            out.append(yaml_key(f.name))
    return out


_PLAIN_KEYS: dict[type, frozenset[str]] = {}  # worked out once per class


def plain_keys(cls: type) -> frozenset[str]:
    """The loop-file keys of *cls* that are one field each (not an options block); worked
    out once per class (every state of every loop read asks)."""
    found = _PLAIN_KEYS.get(cls)
    if found is None:
        found = _PLAIN_KEYS[cls] = frozenset(
            yaml_key(f.name)
            for f in fields(cls)
            # a derived field (the loaded children, the source file, `theirs`) is no key
            if not any(f.metadata.get(kind) for kind in ("blocks", "keys", "rows", "derived"))
        )
    return found


def option_blocks(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The options blocks of a loop or state in *data*, by key (a null one is left out)."""
    if _OPTIONS_KEYS.isdisjoint(data):
        return {}  # (most have none: passed over at once)
    return {key: data[key] for key in BY_OPTIONS_KEY if data.get(key) is not None}


_OPTIONS_KEYS = frozenset(BY_OPTIONS_KEY)


# The block classes this module and typed.py held or named before they moved to modules of
# their own (the engine's imports, a library caller's `from ...blocks import StallConfig` or
# `from ...typed import MapConfig`): each module's `__getattr__` loads them when asked.
MOVED_FROM_BLOCKS = {
    name.rpartition(":")[2]: name
    for name in (*STATE_BLOCKS.values(), *LOOP_BLOCKS.values())
    if name.rpartition(":")[2] != "CircuitConfig"
}
MOVED_FROM_TYPED = {
    name.rpartition(":")[2]: name
    for name in (
        *STATE_BLOCKS.values(),
        *LOOP_BLOCKS.values(),
        "definition.model.state_guards:PruningProfileConfig",
        "definition.model.state_guards:ThrottleConfig",
    )
    if not name.startswith(("evaluators.", "definition.model.blocks:"))
}


def loads_moved(module: str, moved: dict[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of *module*: each name of *moved* is its block class, loaded when
    asked; any other name is an AttributeError, as for any module."""

    def moved_class(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return block_class(moved[name])

    return moved_class


if not TYPE_CHECKING:  # (mypy: each name from its own module)
    __getattr__ = loads_moved(__name__, MOVED_FROM_BLOCKS)
