"""Static analysis: every rule has a loop that trips it and one that does not."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from support.paths import DATA, REPO, SHIPPED_LOOPS
from support.project import LoopProject

from little_loops.fsm.definition.checks.analysis import analyze, successors
from little_loops.fsm.definition.graph.verdicts import state_verdicts
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.evaluators.llm_structured import DEFAULT_LLM_SCHEMA, DEFAULT_LLM_VERDICTS
from little_loops.fsm.validate.loopfile import check_document

STOP = 'the loop would stop here with "no valid transition"'
INJECTION = (
    "pastes text this loop does not control into a bash command as it is (raw: turns quoting "
    "off): a quote in it breaks the command, and $(...) or ; in it runs as code; write "
)


def problems(text: str, severity: str | None = None) -> list[str]:
    """`severity: message` of every problem `validate` finds in the loop *text*."""
    report = check_document(load_text(dedent(text), "loop.yaml"))
    return [
        f"{p.line}: {p.severity}: {p}"
        for p in report.problems()
        if severity is None or p.severity == severity
    ]


# --- verdict coverage -----------------------------------------------------------------


def test_default_verdicts_match_the_judges_schema() -> None:
    assert list(DEFAULT_LLM_VERDICTS) == DEFAULT_LLM_SCHEMA["properties"]["verdict"]["enum"]


def test_exit_code_success_without_a_route() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            on_failure: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "4: warning: loop 'demo' > states > check: verdict 'success' (exit_code) has no route: "
        f"{STOP}; add on_success: STATE"
    ]
    assert (
        problems(text.replace("on_failure: done", "on_failure: done\n    on_success: done")) == []
    )


def test_an_unrouted_failure_is_a_deliberate_stop() -> None:
    # Leaving `failure` unrouted is how a loop fails its run (exit 1), e.g. a CI gate.
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            on_success: done
          done:
            terminal: true
        """)
    assert problems(text) == []


def test_route_keys_the_evaluator_never_gives() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            route:
              sucess: done
              failure: check
              target: done
          done:
            terminal: true
        """)
    # Errors: the state machine is wrong, so the run-time analysis waits for a fix.
    assert problems(text) == [
        "7: error: loop 'demo' > states > check > route > sucess: route key 'sucess' is never "
        "given by exit_code (it gives success, failure, error); did you mean 'success'?"
        "; use a verdict it gives, remove the key, or set partial_route_ok: true, "
        "or run with --compat",
        "9: error: loop 'demo' > states > check > route > target: route key 'target' is never "
        "given by exit_code (it gives success, failure, error); use a verdict it gives, "
        "remove the key, or set partial_route_ok: true, or run with --compat",
    ]
    fixed = text.replace("sucess:", "success:").replace(
        "      target: done\n", "      error: done\n"
    )
    assert problems(fixed) == []


def test_llm_route_keys_may_be_the_no_llm_fallback() -> None:
    # `ll-loop run --no-llm` judges an llm_structured state by exit code: success/failure.
    text = dedent("""\
        name: demo
        initial: analyze
        states:
          analyze:
            action: /ll:audit
            evaluate:
              type: llm_structured
              schema: {type: object, properties: {verdict: {enum: [found, none]}}}
            route:
              found: done
              none: done
              success: done
              failure: done
              _error: done
          done:
            terminal: true
        """)
    assert problems(text) == []
    assert problems(text.replace("failure: done", "fuond: done")) == [
        "13: error: loop 'demo' > states > analyze > route > fuond: route key 'fuond' is never "
        "given by llm_structured (it gives found, none, error); did you mean 'found'?"
        "; use a verdict it gives, remove the key, or set partial_route_ok: true, "
        "or run with --compat"
    ]


def test_default_llm_schema_gives_blocked_and_partial() -> None:
    text = dedent("""\
        name: demo
        initial: fix
        states:
          fix:
            action: /ll:manage_issue bug fix
            on_success: done
            on_failure: fix
          done:
            terminal: true
        """)
    assert problems(text) == [
        "4: warning: loop 'demo' > states > fix: verdicts 'blocked' and 'partial' "
        f"(llm_structured, default schema) have no route: {STOP}; on_success/on_failure cannot "
        "route them: use a route table with an entry for each verdict (or _: STATE for the rest)"
    ]
    routed = text.replace(
        "    on_success: done\n    on_failure: fix\n",
        "    route:\n      success: done\n      failure: fix\n      blocked: done\n"
        "      partial: fix\n",
    )
    assert problems(routed) == []


def test_llm_disabled_judges_prompts_by_exit_code() -> None:
    text = dedent("""\
        name: demo
        initial: fix
        llm:
          enabled: false
        states:
          fix:
            action: /ll:manage_issue bug fix
            on_success: done
            on_failure: fix
          done:
            terminal: true
        """)
    assert problems(text) == []


def test_convergence_stall_without_a_route() -> None:
    text = dedent("""\
        name: demo
        initial: measure
        states:
          measure:
            action: echo 3
            evaluate:
              type: convergence
              target: 0
              previous: "${prev.output}"
            route:
              target: done
              progress: measure
          done:
            terminal: true
        """)
    assert problems(text) == [
        "10: warning: loop 'demo' > states > measure > route: verdict 'stall' (convergence) has "
        f"no route and there is no '_' default: {STOP}; add it or _: STATE to route"
    ]
    assert problems(text.replace("progress: measure", "progress: measure\n      stall: done")) == []


def test_custom_schema_enum_and_uncertain_suffix() -> None:
    text = dedent("""\
        name: demo
        initial: analyze
        states:
          analyze:
            action: /ll:audit_architecture patterns
            evaluate:
              type: llm_structured
              uncertain_suffix: true
              schema:
                type: object
                properties:
                  verdict:
                    type: string
                    enum: [found, none]
            route:
              found: done
              none: done
              _error: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "15: warning: loop 'demo' > states > analyze > route: verdicts 'found_uncertain' and "
        "'none_uncertain' (llm_structured, uncertain_suffix) have no route and there is no '_' "
        f"default: {STOP}; add them or _: STATE to route"
    ]
    assert problems(text.replace("      _error: done", "      _error: done\n      _: done")) == []


