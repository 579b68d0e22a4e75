"""Fuzzing the loop-file reader and validator: any input gives a report or one-line error.

No text, YAML structure, nesting depth or alias trick may produce another exception (a
traceback for the user) or hang: `load_text` raises only LoopDefinitionError, and
`check_document` and `ll-loop validate` always answer.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.slowdown import scaled
from support.timelimit import time_limit

from little_loops.cli import main_loop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.validate.loopfile import FileReport, check_document

pytestmark = pytest.mark.reliability

FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIMIT_S = 5.0  # per example; a correct answer takes milliseconds

LOOP_KEYS = [
    "name", "initial", "states", "max_iterations", "timeout", "backoff", "maintain",
    "context", "scope", "llm", "paradigm", "max_cost_usd", "idle_timeout", "goal", "tools",
    "check", "toward", "using", "tolerance", "steps", "until", "passes", "constraints", "fix",
]  # fmt: skip
STATE_KEYS = [
    "action", "action_type", "evaluate", "route", "capture", "next", "terminal",
    "on_success", "on_failure", "on_error", "on_maintain", "timeout", "idle_timeout",
]  # fmt: skip
EVALUATE_KEYS = [
    "type", "pattern", "operator", "target", "direction", "tolerance", "min_confidence",
    "path", "negate", "prompt", "schema", "previous", "uncertain_suffix",
]  # fmt: skip
WORDS = [
    "fsm", "goal", "convergence", "invariants", "imperative", "exit_code", "output_contains",
    "output_numeric", "output_json", "llm_structured", "eq", "ne", "lt", "le", "gt", "ge",
    "minimize", "maximize", "shell", "prompt", "slash_command", "$current", "_", "_error",
    "a", "b", "done", "${context.x}", "${captured.a.output}", "${nope.x}", "$${", "yes", "on",
]  # fmt: skip
STATE_NAMES = ["a", "b", "done", "$current", "", "yes"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS),
    st.text(max_size=12),
)


def values(keys: list[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.sampled_from(keys + WORDS), children, max_size=5),
        ),
        max_leaves=12,
    )


evaluate_configs = st.dictionaries(
    st.sampled_from(EVALUATE_KEYS), values(EVALUATE_KEYS), max_size=5
) | values(EVALUATE_KEYS)
states = st.dictionaries(
    st.sampled_from(STATE_KEYS),
    st.one_of(values(STATE_KEYS), st.sampled_from(STATE_NAMES), evaluate_configs),
    max_size=6,
)
loop_documents = st.dictionaries(
    st.sampled_from(LOOP_KEYS),
    st.one_of(
        values(LOOP_KEYS),
        st.dictionaries(st.sampled_from(STATE_NAMES), states, max_size=4),
        st.sampled_from(STATE_NAMES),
    ),
    max_size=8,
)

VALID = {
    "name": "fuzz",
    "initial": "a",
    "states": {
        "a": {"action": "true", "on_success": "done", "on_failure": "b"},
        "b": {"action": "echo ${context.x}", "capture": "seen", "next": "a"},
        "done": {"terminal": True},
    },
    "context": {"x": 1},
}


def mutated(base: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A valid document with one value somewhere replaced by something random."""

    def place(args: tuple[list[str], Any]) -> dict[str, Any]:
        path, value = args
        doc = yaml.safe_load(yaml.safe_dump(base))
        node = doc
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[path[-1]] = value
        return dict(doc)

    paths = st.sampled_from(
        [[k] for k in LOOP_KEYS]
        + [["states", s, k] for s in ("a", "b", "done") for k in STATE_KEYS]
        + [["states", "a", "evaluate", k] for k in EVALUATE_KEYS]
    )
    return st.tuples(paths, values(LOOP_KEYS + STATE_KEYS + EVALUATE_KEYS)).map(place)


def check_text(text: str) -> FileReport | None:
    """Load and validate; None when loading refused the text with a LoopDefinitionError."""
    with time_limit(LIMIT_S, "loading and validating one document"):
        try:
            doc = load_text(text, "fuzz.yaml")
        except LoopDefinitionError as exc:
            message = str(exc)
            assert message.startswith("fuzz.yaml")
            assert "\n" not in message, message
            return None
        report = check_document(doc)
    for problem in report.problems():
        assert str(problem), "a problem without a message"
    assert report.valid == (report.fsm is not None)
    return report


