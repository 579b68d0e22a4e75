"""The evaluators by name: the one list that validation, analysis, display and dispatch read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.evaluators.spec import COMMON_KEYS, ERROR_VERDICT, EvaluatorSpec

# In the order the docs and messages list them; each is the name of its module in this
# folder and of that module's SPEC (a test holds them equal). To add an evaluator: write its
# module (its evaluate function and SPEC) in this folder and add its name here.
EVALUATOR_TYPES: tuple[str, ...] = (
    "exit_code",
    "output_numeric",
    "output_json",
    "output_contains",
    "convergence",
    "llm_structured",
    "mcp_result",
    "classify",
    "diff_stall",
    "score_stall",
    "open_question_stall",
    "harbor_scorer",
)


class _Specs(Mapping[str, EvaluatorSpec]):
    """The evaluators' SPECs by name: the names are known up front, and an evaluator's module
    is imported when its spec is first looked up (`in` and iterating the names import none),
    so validating a loop imports only the evaluators it names."""

    def __init__(self) -> None:
        self._loaded: dict[str, EvaluatorSpec] = {}

    def __getitem__(self, name: str) -> EvaluatorSpec:
        if name not in EVALUATOR_TYPES:  # any object, a list in a hostile file too
            raise KeyError(name)
        spec = self._loaded.get(name)
        if spec is None:
            spec = self._loaded[name] = import_module(f"little_loops.fsm.evaluators.{name}").SPEC
        return spec

    def __contains__(self, name: object) -> bool:
        return name in EVALUATOR_TYPES

    def __iter__(self) -> Iterator[str]:
        return iter(EVALUATOR_TYPES)

    def __len__(self) -> int:
        return len(EVALUATOR_TYPES)


SPECS: Mapping[str, EvaluatorSpec] = _Specs()


@cache
def _every_key() -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(key for key in COMMON_KEYS + sum((s.keys for s in SPECS.values()), ()))
    )


@cache
def _verdicts(good: bool) -> frozenset[str]:
    if good:
        return frozenset(v for s in SPECS.values() for v in s.good)
    return frozenset({ERROR_VERDICT, *(v for s in SPECS.values() for v in s.bad)})


if TYPE_CHECKING:
    # Every `evaluate:` key some evaluator reads, in a stable order.
    EVALUATE_KEY_NAMES: tuple[str, ...]
    # The verdicts that mean a step went well, and those that mean it did not (`error` too),
    # from each evaluator's spec: the progress display and `simulate` mark them ✓ and ✗.
    GOOD_VERDICTS: frozenset[str]
    BAD_VERDICTS: frozenset[str]


def __getattr__(name: str) -> object:
    """`EVALUATE_KEY_NAMES`, `GOOD_VERDICTS` and `BAD_VERDICTS`: read from every evaluator's
    spec, so every evaluator's module is imported on first use of one of them."""
    if name == "EVALUATE_KEY_NAMES":
        return _every_key()
    if name in ("GOOD_VERDICTS", "BAD_VERDICTS"):
        return _verdicts(name == "GOOD_VERDICTS")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def verdict_went_well(verdict: str) -> bool | None:
    """True for a good verdict, False for a bad one, None for any other (a judge's own
    words); a judge's `_uncertain` variant counts as its plain verdict."""
    base = verdict.removesuffix(UNCERTAIN_SUFFIX)
    if base in _verdicts(True):
        return True
    return False if base in _verdicts(False) else None


def interpolated_fields(kind: str) -> tuple[str, ...]:
    """The `evaluate:` keys of evaluator *kind* resolved as `${...}` before it runs."""
    spec = SPECS.get(kind)
    return ("source", *spec.interpolated) if spec is not None else ("source",)


def needs_llm(kind: str) -> bool:
    """True when evaluator *kind* asks a model (so costs money and obeys `llm.enabled`)."""
    spec = SPECS.get(kind)
    return spec is not None and spec.needs_llm


def is_pure(kind: str) -> bool:
    """True when evaluator *kind* reads the output, exit code and its keys alone (no model,
    file or git), so a rehearsal (`simulate --compat`) can run it."""
    spec = SPECS.get(kind)
    return spec is not None and spec.pure