def test_schema_without_a_verdict_enum_is_not_judged() -> None:
    text = dedent("""\
        name: demo
        initial: analyze
        states:
          analyze:
            action: /ll:audit_architecture patterns
            evaluate:
              type: llm_structured
              schema: {type: object, properties: {verdict: {type: string}}}
            route:
              anything: done
              _error: done
          done:
            terminal: true
        """)
    assert problems(text) == []


def test_a_state_without_action_or_evaluate_only_succeeds() -> None:
    text = dedent("""\
        name: demo
        initial: start
        states:
          start:
            on_success: done
          done:
            terminal: true
        """)
    assert problems(text) == []
    fsm = FSMLoop.from_dict(load_text(dedent(text), "x").data)
    found = state_verdicts(fsm, fsm.states["start"])
    assert found is not None
    assert found.verdicts == ("success",)
    assert state_verdicts(fsm, fsm.states["done"]) is None


def test_catch_all_does_not_catch_error() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            route:
              success: done
              _: check
          done:
            terminal: true
        """)
    assert problems(text) == [
        "8: warning: loop 'demo' > states > check > route > _: '_' does not catch the 'error' "
        "verdict (exit code 2 or more, a timeout, a missing command): with no error: or _error: "
        'in route, an error stops the loop with "no valid transition"; add _error: STATE if the '
        "loop should go on"
    ]
    assert problems(text.replace("_: check", "_: check\n      _error: done")) == []
    assert problems(text.replace("_: check", "_: check\n      error: done")) == []


def test_unrouted_error_is_not_warned_in_a_loop_that_ends() -> None:
    # Stopping on an error is the design's default, and the safe one: no warning.
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            on_success: done
            on_failure: check
          done:
            terminal: true
        """)
    assert problems(text) == []


def test_maintain_loop_that_an_error_would_end() -> None:
    text = dedent("""\
        name: demo
        initial: check
        maintain: true
        states:
          check:
            action: pytest
            on_success: done
            on_failure: fix
          fix:
            action: /ll:manage_issue bug fix
            next: check
          done:
            terminal: true
        """)
    assert problems(text) == [
        "3: warning: loop 'demo' > maintain: maintain: true keeps this loop running, but an "
        "'error' verdict (exit code 2 or more, a timeout, a failed LLM call) in 'check' has no "
        'route and stops it with "no valid transition"; add on_error: or _error: where it '
        "should recover"
    ]
    assert problems(text.replace("on_failure: fix", "on_failure: fix\n    on_error: fix")) == []


