from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.definition.checks.graph_checks import check_graph
from little_loops.fsm.definition.checks.key_tables import (
    EVALUATE_KEYS,
    LLM_KEYS,
    LOOP_KEYS,
    NOTIFY_KEYS,
    STATE_KEYS,
)
from little_loops.fsm.definition.model.reuse_keys import REUSE_LOOP_CHECKS, REUSE_STATE_CHECKS
from little_loops.fsm.definition.model.run_keys import RUN_LOOP_KEYS
from little_loops.fsm.definition.model.spellings import SPELLINGS, STATE
from little_loops.fsm.definition.model.typed import (
    DEFAULT_LLM_MODEL,
    EvaluateConfig,
    FSMLoop,
    LLMConfig,
    NotifyConfig,
    RouteConfig,
    StateConfig,
    model_keys,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.writer import dump_fsm_yaml
from little_loops.fsm.evaluators.registry import EVALUATE_KEY_NAMES, EVALUATOR_TYPES, SPECS
from little_loops.fsm.facts.errors import (
    LoopDefinitionError,
    LoopFileError,
    LoopValidationError,
    ValidationError,
)
from little_loops.fsm.paradigms import registry
from little_loops.fsm.validate.loopfile import (
    check_document,
    check_file,
    load_and_validate,
    validate_definition,
    validate_fsm,
)


def loop(**overrides: Any) -> dict[str, Any]:
    """A small valid raw definition; keyword arguments replace or add top-level keys."""
    data: dict[str, Any] = {
        "name": "demo",
        "initial": "check",
        "states": {
            "check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
            "fix": {"action": "/ll:fix", "next": "check"},
            "done": {"terminal": True},
        },
    }
    data.update(overrides)
    return data


def with_state(name: str, state: Any, **overrides: Any) -> dict[str, Any]:
    data = loop(**overrides)
    data["states"][name] = state
    return data


def messages(problems: list[ValidationError], severity: str | None = None) -> list[str]:
    return [str(p) for p in problems if severity is None or p.severity == severity]


def check_text(text: str) -> list[str]:
    report = check_document(load_text(textwrap.dedent(text), "loop.yaml"))
    return messages(report.problems())


# --- the raw definition ------------------------------------------------------------------


def test_valid_definition_has_no_problems() -> None:
    assert validate_definition(loop()) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            loop(max_iteration=5),
            "loop 'demo' > max_iteration: unknown key (did you mean max_iterations?)",
        ),
        (
            loop(goal="green"),
            "loop 'demo' > goal: unknown key (allowed: name, initial, states, paradigm, "
            "context, parameters, scope, max_iterations, backoff, timeout, idle_timeout, "
            "max_cost_usd, maintain, worktree, llm, archive, stall, "
            + "".join(f"{key}, " for key in BY_OPTIONS_KEY)  # claude, and each agent's
            + "agent, agents, "
            "notify, retry, "
            "rate_limit, circuit, artifact_versioning, commit, sandbox, max_steps, on_max_steps, "
            "on_max_iterations, import, fragments, from, flow, state_defs, "
            + ", ".join(RUN_LOOP_KEYS)
            + ", description, category, labels, visibility, commands, input_key, "
            "required_inputs, *_ok flags)",
        ),
        (
            with_state("check", {"action": "x", "on_sucess": "done", "next": "done"}),
            "loop 'demo' > states > check > on_sucess: unknown key (did you mean on_success?)",
        ),
        (
            loop(llm={"max_token": 10}),
            "loop 'demo' > llm > max_token: unknown key (did you mean max_tokens?)",
        ),
        (
            loop(max_iterations="ten"),
            "loop 'demo' > max_iterations: expected a whole number >= 1, got 'ten'",
        ),
        (
            loop(max_iterations=True),
            "loop 'demo' > max_iterations: expected a whole number >= 1, got true",
        ),
        (
            loop(max_iterations=2.5),
            "loop 'demo' > max_iterations: expected a whole number >= 1, got 2.5",
        ),
        (
            loop(max_iterations=0),
            "loop 'demo' > max_iterations: expected a whole number >= 1, got 0",
        ),
        (loop(timeout=0), "loop 'demo' > timeout: expected a number > 0, got 0"),
        (
            loop(timeout=float("inf")),
            "loop 'demo' > timeout: expected a number > 0 (a finite one), got inf",
        ),
        (
            loop(max_iterations=1000.0),
            "loop 'demo' > max_iterations: expected a whole number >= 1, got 1000.0 "
            "(write it as 1000)",
        ),
        (loop(backoff=-1), "loop 'demo' > backoff: expected a number >= 0, got -1"),
        (loop(maintain="no"), "loop 'demo' > maintain: expected true or false, got 'no'"),
        (loop(scope="src/"), "loop 'demo' > scope: expected a list of strings, got 'src/'"),
        (
            loop(scope=["src", 3]),
            "loop 'demo' > scope: expected a list of strings, got 3 in it (quote it as written)",
        ),
        (loop(context=["a"]), "loop 'demo' > context: expected a mapping, got a list"),
        (
            loop(llm={"max_tokens": 0}),
            "loop 'demo' > llm > max_tokens: expected a whole number >= 1, got 0",
        ),
        (
            loop(llm={"enabled": "false"}),
            "loop 'demo' > llm > enabled: expected true or false, got 'false'",
        ),
        (loop(llm={"model": ""}), "loop 'demo' > llm > model: expected a non-empty string, got ''"),
        (loop(llm=None), "loop 'demo' > llm: expected a mapping, got null"),
        (
            loop(initial=3),
            "loop 'demo' > initial: expected a string, got the number 3 (quote it as written)",
        ),
        (loop(states=[]), "loop 'demo' > states: expected a mapping, got a list"),
        (loop(states={}), "loop 'demo' > states: expected at least one state"),
        (
            with_state("check", {"action": "x", "next": "done", "capture": "a.b"}),
            "loop 'demo' > states > check > capture: expected a name of letters, digits, '_' and "
            "'-', got 'a.b'",
        ),
        (
            with_state("check", {"action": ["pytest"], "next": "done"}),
            "loop 'demo' > states > check > action: expected a string, got a list",
        ),
        (
            with_state("check", {"action": True, "next": "done"}),
            "loop 'demo' > states > check > action: expected a string, got true "
            '(write it as a string: "true")',
        ),
        (
            with_state("check", {"action": 42, "next": "done"}),
            "loop 'demo' > states > check > action: expected a string, got the number 42 "
            "(quote it as written)",
        ),
        (
            with_state("check", {"action": "x", "terminal": None}),
            "loop 'demo' > states > check > terminal: expected true or false, got null",
        ),
        (
            with_state("check", {"action": "x", "next": 5}),
            "loop 'demo' > states > check > next: expected a string, got the number 5 "
            "(quote it as written)",
        ),
        (
            with_state("check", {"action": "x", "route": {}}),
            "loop 'demo' > states > check > route: expected at least one 'verdict: state' entry",
        ),
        (
            with_state("check", {"action": "x", "route": {"success": ["done"]}}),
            "loop 'demo' > states > check > route > success: expected a state name, got a list",
        ),
        (
            with_state(7, {"terminal": True}),  # type: ignore[arg-type]
            "loop 'demo' > states > 7: a state name must be a string, got 7 (quote it)",
        ),
        (
            with_state("done", None),
            "loop 'demo' > states > done: expected a mapping of state settings, got null",
        ),
    ],
)
def test_definition_errors_name_loop_state_and_key(data: dict[str, Any], message: str) -> None:
    assert messages(validate_definition(data)) == [message]


