"""Parameter specs: the types of values, the checks of `parameters:`, the model round trip."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.definition.model.parameters import (
    ParameterSpec,
    check_value,
    coerce,
    parse_parameters,
)
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.writer import dump_fsm_yaml
from little_loops.fsm.validate.loopfile import check_document, validate_fsm


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        ("integer", "123", 123),
        ("integer", "-4", -4),
        ("integer", " +7 ", 7),
        ("number", "2.5", 2.5),
        ("number", "3", 3),
        ("number", "1e3", 1000.0),
        ("boolean", "YES", True),
        ("boolean", "no", False),
        ("boolean", "1", True),
        ("boolean", "False", False),
        ("list", "a, b ,c", ["a", "b", "c"]),
        ("list", "", []),
        ("list", "one", ["one"]),
        ("string", "", ""),
        ("string", "1.5", "1.5"),
        ("path", "src/x.py", "src/x.py"),
    ],
)
def test_text_from_the_command_line_is_converted(kind: str, text: str, value: Any) -> None:
    converted = coerce(kind, text, text=True)
    assert converted == value
    assert type(converted) is type(value)


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("integer", "1.5", "expected a whole number, got '1.5'"),
        ("integer", "abc", "expected a whole number, got 'abc'"),
        ("integer", "", "expected a whole number, got ''"),
        ("number", "nan", "expected a number, got 'nan'"),
        ("number", "inf", "expected a number, got 'inf'"),
        ("number", "ten", "expected a number, got 'ten'"),
        ("number", "1_000", "expected a number, got '1_000'"),
        ("number", "\uff11.5", "expected a number, got '\uff11.5'"),
        ("integer", "\uff11\uff12", "expected a whole number, got '\uff11\uff12'"),
        ("integer", "9" * 5000, "expected a whole number, got '9999"),
        ("boolean", "maybe", "expected true or false (yes/no, 1/0), got 'maybe'"),
        ("path", " ", "expected a path (a non-empty string), got ' '"),
    ],
)
def test_text_of_the_wrong_type_is_refused(kind: str, text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        coerce(kind, text, text=True)


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("integer", "12"),  # a string in a JSON file is no integer
        ("integer", 1.0),
        ("integer", True),
        ("number", False),
        ("boolean", "yes"),
        ("boolean", 1),
        ("list", "a,b"),
        ("list", [{"a": 1}]),
        ("string", 5),
        ("path", None),
    ],
)
def test_typed_values_must_have_the_type_already(kind: str, value: object) -> None:
    with pytest.raises(ValueError, match="^expected "):
        coerce(kind, value)


def test_typed_values_that_fit_are_kept() -> None:
    assert coerce("integer", 3) == 3
    assert coerce("number", 3) == 3
    assert coerce("list", ["a", 2]) == ["a", 2]
    assert coerce("boolean", False) is False


def test_choices_hold_for_each_item_of_a_list() -> None:
    spec = ParameterSpec(type="list", choices=("a", "b"))
    assert check_value(spec, "a,b,a", text=True) == ["a", "b", "a"]
    with pytest.raises(ValueError, match="^expected one of a, b, got 'c'$"):
        check_value(spec, "a,c", text=True)
    level = ParameterSpec(type="integer", choices=(1, 2))
    assert check_value(level, "2", text=True) == 2
    with pytest.raises(ValueError, match="^expected one of 1, 2, got 3$"):
        check_value(level, "3", text=True)


def test_short_and_long_forms_make_the_same_spec() -> None:
    specs = parse_parameters(
        {"a": "integer", "b": {"type": "integer"}, "c": None, "d": {"default": "x"}}
    )
    assert specs["a"] == specs["b"] == ParameterSpec(type="integer")
    assert specs["c"] == ParameterSpec()
    assert specs["a"].required
    assert specs["c"].required
    assert not specs["d"].required
    assert specs["d"].summary() == "string, default x"


LOOP = """\
name: p
parameters:
  issue:
    type: integer
    description: the issue
  tags:
    type: list
    default: [a, b]
    choices: [a, b, c]
  fast: boolean
initial: a
states:
  a:
    action: echo ${context.issue} ${words:context.tags} ${context.fast}
    next: done
  done:
    terminal: true
