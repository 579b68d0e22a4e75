"""The paradigm registry and dispatch: golden examples, properties, and spec errors."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import DATA, REPO

from little_loops.fsm.definition.graph.transitions import declared
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop, LLMConfig
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.definition.writing.writer import dump_fsm_yaml
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.paradigms.convergence import compile_convergence
from little_loops.fsm.paradigms.goal import compile_goal
from little_loops.fsm.paradigms.imperative import compile_imperative
from little_loops.fsm.paradigms.invariants import compile_invariants, constraint_state_suffix
from little_loops.fsm.paradigms.ralph import compile_ralph
from little_loops.fsm.paradigms.registry import COMPILERS, compile_paradigm
from little_loops.fsm.validate.loopfile import check_file, load_and_validate, validate_fsm

PARADIGM_DATA = DATA / "paradigms"
GOLDEN = sorted(
    path.name.removesuffix(".yaml")
    for path in PARADIGM_DATA.glob("*.yaml")
    if not path.name.endswith(".expected.yaml")
)


def unreachable_from_terminal(fsm: FSMLoop) -> list[str]:
    """States from which no path of declared transitions leads to a terminal state."""
    edges: dict[str, set[str]] = {}
    for name, state in fsm.states.items():
        edges[name] = {
            name if t.target == CURRENT_STATE_TOKEN else t.target for t in declared(state)
        }
    good = {name for name, state in fsm.states.items() if state.terminal}
    changed = True
    while changed:
        changed = False
        for name, targets in edges.items():
            if name not in good and targets & good:
                good.add(name)
                changed = True
    return sorted(set(fsm.states) - good)


def dangling_targets(fsm: FSMLoop) -> list[tuple[str, str]]:
    return [
        (name, t.target)
        for name, state in fsm.states.items()
        for t in declared(state)
        if t.target != CURRENT_STATE_TOKEN and t.target not in fsm.states
    ]


def strip_comments(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))


# --- golden examples -------------------------------------------------------------------


def test_golden_folder_has_every_paradigm() -> None:
    assert {name for name in GOLDEN if name in COMPILERS} == set(COMPILERS)


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_example_compiles_to_expected_fsm(name: str) -> None:
    compiled = compile_paradigm(load_file(PARADIGM_DATA / f"{name}.yaml").data)
    expected_doc = load_file(PARADIGM_DATA / f"{name}.expected.yaml")
    expected = FSMLoop.from_dict(expected_doc.data)

    assert compiled.initial == expected.initial
    assert list(compiled.states) == list(expected.states)
    for state_name, state in expected.states.items():
        assert compiled.states[state_name].action == state.action, state_name
        assert declared(compiled.states[state_name]) == declared(state), state_name
    assert compiled == expected
    # No errors; the static analysis's warnings on these examples are asserted in
    # fsm/definition/checks/test_analysis.py.
    assert [p for p in validate_fsm(compiled) if p.severity == "error"] == []


@pytest.mark.parametrize("name", GOLDEN)
def test_validating_a_paradigm_file_compiles_it(name: str) -> None:
    report = check_file(PARADIGM_DATA / f"{name}.yaml")
    assert report.errors == []  # warnings: see fsm/definition/checks/test_analysis.py
    assert report.fsm == compile_paradigm(load_file(PARADIGM_DATA / f"{name}.yaml").data)


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_example_is_written_as_the_expected_file(name: str) -> None:
    compiled = compile_paradigm(load_file(PARADIGM_DATA / f"{name}.yaml").data)
    expected_text = (PARADIGM_DATA / f"{name}.expected.yaml").read_text(encoding="utf-8")
    assert dump_fsm_yaml(compiled) == strip_comments(expected_text)


# --- templates and rules ---------------------------------------------------------------


def test_compiled_output_with_source_paradigm_loads_as_fsm() -> None:
    fsm = compile_paradigm(load_file(PARADIGM_DATA / "goal.yaml").data)
    again = compile_paradigm(load_text(dump_fsm_yaml(fsm)).data)
    assert again == fsm
    assert again.paradigm == "goal"


# --- compiled loops run ---------------------------------------------------------------

RUNNABLE = {
    "goal": """\