def test_maintain_restart_at_a_terminal_state_is_a_warning() -> None:
    text = dedent("""\
        name: demo
        initial: check
        maintain: true
        states:
          check:
            action: pytest
            on_success: done
            on_failure: check
            on_error: check
          done:
            action: echo done
            terminal: true
            on_maintain: report
          report:
            action: echo report
            terminal: true
            on_maintain: done
        """)
    assert problems(text, "error") == []
    assert problems(text, "warning") == [
        "13: warning: loop 'demo' > states > done > on_maintain: maintain: true restarts at "
        "'report', which is terminal: the loop goes round done → report → done, running only "
        "terminal actions, one iteration each, until max_iterations ends it; restart at a "
        "state that is not terminal"
    ]
    assert problems(text.replace("on_maintain: done", "on_maintain: check"), "warning") == []


# --- reachability (graph_checks) ------------------------------------------------------


def test_unreachable_state() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            on_success: done
            on_failure: check
          spare:
            action: echo hi
            next: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "8: warning: loop 'demo' > states > spare: unreachable from the initial state 'check'"
    ]
    assert problems(text.replace("on_failure: check", "on_failure: spare")) == []


def test_state_that_cannot_reach_a_terminal_state() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: pytest
            on_success: done
            on_failure: spin
          spin:
            action: sleep 1
            next: spin
          done:
            terminal: true
        """)
    assert problems(text) == [
        "8: warning: loop 'demo' > states > spin: no path from here to a terminal state: the "
        "loop can only stop at max_iterations"
    ]
    assert problems(text.replace("next: spin", "next: check")) == []


def test_successors_follow_maintain_restarts_and_current() -> None:
    fsm = FSMLoop.from_dict(load_file(DATA / "doc_loops" / "code-quality-guardian.yaml").data)
    graph = successors(fsm)
    assert graph["all_valid"] == ["check_tests"]
    assert graph["fix_tests"] == ["check_tests"]
    retry = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "states": {
                "a": {"action": "x", "route": {"failure": "$current", "success": "${context.t}"}},
                "b": {"terminal": True},
            },
        }
    )
    assert successors(retry) == {"a": ["a"], "b": []}


# --- used before set ------------------------------------------------------------------

CAPTURE_LOOP = dedent("""\
    name: demo
    initial: check
    states:
      check:
        action: pytest
        on_success: done
        on_failure: fix
      fix:
        action: mypy src/
        capture: errors
        next: report
      report:
        action: exit ${captured.errors.exit_code}
        on_success: done
        on_failure: done
      done:
        terminal: true
    """)


def test_captured_used_on_a_path_that_skips_the_capture() -> None:
    text = CAPTURE_LOOP.replace(
        "on_success: done\n    on_failure: fix", "on_success: report\n    on_failure: fix"
    )
    assert problems(text) == [
        "13: warning: loop 'demo' > states > report > action: ${captured.errors.exit_code}: the "
        "loop can reach here (check → report) before any state captures 'errors', and then the "
        "reference fails as an undefined variable"
    ]
    assert problems(CAPTURE_LOOP) == []


def test_capture_is_available_to_its_own_evaluate_and_routes_but_not_its_action() -> None:
    text = dedent("""\
        name: demo
        initial: count
        states:
          count:
            action: echo ${captured.n.output}
            capture: n
            evaluate:
              type: output_numeric
              source: "${captured.n.output}"
              operator: eq
              target: 0
            on_success: done
            on_failure: count
            on_error: done
          done:
            terminal: true
        """)
    assert problems(text, "warning")[:1] == [
        "5: warning: loop 'demo' > states > count > action: ${captured.n.output}: the loop can "
        "reach here (count) before any state captures 'n', and then the reference fails as an "
        "undefined variable"
    ]
    safe = text.replace("action: echo ${captured.n.output}", "action: echo 3")
    assert problems(safe) == []


def test_capture_on_a_state_without_action_is_never_set() -> None:
    text = dedent("""\
        name: demo
        initial: start
        states:
          start:
            capture: x
            next: use
          use:
            action: exit ${captured.x.exit_code}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "8: warning: loop 'demo' > states > use > action: ${captured.x.exit_code}: the loop can "
        "reach here (start → use) before any state captures 'x', and then the reference fails as "
        "an undefined variable"
    ]


