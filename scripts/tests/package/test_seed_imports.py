"""Every import the seed documents write (the design and plans ll-loop grew from) works,
word for word, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

# The import lines of the seeds, as they are written there.
SEED_IMPORTS = [
    "from little_loops.fsm.schema import FSMLoop, StateConfig",
    "from little_loops.fsm.schema import EvaluateConfig",
    "from little_loops.fsm.evaluators import evaluate, EvaluationResult",
    "from little_loops.fsm.evaluators import EvaluationResult",
    "from little_loops.fsm.evaluators import evaluate_llm_structured, LLMEvaluatorConfig",
    "from little_loops.fsm.evaluators import evaluate_exit_code",
    "from little_loops.fsm.evaluators import evaluate_output_json, evaluate_convergence",
    "from little_loops.fsm.evaluators import (EvaluationResult, evaluate, evaluate_exit_code, "
    "evaluate_output_numeric, evaluate_output_json, evaluate_output_contains, "
    "evaluate_convergence)",
    "from little_loops.fsm.interpolation import InterpolationContext, interpolate",
    "from little_loops.fsm.interpolation import InterpolationContext, InterpolationError, "
    "interpolate",
    "from little_loops.fsm import evaluate, EvaluationResult",
    "from little_loops.fsm.validation import ValidationError",
    "from little_loops.fsm.compilers import compile_convergence",
    "from little_loops.fsm.executor import DefaultActionRunner",
]


@pytest.mark.parametrize("line", SEED_IMPORTS)
def test_the_seed_import_works(line: str) -> None:
    done = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_seeds_judge_settings_are_the_llm_settings() -> None:
    from little_loops.fsm.evaluators import LLMEvaluatorConfig
    from little_loops.fsm.schema import LLMConfig

    config = LLMEvaluatorConfig(model="claude-haiku-4-5", max_tokens=256, timeout=30)
    assert isinstance(config, LLMConfig)
    assert config.to_dict() == {}


def test_the_seed_errors_are_the_ones_raised() -> None:
    from little_loops.fsm.facts import errors
    from little_loops.fsm.interpolation import InterpolationError
    from little_loops.fsm.validation import ValidationError

    assert InterpolationError is errors.InterpolationError
    assert ValidationError is errors.ValidationError