"""


def test_a_loop_with_parameters_round_trips_through_the_writer() -> None:
    report = check_document(load_text(LOOP))
    assert report.errors == []
    fsm = report.fsm
    assert fsm is not None
    assert list(fsm.parameters) == ["issue", "tags", "fast"]
    written = dump_fsm_yaml(fsm)
    assert written.startswith("name: p\nparameters:\n  issue:\n    type: integer\n")
    assert FSMLoop.from_dict(load_text(written).data) == fsm


def load_and_validate_text(text: str) -> FSMLoop:
    report = check_document(load_text(text))
    assert report.valid, report.problems()
    assert report.fsm is not None
    return report.fsm


def problems(text: str) -> list[str]:
    return [f"{p.line}: {p.severity}: {p}" for p in check_document(load_text(text)).problems()]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{type: integr}", "issue > type: unknown type 'integr' (did you mean integer?)"),
        ("strin", "issue: unknown type 'strin' (did you mean string?)"),
        ("[1]", "issue: expected a type or a mapping of settings, got a list"),
        ("{type: integer, default: '3'}", "issue > default: expected a whole number, got '3'"),
        ("{type: integer, default: 1.5}", "issue > default: expected a whole number, got 1.5"),
        (
            "{type: integer, default: 3, required: true}",
            "issue > required: a parameter with a default is not required: drop one of them",
        ),
        (
            "{choices: [a], values: [a]}",
            "issue > values: values is another spelling of choices: give one of them",
        ),
        ("{values: []}", "issue > values: expected at least one value"),
        ("{required: 1}", "issue > required: expected true or false, got 1"),
        ("{choices: []}", "issue > choices: expected at least one value"),
        ("{choices: a}", "issue > choices: expected a list of values, got 'a'"),
        ("{type: number, choices: [1, x]}", "issue > choices > 1: expected a number, got 'x'"),
        ("{choices: [a], default: b}", "issue > default: expected one of a, got 'b'"),
        ("{type: list, default: [c], choices: [a]}", "issue > default: expected one of a, got 'c'"),
        ("{descripton: x}", "issue > descripton: unknown key (did you mean description?)"),
        ("{description: 5}", "issue > description: expected a string, got 5"),
    ],
)
def test_a_wrong_parameter_is_an_error_at_its_key(entry: str, message: str) -> None:
    text = LOOP.replace(
        "  issue:\n    type: integer\n    description: the issue\n", f"  issue: {entry}\n"
    )
    found = problems(text)
    assert found[0].split(": error: ", 1)[1] == f"loop 'p' > parameters > {message}"


def test_a_key_in_both_context_and_parameters_has_the_context_value_as_default() -> None:
    """As in little-loops: the context value is the parameter's default (a run may give
    another); a default of its own wins."""
    text = LOOP.replace("initial: a\n", "initial: a\ncontext:\n  fast: yes\n")
    assert problems(text) == []
    fsm = load_and_validate_text(text)
    assert fsm.parameters["fast"].default is True
    assert not fsm.parameters["fast"].required


def test_an_optional_parameter_without_default_may_be_left_out() -> None:
    text = LOOP.replace("  fast: boolean\n", "  fast: {type: boolean, required: false}\n")
    assert problems(text) == []
    spec = load_and_validate_text(text).parameters["fast"]
    assert (spec.required, spec.summary()) == (False, "boolean, optional")
    assert spec.to_dict() == {"type": "boolean", "required": False}


def test_values_is_choices() -> None:
    text = LOOP.replace("  fast: boolean\n", "  fast: {values: [x, y], default: x}\n")
    assert load_and_validate_text(text).parameters["fast"].choices == ("x", "y")


def test_a_parameter_name_must_be_a_reference_segment() -> None:
    text = LOOP.replace("  fast: boolean\n", "  fast: boolean\n  2nd: string\n")
    assert problems(text) == [
        "11: error: loop 'p' > parameters > 2nd: a parameter name must be letters, digits, "
        "'_' and '-', not starting with a digit or '-'"
    ]


def test_parameters_must_be_a_mapping() -> None:
    text = "name: p\nparameters: [issue]\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    assert problems(text) == [
        "2: error: loop 'p' > parameters: expected a mapping of parameter names to types or "
        "settings, got a list"
    ]


def test_an_undeclared_context_reference_is_an_error_with_a_suggestion() -> None:
    text = LOOP.replace("${context.fast}", "${context.fats}")
    assert problems(text) == [
        "14: error: loop 'p' > states > a > action: ${context.fats}: context has no key "
        "'fats' (did you mean fast?)"
        "; declare it under context: or parameters:, or write ${context.KEY?}, or run with --compat"
    ]


def test_a_paradigm_file_takes_parameters() -> None:
    text = (
        "paradigm: goal\nname: g\ngoal: green\n"
        "tools: ['test ${context.n} -gt 2', 'echo fix']\n"
        "parameters:\n  n: {type: integer, default: 3}\n"
    )
    report = check_document(load_text(text))
    assert report.errors == []
    assert report.fsm is not None
    assert report.fsm.parameters == {"n": ParameterSpec(type="integer", default=3)}
    wrong = text.replace("default: 3", "default: x")
    assert problems(wrong) == [
        "6: error: loop 'g' > parameters > n > default: expected a whole number, got 'x'"
    ]


def test_a_paradigm_parameter_may_not_be_a_key_its_compiler_sets() -> None:
    text = (
        "paradigm: convergence\nname: c\ncheck: echo 1\ntoward: 0\nusing: echo fix\n"
        "parameters:\n  target: integer\n"
    )
    assert problems(text) == [
        "6: error: loop 'c' > parameters: 'target' is set by the convergence compiler "
        "(paradigm convergence)"
    ]


def test_a_loop_built_in_python_takes_specs_and_is_checked() -> None:
    fsm = FSMLoop.from_dict(load_text(LOOP).data)
    assert validate_fsm(fsm) == []
    fsm.parameters["extra"] = "integer"  # type: ignore[assignment]
    assert [str(p) for p in validate_fsm(fsm)] == [
        "loop 'p' > parameters: expected a ParameterSpec by name, got 'integer'"
    ]
    fsm.parameters = {"extra": ParameterSpec(type="integer", default="x")}
    assert [str(p) for p in validate_fsm(fsm)] == [
        "loop 'p' > parameters > extra > default: expected a whole number, got 'x'"
    ]