def test_result_before_any_evaluation() -> None:
    text = dedent("""\
        name: demo
        initial: prepare
        states:
          prepare:
            action: make
            next: note
          note:
            action: echo ${result.verdict}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "8: warning: loop 'demo' > states > note > action: ${result.verdict}: the loop can reach "
        "here (prepare → note) before any state has been evaluated, and then the reference fails "
        '("no evaluation result yet")'
    ]
    evaluated = text.replace("    next: note", "    on_success: note\n    on_failure: note")
    assert problems(evaluated) == []


def test_references_through_context_values_are_followed() -> None:
    text = dedent("""\
        name: demo
        initial: prepare
        context:
          message: "errors: ${captured.errors.exit_code}"
        states:
          prepare:
            action: echo ${context.message}
            on_success: measure
            on_failure: measure
          measure:
            action: mypy src/
            capture: errors
            on_success: done
            on_failure: prepare
          done:
            terminal: true
        """)
    assert problems(text) == [
        "7: warning: loop 'demo' > states > prepare > action: ${captured.errors.exit_code} "
        "(through ${context.message}): the loop can reach here (prepare) before any state "
        "captures 'errors', and then the reference fails as an undefined variable"
    ]


# --- interpolation namespaces and context (errors) ------------------------------------


def test_undefined_context_key_is_an_error() -> None:
    text = dedent("""\
        name: demo
        initial: check
        context:
          src: src/
        states:
          check:
            action: mypy ${context.source}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "7: error: loop 'demo' > states > check > action: ${context.source}: context has no key "
        "'source' (did you mean src?)"
        "; declare it under context: or parameters:, or write ${context.KEY?}, or run with --compat"
    ]
    assert problems(text.replace("context.source", "context.src")) == []


