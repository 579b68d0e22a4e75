from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from little_loops.fsm.definition.model import EVALUATOR_TYPES, EvaluateConfig, LLMConfig
from little_loops.fsm.engine.interpolation import InterpolationContext
from little_loops.fsm.evaluators.builtin import (
    EVALUATORS,
    LLM_SKIPPED_NOTE,
    EvaluationResult,
    default_evaluation,
    evaluate,
    evaluate_convergence,
    evaluate_exit_code,
    evaluate_output_contains,
    evaluate_output_json,
    evaluate_output_numeric,
)
from little_loops.fsm.evaluators.jsonpath import JsonPathError, extract_json_path


def ctx(**kwargs: Any) -> InterpolationContext:
    kwargs.setdefault("env", {})
    return InterpolationContext(**kwargs)


# --- exit_code --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "verdict"),
    [(0, "success"), (1, "failure"), (2, "error"), (127, "error"), (-9, "error")],
)
def test_exit_code(code: int, verdict: str) -> None:
    result = evaluate_exit_code(code)
    assert result.verdict == verdict
    assert result.details["exit_code"] == code


def test_exit_code_error_says_which_code() -> None:
    assert evaluate_exit_code(2).details["error"] == "exit code 2"


# --- output_numeric ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "output", "verdict"),
    [
        ("eq", "5", "success"),
        ("eq", "6", "failure"),
        ("ne", "6", "success"),
        ("ne", "5", "failure"),
        ("lt", "4", "success"),
        ("lt", "5", "failure"),
        ("le", "5", "success"),
        ("le", "6", "failure"),
        ("gt", "6", "success"),
        ("gt", "5", "failure"),
        ("ge", "5", "success"),
        ("ge", "4.5", "failure"),
    ],
)
def test_output_numeric_operators(operator: str, output: str, verdict: str) -> None:
    result = evaluate_output_numeric(output, operator, 5)
    assert result.verdict == verdict
    assert result.details == {"value": float(output), "target": 5, "operator": operator}


def test_output_numeric_reads_last_line_and_keeps_ints() -> None:
    # `grep -c x || echo 0` prints 0 twice; a log line before the number is fine too.
    result = evaluate_output_numeric("checking...\n  0\n0\n\n", "eq", "0")
    assert result.verdict == "success"
    assert result.details["value"] == 0
    assert isinstance(result.details["value"], int)
    assert evaluate_output_numeric(" -2.5e1 \n", "lt", -20).verdict == "success"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("3 errors", "output is not a number: '3 errors'"),
        ("", "output is empty, expected a number"),
        ("  \n \n", "output is empty, expected a number"),
        ("nan", "output is not a number: 'nan'"),
        ("x" * 100, f"output is not a number: '{'x' * 57}...'"),
    ],
)
def test_output_numeric_parse_error(output: str, message: str) -> None:
    result = evaluate_output_numeric(output, "eq", 0)
    assert result.verdict == "error"
    assert result.details == {"value": None, "target": 0, "operator": "eq", "error": message}


def test_output_numeric_bad_target_and_operator() -> None:
    assert evaluate_output_numeric("1", "eq", "many").details["error"] == (
        "target is not a number: 'many'"
    )
    assert evaluate_output_numeric("1", "eq", "7").verdict == "failure"
    assert evaluate_output_numeric("1", "equals", 1).details["error"] == (
        "unknown operator 'equals' (expected one of eq, ne, lt, le, gt, ge)"
    )


# --- output_json ------------------------------------------------------------------------