paradigm: goal
goal: Three lines in the log
tools:
  - test "$(wc -l < log)" -ge 3
  - echo line >> log
""",
    "goal-one-tool": """\
paradigm: goal
goal: Three lines in the log
tools:
  - echo line >> log; test "$(wc -l < log)" -ge 3
""",
    "convergence": """\
paradigm: convergence
name: count-down
check: wc -l < log
toward: 0
using: sed -i 1d log
""",
    "invariants": """\
paradigm: invariants
name: files-exist
constraints:
  - {name: a-exists, check: test -f a, fix: touch a}
  - {name: b-exists, check: test -f b, fix: touch b}
""",
    "imperative": """\
paradigm: imperative
name: append
steps: [echo one >> log, echo two >> log]
until: {check: test "$(wc -l < log)" -ge 6}
""",
}


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_a_paradigm_file_runs_after_loading(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("log").write_text("x\ny\n" if name == "convergence" else "", encoding="utf-8")
    path = tmp_path / "loop.yaml"
    path.write_text(RUNNABLE[name] + "max_iterations: 20\n", encoding="utf-8")
    result = FSMExecutor(load_and_validate(path)).run()
    assert (result.terminated_by, result.final_state) == (
        "terminal",
        "all_valid" if name == "invariants" else "done",
    )
    lines = Path("log").read_text(encoding="utf-8").splitlines()
    expected = {"convergence": 0, "invariants": 0, "imperative": 6}.get(name, 3)
    assert len(lines) == expected


# --- properties ------------------------------------------------------------------------

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_ ", min_size=1, max_size=12)
# Any text a user might put in an action, including YAML-hostile strings and newlines.
_action = st.one_of(
    st.sampled_from(["pytest", "/ll:check_code fix", "yes", "on", "null", "1.0", "- x", "a: b"]),
    # No `${`: a reference to an unknown namespace is an invalid spec, not a valid one.
    st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "" and "${" not in s),
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "max_iterations": st.integers(min_value=1, max_value=1000),
        "backoff": st.one_of(st.integers(0, 10), st.floats(0, 10)),
        "timeout": st.integers(1, 3600),
        "maintain": st.booleans(),
        "llm": st.fixed_dictionaries({}, optional={"enabled": st.booleans()}),
        "scope": st.lists(st.sampled_from(["src/", "tests/", "docs/"]), max_size=2),
        "action_type": st.sampled_from(["prompt", "slash_command", "shell"]),
        "context": st.dictionaries(
            st.sampled_from(["repo", "module", "yes"]),
            st.one_of(st.integers(), st.text(max_size=10), st.booleans(), st.none()),
        ),
    },
)


def _with(settings_: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {**settings_, **spec}


_goal_specs = st.builds(
    lambda s, goal, tools: _with(s, {"paradigm": "goal", "goal": goal, "tools": tools}),
    _settings,
    _action,
    st.lists(_action, min_size=1, max_size=2),
)
_convergence_specs = st.builds(
    lambda s, check, toward, using, tol, direction: _with(
        s,
        {
            "paradigm": "convergence",
            "name": "metric",
            "check": check,
            "toward": toward,
            "using": using,
            "tolerance": tol,
            "direction": direction,
        },
    ),
    _settings,
    _action,
    st.one_of(st.integers(-100, 100), st.floats(-100, 100)),
    _action,
    st.integers(0, 5),
    st.sampled_from(["minimize", "maximize"]),
)
_invariants_specs = st.builds(
    lambda s, names, check, fix: _with(
        s,
        {
            "paradigm": "invariants",
            "name": "guard",
            "constraints": [{"name": n, "check": check, "fix": fix} for n in names],
        },
    ),
    _settings,
    st.lists(
        _word.filter(lambda w: constraint_state_suffix(w) != ""),
        min_size=1,
        max_size=5,
        unique_by=constraint_state_suffix,
    ),
    _action,
    _action,
)
_imperative_specs = st.builds(
    lambda s, steps, check, passes: _with(
        s,
        {
            "paradigm": "imperative",
            "name": "steps",
            "steps": steps,
            "until": {"check": check, "passes": passes},
        },
    ),
    _settings,
    st.lists(_action, min_size=1, max_size=6),
    _action,
    st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(spec=st.one_of(_goal_specs, _convergence_specs, _invariants_specs, _imperative_specs))
def test_any_valid_spec_compiles_to_a_sound_fsm_that_round_trips(spec: dict[str, Any]) -> None:
    fsm = compile_paradigm(spec)
    assert [str(p) for p in validate_fsm(fsm) if p.severity == "error"] == []
    assert fsm.paradigm == spec["paradigm"]
    assert fsm.initial in fsm.states
    assert dangling_targets(fsm) == []
    assert unreachable_from_terminal(fsm) == []
    assert fsm.terminal_states() != []
    for key in ("max_iterations", "backoff", "timeout", "maintain", "scope"):
        if key in spec:
            assert getattr(fsm, key) == spec[key], key
    assert fsm.llm == LLMConfig.from_dict(spec.get("llm", {}))
    assert spec.get("context", {}).items() <= fsm.context.items()
    if "action_type" in spec:
        assert all(s.action_type == spec["action_type"] for s in fsm.states.values() if s.action)
    assert compile_paradigm(load_text(dump_fsm_yaml(fsm)).data) == fsm


@settings(max_examples=30, deadline=None)
@given(spec=st.one_of(_goal_specs, _convergence_specs, _invariants_specs, _imperative_specs))
def test_compiling_is_deterministic(spec: dict[str, Any]) -> None:
    assert dump_fsm_yaml(compile_paradigm(spec)) == dump_fsm_yaml(compile_paradigm(dict(spec)))


# --- errors ----------------------------------------------------------------------------

GOAL = {"paradigm": "goal", "goal": "No type errors", "tools": ["mypy src/"]}
CONVERGENCE = {"paradigm": "convergence", "name": "n", "check": "c", "toward": 0, "using": "u"}
INVARIANTS = {
    "paradigm": "invariants",
    "name": "n",
    "constraints": [
        {"name": "a", "check": "ca", "fix": "fa"},
        {"name": "b", "check": "cb", "fix": "fb"},
    ],
}
IMPERATIVE = {"paradigm": "imperative", "name": "n", "steps": ["s"], "until": {"check": "c"}}


def without(spec: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != key}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (without(GOAL, "goal"), "paradigm 'goal': missing required field 'goal'"),
        (without(GOAL, "tools"), "paradigm 'goal': missing required field 'tools'"),
        (without(CONVERGENCE, "name"), "paradigm 'convergence': missing required field 'name'"),
        (without(CONVERGENCE, "check"), "paradigm 'convergence': missing required field 'check'"),
        (
            without(CONVERGENCE, "toward"),
            "paradigm 'convergence': missing required field 'toward'",
        ),
        (without(CONVERGENCE, "using"), "paradigm 'convergence': missing required field 'using'"),
        (
            without(INVARIANTS, "constraints"),
            "paradigm 'invariants': missing required field 'constraints'",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "a", "check": "c"}]},
            "paradigm 'invariants' > constraints[0]: missing required field 'fix'",
        ),
        (
            {**INVARIANTS, "constraints": [{"check": "c", "fix": "f"}]},
            "paradigm 'invariants' > constraints[0]: missing required field 'name'",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "a", "fix": "f"}]},
            "paradigm 'invariants' > constraints[0]: missing required field 'check'",
        ),
        (without(IMPERATIVE, "steps"), "paradigm 'imperative': missing required field 'steps'"),
        (without(IMPERATIVE, "until"), "paradigm 'imperative': missing required field 'until'"),
        (
            {**IMPERATIVE, "until": {"passes": True}},
            "paradigm 'imperative' > until: missing required field 'check'",
        ),
    ],
)
def test_missing_required_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(LoopDefinitionError) as exc:
        compile_paradigm(spec)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({**GOAL, "goal": ["x"]}, "paradigm 'goal' > goal: expected a string, got list"),
        ({**GOAL, "tools": "mypy"}, "paradigm 'goal' > tools: expected a list, got string"),
        ({**GOAL, "tools": []}, "paradigm 'goal' > tools: must not be empty"),
        (
            {**GOAL, "tools": ["a", 3]},
            "paradigm 'goal' > tools[1]: expected a string, got integer (quote it as written)",
        ),
        (
            {**GOAL, "goal": True},
            "paradigm 'goal' > goal: expected a string, got boolean "
            '(write it as a string: "true")',
        ),
        (
            {**GOAL, "tools": ["a", "b", "c"]},
            "paradigm 'goal' > tools: expected 1 tool (checks and fixes) or 2 (check, then fix),"
            " got 3; use paradigm 'imperative' for longer sequences",
        ),
        (
            {**CONVERGENCE, "toward": "zero"},
            "paradigm 'convergence' > toward: expected a number, got string",
        ),
        (
            {**CONVERGENCE, "toward": True},
            "paradigm 'convergence' > toward: expected a number, got boolean",
        ),
        (
            {**CONVERGENCE, "tolerance": -1},
            "paradigm 'convergence' > tolerance: must be at least 0, got -1",
        ),
        (
            {**CONVERGENCE, "direction": "minimise"},
            "paradigm 'convergence' > direction: unknown value 'minimise' (did you mean minimize?);"
            " known: minimize, maximize",
        ),
        (
            {**CONVERGENCE, "context": {"target": 5}},
            "paradigm 'convergence' > context: 'target' is set by the convergence compiler",
        ),
        (
            {**INVARIANTS, "constraints": {"name": "a"}},
            "paradigm 'invariants' > constraints: expected a list, got mapping",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "a", "check": "c", "fix": "f"}, "pytest"]},
            "paradigm 'invariants' > constraints[1]: expected a mapping, got string",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "a", "check": "c", "fix": ["x", "y"]}]},
            "paradigm 'invariants' > constraints[0] > fix: expected a string, got list",
        ),
        (
            {
                **INVARIANTS,
                "constraints": [
                    {"name": "tests-pass", "check": "c", "fix": "f"},
                    {"name": "tests_pass", "check": "c", "fix": "f"},
                ],
            },
            "paradigm 'invariants' > constraints[1] > name: 'tests_pass' gives the same state"
            " names as constraint 'tests-pass' (check_tests_pass, fix_tests_pass)",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "!!", "check": "c", "fix": "f"}]},
            "paradigm 'invariants' > constraints[0] > name: '!!' has no letters or digits to"
            " name a state",
        ),
        (
            {**IMPERATIVE, "steps": "make"},
            "paradigm 'imperative' > steps: expected a list, got string",
        ),
        (
            {**IMPERATIVE, "until": "mypy src/"},
            "paradigm 'imperative' > until: expected a mapping, got string",
        ),
        (
            {**IMPERATIVE, "until": {"check": "c", "passes": "yes"}},
            "paradigm 'imperative' > until > passes: expected true or false, got string",
        ),
        (
            {**IMPERATIVE, "max_iterations": 0},
            # Loop settings are checked by the definition's checks: FSM-file wording.
            "loop 'n' > max_iterations: expected a whole number >= 1, got 0",
        ),
        (
            {**IMPERATIVE, "action_type": "bash"},
            "loop 'n' > action_type: expected one of prompt, slash_command, shell, mcp_tool, "
            "got 'bash'",
        ),
        (
            {**IMPERATIVE, "action_type": 1},
            "loop 'n' > action_type: expected one of prompt, slash_command, shell, mcp_tool, got 1",
        ),
        (
            {**IMPERATIVE, "llm": {"modle": "x"}},
            "loop 'n' > llm > modle: unknown key (did you mean model?)",
        ),
    ],
)
def test_wrongly_typed_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(LoopDefinitionError) as exc:
        compile_paradigm(spec)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {**without(GOAL, "tools"), "tols": ["x"]},
            "paradigm 'goal' > tols: unknown key (did you mean tools?)",
        ),
        (
            {**CONVERGENCE, "tolerence": 1},
            "paradigm 'convergence' > tolerence: unknown key (did you mean tolerance?)",
        ),
        (
            {**INVARIANTS, "constraints": [{"name": "a", "check": "c", "fixx": "f"}]},
            "paradigm 'invariants' > constraints[0] > fixx: unknown key (did you mean fix?)",
        ),
        (
            {**IMPERATIVE, "until": {"check": "c", "pass": True}},
            "paradigm 'imperative' > until > pass: unknown key (did you mean passes?)",
        ),
        ({**IMPERATIVE, "colour": "red"}, "paradigm 'imperative' > colour: unknown key"),
        (
            {**IMPERATIVE, "states": {}},
            "paradigm 'imperative' > states: unknown key (did you mean steps?)",
        ),
    ],
)
def test_unknown_key_is_rejected_with_suggestion(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(LoopDefinitionError) as exc:
        compile_paradigm(spec)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"paradigm": "convergance"},
            "unknown paradigm 'convergance' (did you mean convergence?); known: goal,"
            " convergence, invariants, imperative, ralph, fsm",
        ),
        (
            {"paradigm": "natural"},
            "unknown paradigm 'natural'; known: goal, convergence, invariants, imperative,"
            " ralph, fsm",
        ),
        (
            {"paradigm": ["goal"]},
            "paradigm: expected a string, got list; known: goal, convergence, invariants,"
            " imperative, ralph, fsm",
        ),
        # Native FSM documents get the raw definition checks of definition.validation.
        (
            {"name": "x", "initial": "a", "states": {"a": None}},
            "loop 'x' > states > a: expected a mapping of state settings, got null",
        ),
        (
            {"name": "x", "states": {"a": {"terminal": True}}},
            "loop 'x': missing required key 'initial'",
        ),
        (
            {"name": "x", "initial": "a", "states": {"a": {"terminal": True}}, "inital": "a"},
            "loop 'x' > inital: unknown key (did you mean initial?)",
        ),
        (
            {
                "name": "x",
                "paradigm": "goal",
                "initial": "a",
                "states": {"a": {"action": "t", "on_sucess": "b"}, "b": {"terminal": True}},
            },
            "loop 'x' > states > a > on_sucess: unknown key (did you mean on_success?)",
        ),
        (
            {"name": "x", "paradigm": "goall", "initial": "a", "states": {"a": {"terminal": True}}},
            "unknown paradigm 'goall' (did you mean goal?); known: goal, convergence, invariants,"
            " imperative, ralph, fsm",
        ),
    ],
)
def test_dispatch_errors(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(LoopDefinitionError) as exc:
        compile_paradigm(spec)
    assert str(exc.value) == message


def test_compilers_are_registered_by_paradigm_name() -> None:
    assert COMPILERS["goal"] is compile_goal
    assert COMPILERS["convergence"] is compile_convergence
    assert COMPILERS["invariants"] is compile_invariants
    assert COMPILERS["imperative"] is compile_imperative
    assert COMPILERS["ralph"] is compile_ralph
    assert list(COMPILERS) == ["goal", "convergence", "invariants", "imperative", "ralph", "fsm"]


def test_spend_and_idle_limits_carry_over() -> None:
    fsm = compile_paradigm(
        {
            "paradigm": "goal",
            "goal": "Tests pass",
            "tools": ["pytest", "/ll:fix"],
            "idle_timeout": 300,
            "max_cost_usd": 2.5,
        }
    )
    assert (fsm.idle_timeout, fsm.max_cost_usd) == (300, 2.5)


def test_zero_budget_is_rejected() -> None:
    with pytest.raises(LoopDefinitionError, match="max_cost_usd: expected a number > 0, got 0"):
        compile_paradigm({"paradigm": "goal", "goal": "x", "tools": ["a"], "max_cost_usd": 0})


def test_the_paradigms_import_nothing_from_validation() -> None:
    """Validation calls the registry; the other way round would be an import cycle."""
    folder = REPO / "scripts" / "little_loops" / "fsm" / "paradigms"
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "little_loops.fsm.validate.loopfile" not in modules, path.name
