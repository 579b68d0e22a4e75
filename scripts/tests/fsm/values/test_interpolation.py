from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import (
    MAX_CONTEXT_DEPTH,
    MAX_CONTEXT_SIZE,
    InterpolationContext,
    context_problems,
    interpolate,
    interpolate_dict,
    interpolate_value,
)
from little_loops.fsm.values.references import NAMESPACES, near_misses, references


@pytest.fixture
def ctx() -> InterpolationContext:
    return InterpolationContext(
        context={
            "dir": "src/",
            "target": 0,
            "files": ["a.py", "b.py"],
            "nested": {"deep": {"value": 42}},
            "empty": "",
            "nothing": None,
            "cmd": "mypy ${context.dir}",
            "flag": True,
            "010": "leading zero",
            "7": "seven",
        },
        captured={"errors": {"output": "4", "stderr": "", "exit_code": 1, "duration_ms": 12}},
        prev={"output": "7", "exit_code": 0, "state": "measure"},
        result={"verdict": "success", "details": {"reason": "fixed", "items": ["x", "y"]}},
        state_name="check",
        iteration=3,
        loop_name="fix-types",
        started_at="2026-01-15T10:30:00+00:00",
        elapsed_ms=154_000,
        env={"HOME": "/home/me", "CI": "1"},
    )


def test_there_are_seven_namespaces() -> None:
    assert NAMESPACES == ("context", "captured", "prev", "result", "state", "loop", "env")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${context.dir}", "src/"),
        ("${captured.errors.output}", "4"),
        ("${captured.errors}", "4"),  # shorthand for .output
        ("${captured.errors.exit_code}", "1"),
        ("${prev.output}", "7"),
        ("${prev.state}", "measure"),
        ("${result.verdict}", "success"),
        ("${result.details.reason}", "fixed"),
        ("${state.name}", "check"),
        ("${state.iteration}", "3"),
        ("${loop.name}", "fix-types"),
        ("${loop.started_at}", "2026-01-15T10:30:00+00:00"),
        ("${loop.elapsed_ms}", "154000"),
        ("${loop.elapsed}", "2m 34s"),
        ("${env.HOME}", "/home/me"),
    ],
)
def test_every_namespace_resolves(ctx: InterpolationContext, text: str, expected: str) -> None:
    assert interpolate(text, ctx) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${context.nested.deep.value}", "42"),
        ("${context.files[1]}", "b.py"),
        ("${context.files.0}", "a.py"),
        ("${result.details.items[0]}", "x"),
        ("${context.files}", '["a.py", "b.py"]'),
        ("${context.nested}", '{"deep": {"value": 42}}'),
        ("${context.flag}", "true"),
        # Keys are text: `010` is a name; a plain number finds the key with that text.
        ("${context.010}", "leading zero"),
        ("${context.7}", "seven"),
        ("mypy ${context.dir} --strict; echo ${state.iteration}", "mypy src/ --strict; echo 3"),
    ],
)
def test_paths_indices_and_text_forms(ctx: InterpolationContext, text: str, expected: str) -> None:
    assert interpolate(text, ctx) == expected


def test_empty_values_interpolate_as_empty_strings(ctx: InterpolationContext) -> None:
    assert interpolate("[${context.empty}][${context.nothing}]", ctx) == "[][]"


def test_escape_gives_a_literal_reference(ctx: InterpolationContext) -> None:
    assert interpolate("echo '$${context.dir}' ${context.dir}", ctx) == "echo '${context.dir}' src/"
    assert interpolate("$${", ctx) == "${"


@pytest.mark.parametrize(
    "text",
    [
        "echo $HOME $$ $1",
        "echo $(git rev-parse HEAD)",
        "echo ${HOME} ${PATH}",
        "echo ${VAR:-default} ${VAR:=x} ${#VAR} ${VAR/a/b} ${VAR%.py}",
        "awk '{print $1}'",
        "echo ${context.dir:-x}",  # not our form: the path may not contain ':'
    ],
)
def test_bash_forms_pass_through_untouched(ctx: InterpolationContext, text: str) -> None:
    assert interpolate(text, ctx) == text
    assert references(text) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "${context.missing}",
            "${context.missing}: undefined variable ('missing' not found in context)",
        ),
        (
            "${context.nested.deep.nope}",
            "${context.nested.deep.nope}: undefined variable ('nope' not found in "
            "context.nested.deep)",
        ),
        (
            "${context.files[5]}",
            "${context.files[5]}: undefined variable (index 5 out of range in "
            "context.files, which has 2 items)",
        ),
        (
            "${context.dir.x}",
            "${context.dir.x}: undefined variable (context.dir is str, not a mapping)",
        ),
        ("${env.NOPE}", "${env.NOPE}: undefined variable ('NOPE' not found in env)"),
        (
            "${captured.other.output}",
            "${captured.other.output}: undefined variable ('other' not found in captured)",
        ),
        ("${contxt.dir}", "${contxt.dir}: unknown namespace 'contxt' (did you mean context?)"),
        (
            "${zzz.dir}",
            "${zzz.dir}: unknown namespace 'zzz' (known: context, captured, prev, "
            "result, state, loop, env)",
        ),
        ("${context.a..b}", "${context.a..b}: malformed path"),
    ],
)
def test_undefined_references_name_the_variable(
    ctx: InterpolationContext, text: str, message: str
) -> None:
    with pytest.raises(InterpolationError) as info:
        interpolate(f"echo {text}", ctx)
    assert str(info.value) == message