def test_missing_name_is_reported_without_a_loop_name() -> None:
    data = loop()
    del data["name"]
    problems = validate_definition(data)
    assert messages(problems) == ["missing required key 'name'"]
    assert problems[0].key == "name"
    assert problems[0].loop is None


def test_a_non_mapping_definition_is_one_error() -> None:
    assert messages(validate_definition(["a"])) == [  # type: ignore[arg-type]
        "the top level must be a mapping of loop settings"
    ]


def evaluate_state(**evaluate: Any) -> dict[str, Any]:
    return with_state("check", {"action": "x", "evaluate": evaluate, "next": "done"})


@pytest.mark.parametrize(
    ("evaluate", "message"),
    [
        (
            {"type": "output_numeric", "operator": "le"},
            "missing required key 'target' (the output_numeric evaluator needs operator "
            "and target)",
        ),
        (
            {"type": "output_numeric", "target": 1},
            "missing required key 'operator' (the output_numeric evaluator needs "
            "operator and target)",
        ),
        (
            {"type": "output_json", "path": ".a", "operator": "eq"},
            "missing required key 'target' (the output_json evaluator needs path and "
            "operator and target)",
        ),
        (
            {"type": "output_contains"},
            "missing required key 'pattern' (the output_contains evaluator needs pattern)",
        ),
        (
            {"type": "convergence", "target": None},
            "missing required key 'target' (the convergence evaluator needs target)",
        ),
        ({"operator": "eq"}, "missing required key 'type'"),
    ],
)
def test_evaluator_specific_required_fields(evaluate: dict[str, Any], message: str) -> None:
    problems = validate_definition(evaluate_state(**evaluate))
    assert messages(problems) == [f"loop 'demo' > states > check > evaluate: {message}"]
    assert problems[0].key == message.split("'")[1]
    assert problems[0].state == "check"


