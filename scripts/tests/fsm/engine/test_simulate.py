"""Simulation: paths, passes and endings as the executor has them, with nothing run."""

from __future__ import annotations

from dataclasses import dataclass, field
from textwrap import dedent
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import DATA

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.engine.executor import ActionResult, FSMExecutor
from little_loops.fsm.engine.simulate import SimulationResult, simulate
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.validate.loopfile import check_document

DOC_LOOPS = DATA / "doc_loops"


def doc_loop(name: str) -> FSMLoop:
    return FSMLoop.from_dict(load_file(DOC_LOOPS / f"{name}.yaml").data)


def loop(text: str) -> FSMLoop:
    report = check_document(load_text(dedent(text), "loop.yaml"))
    assert report.fsm is not None, report.errors
    return report.fsm


def trail(result: SimulationResult) -> list[tuple[str, int, str | None, str | None]]:
    return [(s.state, s.iteration, s.verdict, s.target) for s in result.steps]


def test_fix_types_path() -> None:
    result = simulate(doc_loop("fix-types"), {"check": ["failure", "success"], "fix": ["success"]})
    assert trail(result) == [
        ("check", 1, "failure", "fix"),
        ("fix", 1, "success", "check"),
        ("check", 2, "success", "done"),
        ("done", 2, None, None),
    ]
    assert [s.reason for s in result.steps] == [
        "on_failure",
        "on_success",
        "on_success",
        "terminal",
    ]
    assert [s.verdict_from for s in result.steps] == ["scripted", "scripted", "scripted", None]
    assert [s.action for s in result.steps] == [
        "mypy src/",
        "/ll:manage_issue bug fix",
        "mypy src/",
        None,
    ]
    assert [s.action_type for s in result.steps] == ["shell", "prompt", "shell", None]
    assert (result.terminated_by, result.final_state, result.iterations) == ("terminal", "done", 2)
    assert result.exit_code == 0
    assert result.path == ["check", "fix", "check", "done"]
    assert result.notes == ["this path calls Claude: 1 prompt action and 1 LLM evaluation"]


def test_passes_end_when_a_state_comes_round_again_and_max_iterations_stops() -> None:
    fsm = loop("""\
        name: cycle
        initial: a
        max_iterations: 2
        states:
          a:
            action: echo a
            next: b
          b:
            action: echo b
            on_failure: a
            on_success: done
          done:
            terminal: true
        """)
    result = simulate(fsm, {}, default="failure")
    assert trail(result) == [
        ("a", 1, None, "b"),
        ("b", 1, "failure", "a"),
        ("a", 2, None, "b"),
        ("b", 2, "failure", "a"),
    ]
    assert result.terminated_by == "max_iterations"
    assert result.message == "max_iterations (2) reached in 'a'"
    assert (result.iterations, result.final_state, result.exit_code) == (2, "a", 3)
    assert [s.verdict_from for s in result.steps] == [None, "default", None, "default"]


def test_current_retries_count_iterations() -> None:
    fsm = loop("""\
        name: flaky
        initial: test
        states:
          test:
            action: pytest tests/integration/
            route:
              success: done
              failure: $current
              _error: $current
          done:
            terminal: true
        max_iterations: 3
        """)
    result = simulate(fsm, {"test": ["failure", "error", "success"]})
    assert trail(result) == [
        ("test", 1, "failure", "test"),
        ("test", 2, "error", "test"),
        ("test", 3, "success", "done"),
        ("done", 3, None, None),
    ]
    assert [s.reason for s in result.steps[:2]] == [
        "route 'failure' ($current)",
        "route '_error' ($current)",
    ]
    again = simulate(fsm, {"test": ["failure"] * 5})
    assert (again.terminated_by, again.iterations, len(again.steps)) == ("max_iterations", 3, 3)
    assert again.unused == {"test": ["failure", "failure"]}