REPORT = '{"summary": {"failed": 0, "passed": 12, "name": "unit"}, "items": [3, {"id": "a"}]}'


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (".summary.failed", 0),
        (".summary.name", "unit"),
        (".items[0]", 3),
        (".items[-1].id", "a"),
        (".items.1.id", "a"),
        ('.["summary"]["passed"]', 12),
        ("summary.passed", 12),
        (".", {"summary": {"failed": 0, "passed": 12, "name": "unit"}, "items": [3, {"id": "a"}]}),
    ],
)
def test_extract_json_path(path: str, value: Any) -> None:
    import json

    assert extract_json_path(json.loads(REPORT), path) == value


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (".summary.skipped", "path .summary.skipped: key 'skipped' not found in .summary"),
        (".items[5]", "path .items[5]: index 5 out of range in .items (2 items)"),
        (".summary[0]", "path .summary[0]: .summary is an object, not an array"),
        (".items.x", "path .items.x: .items is an array, not an object"),
        (".summary.failed.x", "path .summary.failed.x: .summary.failed is a number, not an object"),
        (".summary..failed", "path .summary..failed: malformed at '..failed'"),
        ("", "path is empty"),
    ],
)
def test_extract_json_path_errors(path: str, message: str) -> None:
    import json

    with pytest.raises(JsonPathError) as info:
        extract_json_path(json.loads(REPORT), path)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("path", "operator", "target", "verdict"),
    [
        (".summary.failed", "eq", 0, "success"),
        (".summary.failed", "eq", 0.0, "success"),
        (".summary.failed", "ne", 0, "failure"),
        (".summary.failed", "eq", "0", "failure"),
        (".summary.failed", "eq", False, "failure"),
        (".summary.name", "eq", "unit", "success"),
        (".summary.name", "ne", "e2e", "success"),
        (".items[1]", "eq", {"id": "a"}, "success"),
        (".summary.passed", "ge", 10, "success"),
        (".summary.passed", "lt", "10", "failure"),
        (".summary.passed", "gt", 12, "failure"),
    ],
)
def test_output_json_compare(path: str, operator: str, target: Any, verdict: str) -> None:
    result = evaluate_output_json(REPORT, path, operator, target)
    assert result.verdict == verdict
    assert result.details["path"] == path
    assert result.details["operator"] == operator


def test_output_json_details() -> None:
    assert evaluate_output_json(REPORT, ".summary.passed", "ge", "10").details == {
        "value": 12,
        "path": ".summary.passed",
        "target": 10,
        "operator": "ge",
    }


@pytest.mark.parametrize(
    ("output", "path", "operator", "message"),
    [
        ("not json", ".a", "eq", "output is not valid JSON: Expecting value (line 1, column 1)"),
        ('{"a": 1', ".a", "eq", "output is not valid JSON: Expecting ',' delimiter "
         "(line 1, column 8)"),
        ("", ".a", "eq", "output is empty, expected JSON"),
        ('{"a": 1}', ".b", "eq", "path .b: key 'b' not found in ."),
        ('{"a": "x"}', ".a", "lt", "operator lt needs a number, but .a is a string"),
        ('{"a": 1}', ".a", "is", "unknown operator 'is' (expected one of eq, ne, lt, le, gt, ge)"),
        ("[" * 100_000, ".a", "eq", "output is JSON nested too deeply to read"),
        ('{"a": ' + "9" * 5000 + "}", ".a", "eq", "output is JSON with a number too long to read"),
    ],
)  # fmt: skip
def test_output_json_errors(output: str, path: str, operator: str, message: str) -> None:
    result = evaluate_output_json(output, path, operator, 1)
    assert result.verdict == "error"
    assert result.details["error"] == message


# --- output_contains --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "pattern", "negate", "verdict", "mode"),
    [
        ("===== All tests passed =====", "All tests passed", False, "success", "substring"),
        ("3 failed", "All tests passed", False, "failure", None),
        ("===== All tests passed =====", "All tests passed", True, "failure", "substring"),
        ("3 failed", "All tests passed", True, "success", None),
        ("ran 12 tests\nOK\n", r"^OK$", False, "success", "regex"),
        ("ran 12 tests\nNOT OK\n", r"^OK$", False, "failure", None),
        ("error: 42 found", r"error: \d+", False, "success", "regex"),
        # valid regex whose meaning differs from the text: the literal occurrence counts
        ("passed (3)", "passed (3)", False, "success", "substring"),
        # invalid regex: substring only
        ("value [unclosed", "[unclosed", False, "success", "substring"),
        ("nothing here", "[unclosed", False, "failure", None),
        ("nothing here", "[unclosed", True, "success", None),
    ],
)
def test_output_contains(output: str, pattern: str, negate: bool, verdict: str, mode: Any) -> None:
    result = evaluate_output_contains(output, pattern, negate)
    assert result.verdict == verdict
    assert result.details == {
        "matched": mode is not None,
        "pattern": pattern,
        "negate": negate,
        "mode": mode,
    }


def test_output_contains_empty_pattern_is_error() -> None:
    assert evaluate_output_contains("x", "").details["error"] == "pattern is empty"