@pytest.mark.parametrize(
    "evaluate",
    [
        {"type": "exit_code"},
        {"type": "output_numeric", "operator": "le", "target": 5},
        {"type": "output_numeric", "operator": "le", "target": 2.5},
        {"type": "output_numeric", "operator": "le", "target": "5"},
        {"type": "output_numeric", "operator": "ge", "target": "${context.target}"},
        {"type": "output_json", "path": ".summary.failed", "operator": "eq", "target": 0},
        {"type": "output_json", "path": ".status", "operator": "eq", "target": "passed"},
        {"type": "output_json", "path": ".ok", "operator": "eq", "target": True},
        {"type": "output_contains", "pattern": "passed", "negate": True},
        {"type": "convergence", "target": 0, "tolerance": 0.5, "direction": "maximize"},
        {"type": "convergence", "target": "${context.t}", "tolerance": "${context.tol}"},
        {"type": "llm_structured", "min_confidence": 0, "uncertain_suffix": True},
        {"type": "llm_structured", "min_confidence": 1, "schema": {"type": "object"}},
        {"type": "llm_structured", "prompt": "Did it work?", "min_confidence": 0.7},
    ],
)
def test_well_formed_evaluators_pass(evaluate: dict[str, Any]) -> None:
    assert validate_definition(evaluate_state(**evaluate)) == []


@pytest.mark.parametrize(
    ("evaluate", "key", "message"),
    [
        (
            {"type": "output_numeric", "operator": "gte", "target": 1},
            "operator",
            "expected one of eq, ne, lt, le, gt, ge, got 'gte' (did you mean gt?)",
        ),
        (
            {"type": "output_numeric", "operator": "le", "target": "five"},
            "target",
            "expected a number or a ${...} reference, got 'five'",
        ),
        (
            {"type": "output_numeric", "operator": "le", "target": True},
            "target",
            "expected a number or a ${...} reference, got true",
        ),
        (
            {"type": "output_json", "path": ".a", "operator": "eq", "target": [1]},
            "target",
            "expected a string, number or true/false, got a list",
        ),
        (
            {"type": "convergence", "target": 0, "direction": "down"},
            "direction",
            "expected one of minimize, maximize, got 'down'",
        ),
        (
            {"type": "convergence", "target": 0, "tolerance": -1},
            "tolerance",
            "expected a number >= 0, got -1",
        ),
        (
            {"type": "llm_structured", "min_confidence": 1.5},
            "min_confidence",
            "expected a number from 0 to 1, got 1.5",
        ),
        (
            {"type": "llm_structured", "min_confidence": -0.1},
            "min_confidence",
            "expected a number from 0 to 1, got -0.1",
        ),
        (
            {"type": "llm_structured", "min_confidence": "high"},
            "min_confidence",
            "expected a number from 0 to 1, got 'high'",
        ),
        (
            {"type": "llm_structured", "schema": "verdict"},
            "schema",
            "expected a mapping, got 'verdict'",
        ),
        (
            {"type": "output_contains", "pattern": "x", "negate": "yes"},
            "negate",
            "expected true or false, got 'yes'",
        ),
        (
            {"type": "llm"},
            "type",
            "expected one of exit_code, output_numeric, output_json, output_contains, "
            "convergence, llm_structured, mcp_result, classify, diff_stall, score_stall, "
            "open_question_stall, harbor_scorer, got 'llm' (did you mean llm_structured?)",
        ),
    ],
)
def test_evaluator_field_errors(evaluate: dict[str, Any], key: str, message: str) -> None:
    problems = validate_definition(evaluate_state(**evaluate))
    assert messages(problems, "error") == [
        f"loop 'demo' > states > check > evaluate > {key}: {message}"
    ]


def test_fields_an_evaluator_does_not_read_are_warnings() -> None:
    problems = validate_definition(evaluate_state(type="exit_code", target=3, pattern="x"))
    assert messages(problems) == [
        "loop 'demo' > states > check > evaluate > target: not used by the exit_code evaluator",
        "loop 'demo' > states > check > evaluate > pattern: not used by the exit_code evaluator",
    ]
    assert {p.severity for p in problems} == {"warning"}


def test_null_means_unset_for_optional_fields() -> None:
    data = loop(context=None, scope=None, backoff=None, timeout=None)
    data["states"]["fix"].update(capture=None, evaluate=None, on_error=None, timeout=None)
    assert validate_definition(data) == []


def test_route_verdicts_are_free_form_but_must_be_strings() -> None:
    data = with_state(
        "check", {"action": "x", "route": {"blocked": "done", "_": "fix", True: "done"}}
    )
    assert messages(validate_definition(data)) == [
        "loop 'demo' > states > check > route > True: a verdict must be a string, got true "
        "(quote it)"
    ]


def test_loop_name_must_be_a_plain_file_name() -> None:
    assert messages(validate_definition(loop(name="a/b"))) == [
        "loop 'a/b' > name: expected a name of at most 200 letters, digits, '.', '_' and '-', "
        "got 'a/b'"
    ]