def test_maintain_restart_begins_a_new_pass() -> None:
    fsm = doc_loop("code-quality-guardian")
    fsm.max_iterations = 2
    result = simulate(fsm, {}, default="success")
    assert trail(result) == [
        ("check_tests", 1, "success", "check_lint"),
        ("check_lint", 1, "success", "check_types"),
        ("check_types", 1, "success", "all_valid"),
        ("all_valid", 1, None, "check_tests"),
        ("check_tests", 2, "success", "check_lint"),
        ("check_lint", 2, "success", "check_types"),
        ("check_types", 2, "success", "all_valid"),
        ("all_valid", 2, None, "check_tests"),
    ]
    assert result.steps[3].reason == "maintain restart"
    assert result.terminated_by == "max_iterations"
    assert result.message == "max_iterations (2) reached in 'check_tests'"


def test_an_unrouted_verdict_fails_like_the_executor() -> None:
    result = simulate(doc_loop("fix-types"), {"check": ["failure"], "fix": ["partial"]})
    assert trail(result) == [("check", 1, "failure", "fix"), ("fix", 1, "partial", None)]
    assert result.terminated_by == "error"
    assert result.message == "no valid transition from 'fix' for verdict 'partial'"
    assert result.exit_code == 1


def test_a_used_up_script_stops_without_a_default() -> None:
    result = simulate(doc_loop("fix-types"), {"check": ["failure"]})
    assert trail(result) == [("check", 1, "failure", "fix"), ("fix", 1, None, None)]
    assert result.terminated_by == "script_exhausted"
    assert result.message == "no scripted verdict left for 'fix' and no --default"
    assert result.exit_code == 2
    second = simulate(doc_loop("fix-types"), {"check": ["failure"], "fix": ["success"]})
    assert second.message == (
        "no scripted verdict left for 'check' (scripted: failure) and no --default"
    )


def test_default_fills_in_and_impossible_verdicts_are_noted() -> None:
    result = simulate(doc_loop("reduce-errors"), {"measure": ["progress"]}, default="success")
    assert [s.verdict for s in result.steps] == ["progress", None, "success"]
    assert result.steps[2].notes == [
        "'success' is not a verdict this state can give (convergence: target, progress, stall, "
        "error)"
    ]
    assert result.message == "no valid transition from 'measure' for verdict 'success'"


FIRST = (
    "echo '${prev.output}|${state.name}|${state.iteration}|${loop.name}|${context.target}|"
    "$${context.dir}|${env.HOME}|${loop.elapsed}|$HOME'"
)
SECOND = (
    "echo ${captured.first.exit_code} ${captured.later.output} ${prev.state} ${prev.verdict} "
    "${prev.output} ${result.verdict}"
)
INTERPOLATING = f"""\
    name: interp
    initial: first
    context:
      dir: src
      target: ${{context.dir}}/out
    states:
      first:
        action: "{FIRST}"
        capture: first
        on_success: second
        on_failure: second
      second:
        action: {SECOND}
        on_success: later
        on_failure: later
      later:
        action: echo ${{captured.first.output}}
        capture: later
        on_success: done
        on_failure: done
      done:
        terminal: true
    """


def test_actions_show_what_simulation_knows_and_keep_the_rest() -> None:
    result = simulate(loop(INTERPOLATING), {}, default="success")
    first, second, later, _ = result.steps
    # prev is empty before any state has finished; env and time are not known (nor printed).
    # A shell action shows the values its script reads, then the script.
    assert first.action.splitlines() == [
        "LL_V_1=''",
        "LL_V_2=first",
        "LL_V_3=1",
        "LL_V_4=interp",
        "LL_V_5=src/out",
        "echo ''\"${LL_V_1}\"'|'\"${LL_V_2}\"'|'\"${LL_V_3}\"'|'\"${LL_V_4}\"'|'\"${LL_V_5}\"'"
        "|${context.dir}|${env.HOME}|${loop.elapsed}|$HOME'",
    ]
    assert first.notes == []
    assert second.action.splitlines() == [
        "LL_V_1=first",
        "LL_V_2=success",
        "LL_V_3=success",
        'echo ${captured.first.exit_code} ${captured.later.output} "${LL_V_1}" "${LL_V_2}" '
        '${prev.output} "${LL_V_3}"',
    ]
    assert second.notes == [
        "${captured.later.output}: nothing is captured as 'later' yet on this path; the run "
        "would fail here (undefined variable)"
    ]
    assert later.action == "echo ${captured.first.output}"
    assert later.notes == []