def dump(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


@FUZZ
@given(st.text(max_size=400))
def test_any_text(text: str) -> None:
    check_text(text)


@FUZZ
@given(
    st.lists(
        st.sampled_from(
            [
                *LOOP_KEYS,
                *STATE_KEYS,
                ":",
                " ",
                "\n",
                "  ",
                "- ",
                "&a ",
                "*a",
                "<<: ",
                "{",
                "}",
                "[",
                "]",
                '"',
                "'",
                "!!",
                "!!python/object:os.system",
                "#",
                "---",
                "...",
                "\t",
                "|",
                ">",
                "%YAML 1.1",
                "?",
                ",",
                "yes",
                "on",
                "\x00",
                "\ufeff",
            ]  # fmt: skip
        ),
        max_size=60,
    ).map("".join)
)
def test_yaml_like_token_soup(text: str) -> None:
    check_text(text)


@FUZZ
@given(loop_documents)
def test_loop_shaped_documents(data: dict[str, Any]) -> None:
    check_text(dump(data))


@FUZZ
@given(mutated(VALID))
def test_one_random_value_in_a_valid_loop(data: dict[str, Any]) -> None:
    check_text(dump(data))


@FUZZ
@given(
    st.sampled_from(["goal", "convergence", "invariants", "imperative", "fsm"]),
    st.dictionaries(st.sampled_from(LOOP_KEYS), values(LOOP_KEYS), max_size=7),
)
def test_paradigm_specs(paradigm: str, data: dict[str, Any]) -> None:
    check_text(dump({"paradigm": paradigm, **data}))


@FUZZ
@given(st.integers(min_value=1, max_value=5000), st.sampled_from(["[", "{a: ", "- ", "  a:\n"]))
def test_deep_nesting(depth: int, opener: str) -> None:
    if opener == "  a:\n":
        text = "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "b: 1\n"
    else:
        text = "states: " + opener * depth
    check_text(text)


# Each bomb costs ~0.2 s to refuse at the node limit, so fewer examples here.
@settings(FUZZ, max_examples=25)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=2, max_value=12))
def test_alias_bombs_fail_fast(levels: int, fan_out: int) -> None:
    started = time.monotonic()
    lines = ["a0: &a0 [x, y, z]"]
    for level in range(1, levels + 1):
        refs = ", ".join(f"*a{level - 1}" for _ in range(fan_out))
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"name: bomb\ninitial: s\nstates: {{s: {{terminal: true}}}}\ncontext: *a{levels}")
    check_text("\n".join(lines) + "\n")
    assert time.monotonic() - started < scaled(2)


def test_recursive_alias_and_merge_keys() -> None:
    assert check_text("a: &x [*x]\n") is None
    report = check_text(
        "base: &b {action: 'true', next: done}\n"
        "name: m\ninitial: s\nstates:\n  s: {<<: *b}\n  done: {terminal: true}\n"
    )
    assert report is not None  # `base` is an unknown key: a report, not an exception
    assert any("base" in str(p) for p in report.errors)


def test_non_finite_numbers_are_reported() -> None:
    for value in (".nan", ".inf", "-.inf", "1e999"):
        report = check_text(
            f"name: n\ninitial: s\nmax_iterations: {value}\ntimeout: {value}\n"
            "states: {s: {terminal: true}}\n"
        )
        assert report is not None
        assert not report.valid, value


@settings(FUZZ, max_examples=60)
@given(st.one_of(loop_documents.map(dump), mutated(VALID).map(dump), st.text(max_size=200)))
def test_ll_loop_validate_on_generated_files(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    path = Path(tmp_path_factory.mktemp("fuzz")) / "loop.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    out, err = io.StringIO(), io.StringIO()
    with (
        time_limit(LIMIT_S, "ll-loop validate"),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main_loop(["validate", str(path)])
    assert code in (0, 2), (code, out.getvalue(), err.getvalue())
    lines = out.getvalue().splitlines()
    assert lines, "validate printed nothing"
    assert all(line.startswith(f"{path}") for line in lines), lines
    assert (code == 0) == (lines[-1] == f"{path}: ok" or lines[-1].startswith(f"{path}: ok ("))