@pytest.mark.parametrize(
    ("table", "cls"),
    [
        (LOOP_KEYS, FSMLoop),
        (STATE_KEYS, StateConfig),
        (EVALUATE_KEYS, EvaluateConfig),
        (LLM_KEYS, LLMConfig),
        (NOTIFY_KEYS, NotifyConfig),
    ],
)
def test_checked_keys_are_the_dataclass_fields(table: dict[str, Any], cls: type) -> None:
    # ... and the other spellings of keys (definition/model/spellings.py), read into those fields;
    # the reuse keys are resolved while the file is read: listed, never in the model.
    others = {each.theirs for each in SPELLINGS if each.level == STATE and cls is StateConfig}
    reuse = {FSMLoop: list(REUSE_LOOP_CHECKS), StateConfig: list(REUSE_STATE_CHECKS)}
    resolved = reuse.get(cls, [])
    assert [key for key in table if key not in others and key not in resolved] == model_keys(cls)
    assert set(resolved) <= set(table)


def test_every_evaluator_key_is_checked_and_every_checked_key_is_read() -> None:
    assert set(EVALUATE_KEY_NAMES) == set(EVALUATE_KEYS)
    for spec in SPECS.values():
        assert set(spec.required) <= set(spec.keys), spec.name
        assert set(spec.interpolated) <= set(spec.keys), spec.name


# --- the state machine ---------------------------------------------------------------------


def graph(data: dict[str, Any]) -> list[ValidationError]:
    assert validate_definition(data) == []
    return check_graph(FSMLoop.from_dict(data))


def test_graph_of_a_valid_loop_is_clean() -> None:
    assert graph(loop()) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            loop(initial="chek"),
            "loop 'demo' > initial: 'chek' is not a state (did you mean check?)",
        ),
        (
            loop(initial="zzz"),
            "loop 'demo' > initial: 'zzz' is not a state (states: check, fix, done)",
        ),
        (
            with_state("done", {"action": "x", "next": "check"}),
            "loop 'demo' > states: no terminal state (mark at least one with terminal: true)",
        ),
        (
            with_state("fix", {"action": "x", "next": "chekc"}),
            "loop 'demo' > states > fix > next: 'chekc' is not a state (did you mean check?)",
        ),
        (
            with_state("fix", {"action": "x", "route": {"failure": "fixx", "_": "check"}}),
            "loop 'demo' > states > fix > route > failure: 'fixx' is not a state (did "
            "you mean fix?)",
        ),
        (
            with_state("fix", {"action": "x", "route": {"success": "check", "_error": "alrt"}}),
            "loop 'demo' > states > fix > route > _error: 'alrt' is not a state "
            "(states: check, fix, done)",
        ),
        (
            with_state("fix", {"action": "x", "on_success": "check", "on_error": "dne"}),
            "loop 'demo' > states > fix > on_error: 'dne' is not a state (did you mean done?)",
        ),
        (
            with_state("fix", {"action": "make"}),
            "loop 'demo' > states > fix: dead end: not terminal and no way out (add next, route, "
            "on_success/on_failure/on_error, or terminal: true)",
        ),
        (
            with_state("done", {"terminal": True, "on_success": "check"}),
            "loop 'demo' > states > done > on_success: contradicts terminal: true (a terminal "
            "state ends the loop)",
        ),
        (
            with_state("done", {"terminal": True, "route": {"_": "check"}}),
            "loop 'demo' > states > done > route: contradicts terminal: true (a terminal state "
            "ends the loop)",
        ),
        (
            with_state("fix", {"evaluate": {"type": "exit_code"}, "next": "check"}),
            "loop 'demo' > states > fix > evaluate: nothing to evaluate: the state has no action "
            "and evaluate has no source",
        ),
        (
            with_state("fix", {"action": "echo ${context.dir}", "next": "check"}),
            "loop 'demo' > states > fix > action: ${context.dir}: context has no key 'dir'",
        ),
        (
            with_state("fix", {"action": "echo ${captured.errors.output}", "next": "check"}),
            "loop 'demo' > states > fix > action: ${captured.errors.output}: no state captures "
            "'errors'",
        ),
        (
            with_state("fix", {"action": "echo ${contxt.dir}", "next": "check"}),
            "loop 'demo' > states > fix > action: ${contxt.dir}: unknown namespace 'contxt' "
            "(did you mean context?)",
        ),
        (
            with_state("fix", {"action": "echo ${loop.elapsed_s}", "next": "check"}),
            "loop 'demo' > states > fix > action: ${loop.elapsed_s}: 'loop' has no 'elapsed_s' "
            "(did you mean elapsed_ms?)",
        ),
    ],
)
def test_graph_errors(data: dict[str, Any], message: str) -> None:
    assert messages(graph(data), "error") == [message]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            with_state("orphan", {"action": "x", "next": "done"}),
            "loop 'demo' > states > orphan: unreachable from the initial state 'check'",
        ),
        (
            with_state("fix", {"action": "x", "next": "fix"}),
            "loop 'demo' > states > fix: no path from here to a terminal state: the loop can only "
            "stop at max_iterations",
        ),
        (
            with_state("fix", {"action": "x", "next": "check", "on_failure": "done"}),
            "loop 'demo' > states > fix > on_failure: never used: next always moves on to 'check' "
            "(only on_error is used, when the action fails)",
        ),
        (
            with_state("fix", {"action": "x", "route": {"_": "check"}, "on_success": "done"}),
            "loop 'demo' > states > fix > on_success: ignored: route decides where this state goes",
        ),
        (
            with_state("fix", {"action": "x", "next": "check", "on_maintain": "check"}),
            "loop 'demo' > states > fix > on_maintain: only used by terminal states",
        ),
        (
            with_state("done", {"terminal": True, "on_maintain": "check"}),
            "loop 'demo' > states > done > on_maintain: unused: the loop does not set "
            "maintain: true",
        ),
        (
            with_state("fix", {"action": "/usr/bin/make all", "next": "check"}),
            "loop 'demo' > states > fix > action: '/usr/bin/make' looks like a file path, but an "
            "action starting with '/' is sent to Claude as a slash command; add action_type: "
            "shell to run it in bash",
        ),
    ],
)
def test_graph_warnings(data: dict[str, Any], message: str) -> None:
    problems = graph(data)
    assert messages(problems) == [message]
    assert problems[0].severity == "warning"