def test_result_before_any_evaluation_is_noted() -> None:
    fsm = loop("""\
        name: early
        initial: a
        states:
          a:
            action: echo ${result.verdict}
            on_success: done
            on_failure: done
          done:
            terminal: true
        """)
    result = simulate(fsm, {}, default="success")
    assert result.steps[0].action == "echo ${result.verdict}"
    assert result.steps[0].notes == [
        "${result.verdict}: no evaluation result yet; the run would fail here"
    ]


DYNAMIC = """\
    name: dynamic
    initial: pick
    context:
      goto: fix
    states:
      pick:
        action: echo fix
        capture: choice
        route:
          success: ${context.goto}
          failure: ${captured.choice.output}
      fix:
        action: make
        next: done
      done:
        terminal: true
    """


def test_targets_from_context_are_followed_and_run_time_targets_stop() -> None:
    fsm = loop(DYNAMIC)
    result = simulate(fsm, {"pick": ["success"]})
    assert result.path == ["pick", "fix", "done"]
    assert result.steps[0].target == "fix"
    assert result.terminated_by == "terminal"
    stopped = simulate(fsm, {"pick": ["failure"]})
    assert stopped.terminated_by == "unresolved_target"
    assert stopped.message == (
        "route target '${captured.choice.output}' of 'pick' is only known when the loop runs"
    )
    assert stopped.exit_code == 2
    fsm.context["goto"] = "nowhere"
    illegal = simulate(fsm, {"pick": ["success"]})
    assert illegal.terminated_by == "error"
    assert illegal.message == (
        "illegal transition pick → nowhere: 'nowhere' is not a declared state (verdict 'success')"
    )


def test_limits_that_cannot_be_simulated_are_noted() -> None:
    fsm = doc_loop("fix-all-types")  # backoff: 2
    fsm.timeout = 600
    fsm.max_cost_usd = 5
    result = simulate(fsm, {"check_done": ["failure", "failure", "success"]})
    assert result.iterations == 3
    assert result.notes == [
        "this path calls Claude: 6 prompt actions",
        "backoff: the run would wait 4.0s in all (2 × 2s)",
        "timeout (10m 0s) not simulated: no action runs, so no time passes",
        "max_cost_usd (5) not simulated: nothing is spent",
    ]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            {"chek": ["success"]},
            "--verdicts: 'chek' is not a state of loop 'fix-types' (did you mean check?)",
        ),
        (
            {"done": ["success"]},
            "--verdicts: state 'done' is not evaluated (it is terminal), so it takes no verdicts",
        ),
        ({"check": ["success", ""]}, "--verdicts: state 'check' has an empty verdict"),
    ],
)
def test_bad_scripts_are_refused(script: dict[str, list[str]], message: str) -> None:
    with pytest.raises(LoopDefinitionError) as info:
        simulate(doc_loop("fix-types"), script)
    assert str(info.value) == message


def test_a_next_state_takes_no_verdicts() -> None:
    with pytest.raises(LoopDefinitionError) as info:
        simulate(doc_loop("fix-all-types"), {"step_0": ["success"]})
    assert str(info.value) == (
        "--verdicts: state 'step_0' is not evaluated (it has next:), so it takes no verdicts"
    )


def test_max_steps_bounds_the_walk() -> None:
    result = simulate(doc_loop("code-quality-guardian"), {}, default="success", max_steps=5)
    assert len(result.steps) == 5
    assert result.terminated_by == "max_steps"
    assert result.exit_code == 10  # as a run stopped by the loop's max_steps exits


def test_restarts_between_terminal_states_end_at_max_iterations() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "spin",
            "initial": "a",
            "maintain": True,
            "max_iterations": 3,
            "states": {
                "a": {"action": "echo a", "terminal": True, "on_maintain": "b"},
                "b": {"terminal": True},
            },
        }
    )
    result = simulate(fsm, {})
    assert result.path == ["a", "b", "a", "b"]
    assert (result.terminated_by, result.iterations) == ("max_iterations", 3)


# --- the simulation agrees with the executor ------------------------------------------

EXIT_CODES = {"success": 0, "failure": 1, "error": 2}