# --- convergence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "previous", "target", "tolerance", "direction", "verdict", "delta"),
    [
        ("5", "8", 0, 0, "minimize", "progress", -3),
        ("8", "8", 0, 0, "minimize", "stall", 0),
        ("9", "8", 0, 0, "minimize", "stall", 1),
        ("0", "3", 0, 0, "minimize", "target", -3),
        ("2", "3", 0, 2, "minimize", "target", -1),
        ("3", "4", 0, 2, "minimize", "progress", -1),
        ("-1", "3", 0, 0, "minimize", "target", -4),  # past the target counts
        ("85", "80", 90, 0, "maximize", "progress", 5),
        ("80", "85", 90, 0, "maximize", "stall", -5),
        ("85", "85", 90, 0, "maximize", "stall", 0),
        ("89.5", "80", 90, 0.5, "maximize", "target", 9.5),
        ("95", "80", 90, 0, "maximize", "target", 15),
        ("7", "9", None, 0, "minimize", "progress", -2),  # no target: only progress / stall
    ],
)
def test_convergence(
    output: str,
    previous: str,
    target: Any,
    tolerance: Any,
    direction: str,
    verdict: str,
    delta: float,
) -> None:
    result = evaluate_convergence(output, target, previous, tolerance, direction)
    assert result.verdict == verdict
    assert result.details["delta"] == delta
    assert result.details["direction"] == direction
    assert result.details["current"] == float(output)
    assert result.details["previous"] == float(previous)


@pytest.mark.parametrize(
    ("output", "target", "tolerance", "verdict"),
    [
        ("4", 0, 0, "progress"),
        ("0", 0, 0, "target"),
        ("1", 0, 1, "target"),
        ("4", 0, 3, "progress"),
    ],
)
def test_convergence_first_iteration(
    output: str, target: int, tolerance: int, verdict: str
) -> None:
    for previous in ("", None, "  \n"):
        result = evaluate_convergence(output, target, previous, tolerance)
        assert result.verdict == verdict
        assert result.details["previous"] is None
        assert result.details["delta"] is None


def test_convergence_details() -> None:
    assert evaluate_convergence("3\n", "0", "5", "1").details == {
        "current": 3,
        "previous": 5,
        "target": 0,
        "tolerance": 1,
        "delta": -2,
        "direction": "minimize",
    }


@pytest.mark.parametrize(
    ("output", "previous", "tolerance", "direction", "message"),
    [
        ("lots", "3", 0, "minimize", "output is not a number: 'lots'"),
        ("2", "Fixed the bug.", 0, "minimize", "previous value is not a number: 'Fixed the bug.'"),
        ("2", "3", -1, "minimize", "tolerance must not be negative: -1"),
        ("2", "3", "wide", "minimize", "tolerance is not a number: 'wide'"),
        ("2", "3", 0, "down", "unknown direction 'down' (expected one of minimize, maximize)"),
    ],
)
def test_convergence_errors(
    output: str, previous: str, tolerance: Any, direction: str, message: str
) -> None:
    result = evaluate_convergence(output, 0, previous, tolerance, direction)
    assert result.verdict == "error"
    assert result.details["error"] == message


# --- registry and dispatcher ------------------------------------------------------------


def test_registry_covers_exactly_the_schema_types() -> None:
    assert tuple(EVALUATORS) == EVALUATOR_TYPES


def test_evaluation_result_to_dict() -> None:
    assert EvaluationResult("success", {"a": 1}).to_dict() == {
        "verdict": "success",
        "details": {"a": 1},
    }


def test_dispatch_each_tier1_type() -> None:
    c = ctx()
    assert evaluate(EvaluateConfig(type="exit_code"), "", 1, c).verdict == "failure"
    numeric = EvaluateConfig(type="output_numeric", operator="le", target=5)
    assert evaluate(numeric, "4\n", 0, c).verdict == "success"
    json_cfg = EvaluateConfig(type="output_json", path=".ok", operator="eq", target=True)
    assert evaluate(json_cfg, '{"ok": true}', 0, c).verdict == "success"
    contains = EvaluateConfig(type="output_contains", pattern="PASS", negate=True)
    assert evaluate(contains, "PASS", 0, c).verdict == "failure"
    conv = EvaluateConfig(type="convergence", target=0, previous="9")
    assert evaluate(conv, "4", 0, c).verdict == "progress"