def test_current_token_and_dynamic_targets_are_accepted() -> None:
    data = with_state(
        "fix",
        {"action": "x", "route": {"failure": "$current", "success": "${context.next}"}},
        context={"next": "check"},
    )
    data["states"]["orphan"] = {"action": "x", "next": "done"}
    # A ${...} target is only known at run time, so reachability is not judged at all.
    assert graph(data) == []


def test_maintain_restarts_count_for_reachability() -> None:
    data = loop(maintain=True)
    data["states"]["done"] = {"terminal": True, "on_maintain": "again"}
    data["states"]["again"] = {"action": "x", "next": "check"}
    assert graph(data) == []


def test_references_that_resolve_are_not_reported() -> None:
    data = loop(context={"dir": "src", "cmd": "mypy ${context.dir}"})
    data["states"]["check"].update(action="${context.cmd} ${env.HOME} $HOME ${HOME}", capture="out")
    data["states"]["fix"]["action"] = "echo ${captured.out} ${prev.output} ${state.name} '$${x.y}'"
    assert graph(data) == []


# --- models built in Python -----------------------------------------------------------------


def model(**states: StateConfig) -> FSMLoop:
    return FSMLoop(
        name="built",
        initial="check",
        states=states
        or {
            "check": StateConfig(action="pytest", on_success="done", on_failure="check"),
            "done": StateConfig(terminal=True),
        },
    )


def test_validate_fsm_accepts_a_good_model() -> None:
    assert validate_fsm(model()) == []


def test_validate_fsm_checks_field_types_of_a_hand_built_model() -> None:
    fsm = model()
    fsm.max_iterations = "ten"  # type: ignore[assignment]
    fsm.states["done"].terminal = "yes"  # type: ignore[assignment]
    fsm.states["check"].evaluate = EvaluateConfig(type="bogus")  # type: ignore[arg-type]
    assert messages(validate_fsm(fsm)) == [
        "loop 'built' > max_iterations: expected a whole number >= 1, got 'ten'",
        "loop 'built' > states > check > evaluate > type: expected one of exit_code, "
        "output_numeric, output_json, output_contains, convergence, llm_structured, mcp_result, "
        "classify, diff_stall, score_stall, open_question_stall, harbor_scorer, got 'bogus'",
        "loop 'built' > states > done > terminal: expected true or false, got 'yes'",
    ]


def test_validate_fsm_checks_object_types() -> None:
    fsm = model()
    fsm.states["check"] = {"action": "x"}  # type: ignore[assignment]
    assert messages(validate_fsm(fsm)) == [
        "loop 'built' > states > check: expected a state's settings, got a mapping"
    ]
    fsm = model()
    fsm.states["check"].route = {"ok": "done"}  # type: ignore[assignment]
    assert messages(validate_fsm(fsm)) == [
        "loop 'built' > states > check > route: expected verdict routes, got a mapping"
    ]
    assert messages(validate_fsm("loop")) == ["expected a loop definition, got 'loop'"]  # type: ignore[arg-type]
    fsm = model()
    fsm.llm = None  # type: ignore[assignment]
    fsm.states["check"].evaluate = []  # type: ignore[assignment]
    assert messages(validate_fsm(fsm)) == [
        "loop 'built' > llm: expected the llm settings, got null",
        "loop 'built' > states > check > evaluate: expected evaluator settings, got a list",
    ]
    fsm.states = 3  # type: ignore[assignment]
    assert messages(validate_fsm(fsm)) == [
        "loop 'built' > states: expected a mapping of states, got 3"
    ]