def test_result_before_evaluation_is_an_error_and_prev_before_any_state_is_empty() -> None:
    ctx = InterpolationContext()
    with pytest.raises(
        InterpolationError, match=r"^\$\{result\.verdict\}: no evaluation result yet"
    ):
        interpolate("${result.verdict}", ctx)
    assert interpolate("[${prev.output}]", ctx) == "[]"


def test_context_may_refer_to_context(ctx: InterpolationContext) -> None:
    assert interpolate("${context.cmd}", ctx) == "mypy src/"


def test_context_cycles_are_an_error() -> None:
    ctx = InterpolationContext(context={"a": "x ${context.b}", "b": "y ${context.a}"})
    with pytest.raises(InterpolationError, match="context values refer to each other in a cycle"):
        interpolate("${context.a}", ctx)


def _doubling(levels: int, times: int = 2) -> dict[str, Any]:
    """`a1: x`, and each `aN` the one before *times* times."""
    context: dict[str, Any] = {"a1": "x"}
    for k in range(2, levels + 1):
        context[f"a{k}"] = f"${{context.a{k - 1}}}" * times
    return context


def test_each_context_value_is_filled_in_once(monkeypatch: pytest.MonkeyPatch) -> None:
    lookups: list[str] = []
    real = InterpolationContext.lookup

    def counted(self: InterpolationContext, namespace: str, path: str) -> Any:
        lookups.append(path)
        return real(self, namespace, path)

    monkeypatch.setattr(InterpolationContext, "lookup", counted)
    ctx = InterpolationContext(context=_doubling(20))
    assert interpolate("${context.a20}", ctx) == "x" * 2**19
    # one lookup per reference written, not one per copy made (2**20)
    assert len(lookups) == 1 + 2 * 19


def test_a_context_value_past_the_size_limit_is_an_error() -> None:
    context = _doubling(12, times=4)  # a11 is 4**10 characters, a12 four times that
    assert len(interpolate("${context.a11}", InterpolationContext(context=context))) == (
        MAX_CONTEXT_SIZE
    )
    with pytest.raises(InterpolationError) as info:
        interpolate("echo ${context.a12}", InterpolationContext(context=context))
    assert str(info.value) == (
        f"${{context.a12}}: filled in, this context value is longer than "
        f"{MAX_CONTEXT_SIZE:,} characters (the limit)"
    )
    assert context_problems(context) == [("a12", str(info.value))]


def test_context_values_nested_past_the_depth_limit_are_an_error() -> None:
    levels = MAX_CONTEXT_DEPTH + 1  # a2 .. a{levels} hold references: MAX_CONTEXT_DEPTH
    assert interpolate(
        f"${{context.a{levels}}}", InterpolationContext(context=_doubling(levels, 1))
    )
    context = _doubling(levels + 1, 1)
    with pytest.raises(InterpolationError) as info:
        interpolate(f"${{context.a{levels + 1}}}", InterpolationContext(context=context))
    message = (
        f"${{context.a{levels + 1}}}: context values refer to context values more than "
        f"{MAX_CONTEXT_DEPTH} deep (the limit)"
    )
    assert str(info.value) == message
    assert context_problems(context) == [(f"a{levels + 1}", message)]


def test_a_cycle_past_the_depth_limit_is_still_called_a_cycle() -> None:
    n = MAX_CONTEXT_DEPTH + 8
    ring = {f"k{i}": f"<${{context.k{(i + 1) % n}}}>" for i in range(n)}
    with pytest.raises(InterpolationError, match="in a cycle \\(k32 → k33 → .* → k32\\)$"):
        interpolate("${context.k0}", InterpolationContext(context=ring))
    assert [path for path, _ in context_problems(ring)] == ["k0"]


def test_a_whole_value_reference_keeps_its_type(ctx: InterpolationContext) -> None:
    assert interpolate_value("${context.target}", ctx) == 0
    assert interpolate_value("${context.files}", ctx) == ["a.py", "b.py"]
    assert interpolate_value("n=${context.target}", ctx) == "n=0"
    assert interpolate_value(5, ctx) == 5
    assert interpolate_value("$${context.target}", ctx) == "${context.target}"


def test_interpolate_dict_recurses(ctx: InterpolationContext) -> None:
    data: dict[str, Any] = {
        "target": "${context.target}",
        "list": ["${context.dir}", 1],
        "inner": {"previous": "${prev.output}"},
    }
    assert interpolate_dict(data, ctx) == {
        "target": 0,
        "list": ["src/", 1],
        "inner": {"previous": "7"},
    }


def test_references_lists_our_forms_only() -> None:
    assert references("${context.a} $${context.b} ${HOME} ${captured.x.output}") == [
        ("context", "a"),
        ("captured", "x.output"),
    ]


def test_interpolation_never_evaluates_code(ctx: InterpolationContext) -> None:
    ctx.context = {"code": "$(rm -rf /)", "py": "__import__('os')"}
    assert interpolate("${context.code} ${context.py}", ctx) == "$(rm -rf /) __import__('os')"


@pytest.mark.parametrize(
    ("text", "misses"),
    [
        ("echo ${captured.}", ["${captured.}"]),
        ("echo ${ context.x }", ["${ context.x }"]),
        ("echo ${prev.output }", ["${prev.output }"]),
        ("echo ${context.x} ${HOME} ${VAR:-x} ${state} $${context.}", []),
    ],
)
def test_near_misses(text: str, misses: list[str]) -> None:
    assert near_misses(text) == misses