def test_unknown_namespace_is_an_error() -> None:
    text = dedent("""\
        name: demo
        initial: check
        states:
          check:
            action: mypy ${ctx.src}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "5: error: loop 'demo' > states > check > action: ${ctx.src}: unknown namespace 'ctx' "
        "(did you mean context?)"
    ]
    assert problems(text.replace("${ctx.src}", "${env.SRC} ${SRC:-src}")) == []


# --- shell injection ------------------------------------------------------------------

INJECTION_LOOP = dedent("""\
    name: demo
    initial: lint
    states:
      lint:
        action: ruff check src/ --output-format concise
        capture: lint
        on_success: done
        on_failure: report
      report:
        action: ACTION
        on_success: done
        on_failure: done
      done:
        terminal: true
    """)


@pytest.mark.parametrize(
    ("action", "ref"),
    [
        ("echo ${raw:captured.lint.output}", "${captured.lint.output}"),
        ("echo '${raw:captured.lint}' | notify", "${captured.lint}"),
        ('echo "${raw:prev.output}"', "${prev.output}"),
        ('echo "${raw:prev.stderr}"', "${prev.stderr}"),
        ("echo ${raw:env.HOME}", "${env.HOME}"),
    ],
)
def test_untrusted_text_pasted_raw_into_a_shell_command(action: str, ref: str) -> None:
    assert problems(INJECTION_LOOP.replace("ACTION", action)) == [
        f"10: warning: loop 'demo' > states > report > action: {ref} {INJECTION}{ref} to "
        "have it quoted"
    ]


@pytest.mark.parametrize(
    "action",
    [
        "echo ${captured.lint.output} ${env.HOME}",
        "echo '${captured.lint}' | notify",
        'echo "${prev.output}" "${prev.stderr}"',
        "\"echo 'Blocked: ${result.details.reason}'\"",
    ],
)
def test_untrusted_text_quoted_in_a_shell_command_is_safe(action: str) -> None:
    assert problems(INJECTION_LOOP.replace("ACTION", action)) == []


def test_raw_reached_through_a_context_value() -> None:
    text = INJECTION_LOOP.replace("ACTION", "notify ${raw:context.msg}")
    text = text.replace("states:\n", "context:\n  msg: 'lint: ${captured.lint}'\nstates:\n")
    assert problems(text) == [
        "12: warning: loop 'demo' > states > report > action: ${captured.lint} (through "
        f"${{raw:context.msg}}) {INJECTION}${{context.msg}} to have it quoted"
    ]
    assert problems(text.replace("${raw:context.msg}", "${context.msg}")) == []


@pytest.mark.parametrize(
    "action",
    [
        "exit ${captured.lint.exit_code}",  # a number
        "echo ${prev.state} ${prev.verdict} ${prev.exit_code} ${captured.lint.duration_ms}",
        "echo ${context.dir} ${env.HOME} ${state.iteration}",
        "echo ${raw:captured.lint.exit_code} ${raw:context.dir} ${raw:state.iteration}",
    ],
)
def test_trusted_values_in_shell_commands(action: str) -> None:
    text = INJECTION_LOOP.replace("ACTION", action)
    text = text.replace("states:\n", "context:\n  dir: src\nstates:\n")
    assert problems(text) == []


def test_output_in_a_prompt_is_not_a_shell_injection() -> None:
    # A prompt goes to claude as one argument; no shell parses it.
    text = INJECTION_LOOP.replace("ACTION", "/ll:explain ${captured.lint.output}")
    text = text.replace(
        "    on_success: done\n    on_failure: done\n  done:",
        "    route:\n      _: done\n      _error: done\n  done:",
    )
    assert problems(text) == []


def test_evaluation_details_pasted_raw_into_a_shell_command() -> None:
    text = INJECTION_LOOP.replace("ACTION", "\"echo 'Blocked: ${raw:result.details.reason}'\"")
    assert problems(text) == [
        "10: warning: loop 'demo' > states > report > action: ${result.details.reason} "
        f"{INJECTION}${{result.details.reason}} to have it quoted"
    ]


def test_verdicts_are_text_when_a_schema_has_no_enum() -> None:
    text = dedent("""\
        name: demo
        initial: judge
        states:
          judge:
            action: /ll:judge
            evaluate:
              type: llm_structured
              schema: {type: object, properties: {verdict: {type: string}}}
            route:
              _: report
              _error: done
          report:
            action: echo ${raw:prev.verdict}
            next: done
          done:
            terminal: true
        """)
    assert problems(text) == [
        "13: warning: loop 'demo' > states > report > action: ${prev.verdict} "
        f"{INJECTION}${{prev.verdict}} to have it quoted"
    ]


# --- the design doc's own examples ----------------------------------------------------

DOC_LOOPS = DATA / "doc_loops"
EXAMPLES = sorted(DOC_LOOPS.glob("*.yaml")) + sorted((DATA / "paradigms").glob("*.yaml"))
_GUARDIAN = (
    "maintain: true keeps this loop running, but an 'error' verdict (exit code 2 or more, a "
    "timeout, a failed LLM call) in {} has no route"
)
# True findings in the design doc's examples and the paradigm examples (see
# docs/analysis.md): the line, then where and how each message starts (the rest of each
# message is asserted by the rule tests above). A compiled paradigm state has no line.
EXPECTED_EXAMPLE_WARNINGS: dict[str, list[str]] = {
    "doc_loops/code-quality-guardian.yaml": [
        "29: loop 'code-quality-guardian' > maintain: "
        + _GUARDIAN.format("'check_tests', 'check_lint' and 'check_types'")
    ],
    "doc_loops/fix-types.yaml": ["10: loop 'fix-types' > states > fix: verdicts 'blocked' and"],
    "doc_loops/goal-no-type-errors.yaml": [
        "5: loop 'goal-no-type-errors' > states > evaluate: verdicts 'blocked' and 'partial'"
    ],
    "doc_loops/lint-fix-cycle.yaml": [
        "6: loop 'lint-fix-cycle' > states > check: verdicts 'blocked' and 'partial'"
    ],
    "doc_loops/safe-refactor.yaml": [
        "28: loop 'safe-refactor' > states > analyze > route > _: '_' does not catch",
        "41: loop 'safe-refactor' > states > refactor > route > _: '_' does not catch",
    ],
    "doc_loops/smart-fix.yaml": [
        "15: loop 'smart-fix' > states > fix > route > _: '_' does not catch",
    ],
    "paradigms/fsm.expected.yaml": [
        "4: loop 'lint-fix-cycle' > states > check: verdicts 'blocked' and 'partial'"
    ],
    "paradigms/fsm.yaml": [
        "6: loop 'lint-fix-cycle' > states > check: verdicts 'blocked' and 'partial'"
    ],
    "paradigms/goal.expected.yaml": [
        "4: loop 'goal-no-type-errors' > states > evaluate: verdicts 'blocked' and 'partial'"
    ],
    "paradigms/goal.yaml": [
        "None: loop 'goal-no-type-errors' > states > evaluate: verdicts 'blocked' and 'partial'"
    ],
    "paradigms/invariants.expected.yaml": [
        "31: loop 'code-quality-guardian' > maintain: "
        + _GUARDIAN.format("'check_tests_pass', 'check_lint_clean' and 'check_types_valid'")
    ],
    "paradigms/invariants.yaml": [
        "14: loop 'code-quality-guardian' > maintain: "
        + _GUARDIAN.format("'check_tests_pass', 'check_lint_clean' and 'check_types_valid'")
    ],
}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_loops_warnings(path: Path) -> None:
    report = check_document(load_file(path))
    assert report.errors == []
    found = [f"{p.line}: {p}" for p in report.warnings]
    expected = EXPECTED_EXAMPLE_WARNINGS.get(f"{path.parent.name}/{path.name}", [])
    assert len(found) == len(expected), found
    for line, start in zip(found, expected, strict=True):
        assert line.startswith(start)


def test_analyze_on_a_clean_model_is_empty() -> None:
    fsm = FSMLoop.from_dict(load_file(DOC_LOOPS / "test-until-pass.yaml").data)
    assert analyze(fsm) == []


def test_shipped_loops_have_no_warnings() -> None:
    for path in SHIPPED_LOOPS:
        assert check_document(load_file(path)).problems() == [], path


# --- through ll-loop validate ---------------------------------------------------------


def test_validate_prints_analysis_warnings_with_lines_and_strict_fails(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "partial",
        """\
        name: partial
        initial: fix
        states:
          fix:
            action: /ll:manage_issue bug fix
            on_success: done
            on_failure: fix
          done:
            terminal: true
        """,
    )
    message = (
        "loop 'partial' > states > fix: verdicts 'blocked' and 'partial' (llm_structured, "
        f"default schema) have no route: {STOP}; on_success/on_failure cannot route them: use a "
        "route table with an entry for each verdict (or _: STATE for the rest)"
    )
    result = loop_project.run("validate", "partial")
    assert result.code == 0
    assert result.out.splitlines() == [
        f".loops/partial.yaml:4: warning: {message}",
        ".loops/partial.yaml: ok (1 warning)",
    ]
    strict = loop_project.run("validate", "--strict", "partial")
    assert strict.code == 2
    assert strict.out == f".loops/partial.yaml:4: error: {message}\n"
    as_json = loop_project.run("validate", "--json", "partial")
    assert '"state": "fix"' in as_json.out


# --- moved from test_spend.py ---


def test_validate_warns_about_a_short_idle_timeout_on_a_claude_state() -> None:
    from little_loops.fsm.definition.reading.loader import load_text
    from little_loops.fsm.validate.loopfile import check_document

    def warnings(idle: str) -> list[str]:
        text = (
            f"name: x\ninitial: fix\nidle_timeout: 5\nstates:\n  fix:\n    action: /ll:fix\n"
            f"{idle}    on_success: check\n    on_failure: check\n    on_error: check\n"
            "  check:\n    action: make test\n    idle_timeout: 5\n    next: done\n"
            "  done:\n    terminal: true\n"
        )
        report = check_document(load_text(text, "x.yaml"))
        return [str(w) for w in report.warnings if "idle_timeout" in str(w)]

    # Shell actions may have any idle_timeout (the loop's applies to them only); a Claude
    # action's own needs room for long steps.
    assert warnings("") == []
    assert warnings("    idle_timeout: 300\n") == []
    assert warnings("    idle_timeout: 60\n") == [
        "loop 'x' > states > fix > idle_timeout: 60s is short for a Claude action: Claude "
        "Code prints a line only when a message or a tool call is finished, so a long reply "
        "or a long tool call (a test run) is silent for longer; 120s or more is safer"
    ]


def test_a_reference_bash_would_read_as_code_is_an_error() -> None:
    text = INJECTION_LOOP.replace("ACTION", "eval ${captured.lint}")
    assert problems(text) == [
        "10: error: loop 'demo' > states > report > action: ${captured.lint}: not allowed in "
        "the arguments of eval, which bash reads as code (paste it as code with "
        "${raw:captured.lint} if you mean that)"
        "; set unsafe_context_interpolation_ok: true to paste it as written, or run with --compat"
    ]
    # In backticks the value is read from a variable, so bash parsing the text again is
    # harmless now: no error.
    assert problems(INJECTION_LOOP.replace("ACTION", "echo `cat ${captured.lint}`"), "error") == []
    # A prompt is not read by bash; the raw opt-out is taken as it is (and warned about).
    prompt = text.replace("eval ", "/ll:explain ")
    assert problems(prompt, "error") == []
    raw = problems(text.replace("${captured", "${raw:captured"))
    assert [p.split(": ", 2)[1] for p in raw] == ["warning"]


def test_the_raw_and_unquotable_examples_in_the_docs_are_what_validate_says() -> None:
    docs = (REPO / "docs" / "analysis.md").read_text()
    for action in ("echo ${raw:captured.lint.output}", "eval ${captured.lint}"):
        (found,) = problems(INJECTION_LOOP.replace("ACTION", action))
        assert found.split(": ", 2)[2] in docs.splitlines()