def test_validate_fsm_runs_graph_checks() -> None:
    fsm = model(
        check=StateConfig(action="x", route=RouteConfig(routes={"success": "dn"})),
        done=StateConfig(terminal=True),
    )
    assert messages(validate_fsm(fsm), "error") == [
        "loop 'built' > states > check > route > success: 'dn' is not a state (did you mean done?)"
    ]


# --- files ---------------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "loop.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


GOOD = """\
    name: good
    initial: check
    llm:
      model: "${DEFAULT_LLM_MODEL}"
    states:
      check:
        action: pytest
        on_success: done
        on_failure: check
      done:
        terminal: true
    """


def test_load_and_validate_returns_the_model(tmp_path: Path) -> None:
    fsm = load_and_validate(write(tmp_path, GOOD))
    assert fsm.name == "good"
    assert fsm.states["check"].on_failure == "check"
    # The design doc writes the default model as a token; it means DEFAULT_LLM_MODEL.
    assert fsm.llm.model == DEFAULT_LLM_MODEL


def test_load_and_validate_raises_with_every_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        name: bad
        initial: check
        max_iterations: ten
        states:
          check:
            action: pytest
            on_sucess: done
          done:
            terminal: "yes"
        """,
    )
    with pytest.raises(LoopValidationError) as info:
        load_and_validate(path)
    assert str(info.value) == (
        f"{path}:3: loop 'bad' > max_iterations: expected a whole number >= 1, got 'ten' "
        "(and 2 more)"
    )
    assert [e.line for e in info.value.errors] == [3, 7, 9]
    assert isinstance(info.value, LoopDefinitionError)


def test_load_and_validate_reports_unreadable_files_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(LoopFileError, match=r"^.*missing\.yaml: no such file$"):
        load_and_validate(tmp_path / "missing.yaml")
    with pytest.raises(LoopFileError, match=r"loop\.yaml:3:1: YAML syntax error: "):
        load_and_validate(write(tmp_path, "name: x\nstates: [\n"))


def test_warnings_do_not_stop_a_load(tmp_path: Path) -> None:
    text = GOOD.replace("    states:\n", "    states:\n      spare:\n        next: done\n")
    report = check_file(write(tmp_path, text))
    assert messages(report.warnings) == [
        "loop 'good' > states > spare: unreachable from the initial state 'check'"
    ]
    assert report.valid
    assert load_and_validate(write(tmp_path, text)).states["spare"].next == "done"


def test_problems_carry_the_line_of_their_key() -> None:
    report = check_document(
        load_text(
            textwrap.dedent(
                """\
                name: lines
                initial: a
                states:
                  a:
                    action: x
                    evaluate:
                      type: output_numeric
                      operator: le
                    next: b
                  b:
                    terminal: true
                    bogus: 1
                """
            ),
            "lines.yaml",
        )
    )
    assert [(p.line, p.key) for p in report.problems()] == [(6, "target"), (12, "bogus")]


def test_graph_checks_wait_until_fields_are_well_formed() -> None:
    # `on_sucess` would otherwise also make `check` a dead end.
    assert check_text(
        """\
        name: typo
        initial: check
        states:
          check:
            action: x
            on_sucess: done
          done:
            terminal: true
        """
    ) == ["loop 'typo' > states > check > on_sucess: unknown key (did you mean on_success?)"]


def test_paradigm_fsm_is_checked_as_a_plain_loop() -> None:
    text = """\
        paradigm: fsm
        name: direct
        initial: check
        states:
          check:
            action: x
            on_success: done
            on_failure: check
          done:
            terminal: true
        """
    assert check_text(text) == []
    assert check_text(text.replace("on_failure", "on_falure")) == [
        "loop 'direct' > states > check > on_falure: unknown key (did you mean on_failure?)"
    ]


def test_a_paradigm_that_is_not_a_string_is_a_field_error() -> None:
    assert check_text(
        """\
        paradigm: [goal]
        name: odd
        initial: a
        states:
          a:
            terminal: true
        """
    ) == ["loop 'odd' > paradigm: expected a string, got a list"]


# --- robustness ------------------------------------------------------------------------------

_KEYS = st.sampled_from(
    [*LOOP_KEYS, *STATE_KEYS, *EVALUATE_KEYS, "_", "_error", "a", "b", "$current"]
)
_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.sampled_from(["a", "b", "", "$current", "${context.a}", *EVALUATOR_TYPES, "eq"]),
)
_DATA = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(_KEYS, st.integers()), inner, max_size=5),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": _LEAF, "initial": _LEAF},
        optional={
            "states": st.dictionaries(st.sampled_from(["a", "b"]), _DATA, max_size=3),
            "llm": _DATA,
            "context": _DATA,
            "max_iterations": _LEAF,
        },
    )
)
def test_any_definition_gives_problems_not_exceptions(data: dict[str, Any]) -> None:
    problems = validate_definition(data)
    assert all(isinstance(p, ValidationError) and str(p) for p in problems)
    if not any(p.severity == "error" for p in problems):
        fsm = FSMLoop.from_dict(data)
        check_graph(fsm)
        assert not [p for p in validate_fsm(fsm) if p.message.startswith("expected")]


def test_an_empty_verdict_is_an_error() -> None:
    data = with_state("check", {"action": "x", "route": {"": "done", "_": "fix"}})
    assert messages(validate_definition(data)) == [
        "loop 'demo' > states > check > route > : a verdict must be a non-empty string"
    ]


# --- paradigm files ---------------------------------------------------------------------------
# The paradigm compilers live in little_loops.fsm.paradigms (the next stage of the pipeline);
# these tests put a small stand-in compiler in their place to check how validation uses it.


def _stand_in_compilers(monkeypatch: pytest.MonkeyPatch, compile_paradigm: Any) -> None:
    monkeypatch.setattr(registry, "compile_paradigm", compile_paradigm)


GOAL = """\
    paradigm: goal
    name: goal-types
    goal: No type errors
    tools: [/ll:check_code types, /ll:manage_issue bug fix]
    """


def test_a_paradigm_file_is_compiled_then_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    def compile_paradigm(spec: dict[str, Any]) -> FSMLoop:
        seen.append(spec)
        return FSMLoop.from_dict(
            {
                "name": spec["name"],
                "paradigm": spec["paradigm"],
                "initial": "evaluate",
                "states": {
                    "evaluate": {"action": spec["tools"][0], "on_success": "done"},
                    "fix": {"action": spec["tools"][1], "next": "evaluat"},
                    "done": {"terminal": True},
                },
            }
        )

    _stand_in_compilers(monkeypatch, compile_paradigm)
    report = check_document(load_text(textwrap.dedent(GOAL), "goal.yaml"))
    assert seen[0]["goal"] == "No type errors"
    assert messages(report.problems()) == [
        "loop 'goal-types' > states > fix > next: 'evaluat' is not a state (did you mean "
        "evaluate?)",
        "loop 'goal-types' > states > fix: unreachable from the initial state 'evaluate'",
        # The error does not hide the warnings: every finding comes in one pass.
        "loop 'goal-types' > states > evaluate: verdicts 'blocked' and 'partial' (llm_structured,"
        ' default schema) have no route: the loop would stop here with "no valid transition";'
        " on_success/on_failure cannot route them: use a route table with an entry for each"
        " verdict (or _: STATE for the rest)",
    ]
    assert report.fsm is None


def test_compiler_errors_become_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_paradigm(spec: dict[str, Any]) -> FSMLoop:
        raise LoopDefinitionError("missing required key 'goal'")

    _stand_in_compilers(monkeypatch, compile_paradigm)
    report = check_document(load_text(textwrap.dedent(GOAL), "goal.yaml"))
    assert messages(report.errors) == ["loop 'goal-types' > paradigm: missing required key 'goal'"]
    assert report.errors[0].line == 1


def test_an_evaluator_type_that_is_a_list_or_map_is_reported_not_a_crash() -> None:
    for kind, shown in (([], "a list"), ({"a": 1}, "a mapping")):
        problems = validate_definition(evaluate_state(type=kind))
        assert messages(problems)[0].startswith(
            "loop 'demo' > states > check > evaluate > type: expected one of exit_code, "
        )
        assert messages(problems)[0].endswith(f"got {shown}")


def test_loop_name_longer_than_a_file_name_allows_is_refused() -> None:
    assert messages(validate_definition(loop(name="a" * 201))) == [
        f"loop '{'a' * 201}' > name: expected a name of at most 200 letters, digits, '.', '_' "
        f"and '-', got '{'a' * 201}'"
    ]
    assert messages(validate_definition(loop(name="a" * 200))) == []


def test_a_reference_written_wrong_is_a_warning() -> None:
    data = loop()
    data["states"]["check"]["action"] = "echo ${ captured.out.output } ${state}"
    fsm = FSMLoop.from_dict(data)
    assert [str(p) for p in validate_fsm(fsm) if "not a reference" in str(p)] == [
        "loop 'demo' > states > check > action: ${ captured.out.output } is not a reference "
        "(write ${namespace.path} with no spaces, e.g. ${captured.NAME.output}); it would "
        "reach the action unchanged"
    ]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (
            {"properties": {"verdict": {"enum": ["a"]}}},
            "expected type: object (the judge answers with an object holding its verdict), "
            "got type: null",
        ),
        (
            {"type": "object", "properties": {"verdict": {"enum": []}}},
            "the verdict enum is empty: list the verdicts the judge may give",
        ),
        (
            {"type": "object", "properties": {"verdict": {"enum": ["a", 1]}}},
            "the verdict enum must list names (strings), got 1 (quote it): the judge's "
            "verdict is text, routed by name",
        ),
        (
            {"type": "object", "properties": {"verdict": {"enum": ["a", ["b"]]}}},
            "the verdict enum must list names (strings), got a list: the judge's verdict is "
            "text, routed by name",
        ),
    ],
)
def test_a_judge_schema_must_be_one_the_judge_can_answer(
    schema: dict[str, object], problem: str
) -> None:
    data = with_state(
        "check",
        {"action": "/x", "evaluate": {"type": "llm_structured", "schema": schema}, "next": "done"},
    )
    assert messages(validate_definition(data)) == [
        f"loop 'demo' > states > check > evaluate > schema: {problem}"
    ]


@pytest.mark.parametrize(
    ("evaluate", "key"),
    [
        ("{type: output_json, path: '${context.nokey}', operator: eq, target: 1}", "path"),
        ("{type: output_json, path: .a, operator: eq, target: '${context.nokey}'}", "target"),
        ("{type: output_contains, pattern: '${context.nokey}'}", "pattern"),
        ("{type: convergence, target: 0, tolerance: '${context.nokey}'}", "tolerance"),
        ("{type: exit_code, source: '${context.nokey}'}", "source"),
    ],
)
def test_an_unknown_reference_is_an_error_in_every_key_an_evaluator_interpolates(
    evaluate: str, key: str
) -> None:
    text = (
        "name: t\ninitial: a\ncontext: {key: x}\nstates:\n"
        f"  a: {{action: 'echo 1', evaluate: {evaluate}, next: done}}\n"
        "  done: {terminal: true}\n"
    )
    report = check_document(load_text(text, "loop.yaml"))
    errors = [str(p) for p in report.problems() if p.severity == "error"]
    assert errors == [
        f"loop 't' > states > a > evaluate > {key}: ${{context.nokey}}: context has no key "
        "'nokey' (did you mean key?)"
        "; declare it under context: or parameters:, or write ${context.KEY?}, or run with --compat"
    ]


@pytest.mark.parametrize(
    ("notify", "message"),
    [
        (
            {"webhook": "https://example.com/hook", "on": ["done", "budgt"]},
            "loop 'demo' > notify > on: expected one of done, terminal_failure, failed, "
            "max_iterations, max_steps, timeout, "
            "handoff, handoff_ended, budget, interrupted, stopped, stall, awaiting_approval, "
            "terminal, error, got 'budgt' (did you mean budget?)",
        ),
        (
            {"webhook": "ftp://example.com/hook"},
            "loop 'demo' > notify > webhook: expected an http:// or https:// URL, "
            "got 'ftp://example.com...'",
        ),
        (
            {"webhook": "http://127.0.0.1:99999/hook?token=t"},
            "loop 'demo' > notify > webhook: expected a URL with a valid host and port "
            # The path and query (here a token) are never shown.
            "(Port out of range 0-65535), got 'http://127.0.0.1:99999...'",
        ),
        (
            {"webhook": "http://[::1/hook"},
            "loop 'demo' > notify > webhook: expected a URL with a valid host and port "
            "(Invalid IPv6 URL), got 'http://[::1...'",
        ),
        (
            {"webhook": "https://example.com/hook\x01"},
            "loop 'demo' > notify > webhook: expected a URL without spaces or control "
            "characters, got 'https://example.com...'",
        ),
        (
            {"command": "true", "retries": 11},
            "loop 'demo' > notify > retries: expected a whole number from 0 to 10, got 11",
        ),
        (
            {"command": "true", "timout": 5},
            "loop 'demo' > notify > timout: unknown key (did you mean timeout?)",
        ),
        (
            {"on": ["done"]},
            "loop 'demo' > notify: expected a command or a webhook (or both) to notify",
        ),
    ],
)
def test_notify_settings_are_checked(notify: dict[str, Any], message: str) -> None:
    assert messages(validate_definition(loop(notify=notify))) == [message]


def test_notify_settings_read_back_as_written() -> None:
    text = textwrap.dedent(
        """\
        name: demo
        initial: done
        states:
          done:
            terminal: true
        notify:
          command: echo "$LL_LOOP_OUTCOME"
          on: [done, failed]
          retries: 0
        """
    )
    fsm = FSMLoop.from_dict(load_text(text).data)
    assert fsm.notify == NotifyConfig(
        command='echo "$LL_LOOP_OUTCOME"', on=["done", "failed"], retries=0
    )
    assert FSMLoop.from_dict(load_text(dump_fsm_yaml(fsm)).data) == fsm