def test_dispatch_interpolates_fields() -> None:
    c = ctx(
        context={"target": 3, "tol": "1", "word": "ready", "key": "count"},
        prev={"output": "10\n", "exit_code": 0, "state": "apply"},
    )
    conv = EvaluateConfig(
        type="convergence",
        target="${context.target}",
        tolerance="${context.tol}",
        previous="${prev.output}",
    )
    result = evaluate(conv, "7", 0, c)
    assert result.verdict == "progress"
    assert (result.details["target"], result.details["tolerance"]) == (3, 1)
    assert result.details["previous"] == 10
    contains = EvaluateConfig(type="output_contains", pattern="status: ${context.word}")
    assert evaluate(contains, "status: ready", 0, c).verdict == "success"
    json_cfg = EvaluateConfig(
        type="output_json", path=".${context.key}", operator="gt", target="${context.target}"
    )
    assert evaluate(json_cfg, '{"count": 4}', 0, c).details["target"] == 3


def test_dispatch_first_iteration_of_convergence_with_no_prev() -> None:
    conv = EvaluateConfig(type="convergence", target=0, previous="${prev.output}")
    result = evaluate(conv, "12", 0, ctx(prev=None))
    assert result.verdict == "progress"
    assert result.details["previous"] is None


def test_dispatch_interpolation_error_is_error_verdict() -> None:
    numeric = EvaluateConfig(type="output_numeric", operator="eq", target="${context.nope}")
    result = evaluate(numeric, "1", 0, ctx(context={"max": 1}))
    assert result.verdict == "error"
    assert result.details == {
        "error": "${context.nope}: undefined variable ('nope' not found in context)"
    }


def test_dispatch_source_replaces_output() -> None:
    c = ctx(captured={"errors": {"output": "0\n", "exit_code": 1}})
    decide = EvaluateConfig(
        type="output_numeric", source="${captured.errors.output}", operator="eq", target=0
    )
    assert evaluate(decide, "ignored 99", 0, c).verdict == "success"
    # a non-string source is evaluated as its text
    c2 = ctx(context={"report": {"failed": 2}})
    json_cfg = EvaluateConfig(
        type="output_json", source="${context.report}", path=".failed", operator="eq", target=2
    )
    assert evaluate(json_cfg, "", 0, c2).verdict == "success"


def test_dispatch_missing_required_fields_and_unknown_type() -> None:
    result = evaluate(EvaluateConfig(type="output_numeric"), "1", 0, ctx())
    assert result.details == {"error": "output_numeric evaluator needs operator and target"}
    result = evaluate(EvaluateConfig(type="output_json"), "{}", 0, ctx())
    assert result.details == {"error": "output_json evaluator needs path"}
    result = evaluate(EvaluateConfig(type="output_contains"), "1", 0, ctx())
    assert result.details == {"error": "output_contains evaluator needs pattern"}
    result = evaluate(EvaluateConfig(type="exit_cod"), "", 0, ctx())  # type: ignore[arg-type]
    assert result.details == {
        "error": "unknown evaluator type 'exit_cod' (did you mean exit_code?)"
    }


@pytest.mark.parametrize(("code", "verdict"), [(0, "success"), (1, "failure"), (3, "error")])
def test_llm_disabled_falls_back_to_exit_code(code: int, verdict: str) -> None:
    result = evaluate(
        EvaluateConfig(type="llm_structured", prompt="Did ${context.unset} work?"),
        "whatever",
        code,
        ctx(),
        llm=LLMConfig(enabled=False),
    )
    assert result.verdict == verdict
    assert result.details["exit_code"] == code
    assert result.details["llm_skipped"] == (
        "LLM evaluation disabled (--no-llm or llm.enabled: false); used exit_code"
    )
    assert result.details["llm_skipped"] == LLM_SKIPPED_NOTE


def test_default_evaluation_for_shell_state() -> None:
    assert default_evaluation(False, "", 1, ctx()).verdict == "failure"
    no_llm = LLMConfig(enabled=False)
    prompt_result = default_evaluation(True, "done", 0, ctx(), llm=no_llm)
    assert prompt_result.verdict == "success"
    assert "llm_skipped" in prompt_result.details


def test_importing_evaluators_does_not_import_anthropic() -> None:
    code = (
        "import sys\n"
        "import little_loops.fsm.evaluators as ev\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n"
        "assert 'little_loops.fsm.evaluators.llm_structured' not in sys.modules, 'judge imported'\n"
        "assert callable(ev.evaluate_llm_structured)\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported by the judge'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_registry_entry_for_llm_also_honours_disabled() -> None:
    result = EVALUATORS["llm_structured"](
        EvaluateConfig(type="llm_structured"), "out", 0, LLMConfig(enabled=False), None
    )
    assert (result.verdict, result.details["llm_skipped"]) == ("success", LLM_SKIPPED_NOTE)