@dataclass
class ExitCodeRunner:
    """Answers each action (named after its state) with the next scripted exit code."""

    script: dict[str, list[str]]
    default: str
    used: dict[str, int] = field(default_factory=dict)

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        state = action.split()[-1]
        items = self.script.get(state, [])
        index = self.used.get(state, 0)
        self.used[state] = index + 1
        verdict = items[index] if index < len(items) else self.default
        return ActionResult(output="", stderr="", exit_code=EXIT_CODES[verdict], duration_ms=1)


@st.composite
def loops_and_scripts(draw: Any) -> tuple[FSMLoop, dict[str, list[str]], str]:
    count = draw(st.integers(2, 5))
    names = [f"s{i}" for i in range(count)]
    terminals = draw(st.sets(st.sampled_from(names), min_size=1, max_size=2))
    target = st.sampled_from([*names, "$current"])
    states: dict[str, Any] = {}
    for name in names:
        state: dict[str, Any] = {"action": f"echo {name}"}
        if name in terminals:
            state["terminal"] = True
        elif draw(st.booleans()):
            state["next"] = draw(st.sampled_from(names))
        else:
            for key in ("on_success", "on_failure", "on_error"):
                if draw(st.booleans()):
                    state[key] = draw(target)
            if not any(k in state for k in ("on_success", "on_failure", "on_error")):
                state["on_success"] = draw(target)
        states[name] = state
    initial = draw(st.sampled_from(names))
    data = {
        "name": "random",
        "initial": initial,
        "states": states,
        "max_iterations": draw(st.integers(1, 6)),
        # A restart at a terminal state never ends (see test_restart_at_a_terminal_state).
        "maintain": initial not in terminals and draw(st.booleans()),
    }
    verdict = st.sampled_from(list(EXIT_CODES))
    evaluated = [n for n in names if "next" not in states[n] and n not in terminals]
    script = {n: draw(st.lists(verdict, max_size=4)) for n in evaluated}
    return FSMLoop.from_dict(data), script, draw(verdict)


@settings(max_examples=150, deadline=None)
@given(loops_and_scripts())
def test_simulation_walks_the_executors_path(
    case: tuple[FSMLoop, dict[str, list[str]], str],
) -> None:
    fsm, script, default = case
    events: list[dict[str, Any]] = []
    executor = FSMExecutor(fsm, events.append, ExitCodeRunner(script, default))
    ran = executor.run()
    simulated = simulate(fsm, script, default, max_steps=1000)
    entered = [(e["state"], e["iteration"]) for e in events if e["event"] == "state_enter"]
    assert [(s.state, s.iteration) for s in simulated.steps] == entered
    assert simulated.terminated_by == ran.terminated_by
    assert simulated.iterations == ran.iterations
    assert simulated.final_state == ran.final_state
    if ran.error is not None:
        assert ran.error.startswith(simulated.message)


def test_shell_actions_show_the_script_and_the_values_it_reads() -> None:
    fsm = loop("""\
        name: quoting
        initial: a
        context:
          title: "it's done"
          cmd: echo pasted
        states:
          a:
            action: echo ${context.title} '${context.title}' && ${raw:context.cmd}
            next: b
          b:
            action: /note ${context.title}
            next: done
          done:
            terminal: true
        """)
    first, second, _ = simulate(fsm, {}, default="success").steps
    assert first.action.splitlines() == [
        "LL_V_1='it'\\''s done'",
        "LL_V_2='it'\\''s done'",
        "echo \"${LL_V_1}\" ''\"${LL_V_2}\"'' && echo pasted",
    ]
    assert second.action == "/note it's done"


def test_a_shell_action_the_run_would_refuse_is_a_note() -> None:
    fsm = loop("""\
        name: refused
        initial: a
        context:
          v: x
        states:
          a:
            action: echo $(( ${context.v} + 1 ))
            next: done
          done:
            terminal: true
        """)
    first, _ = simulate(fsm, {}, default="success").steps
    assert first.action == "echo $(( ${context.v} + 1 ))"
    assert first.notes == [
        "the run would fail here: ${context.v}: 'x' is not an integer, in bash arithmetic"
    ]
