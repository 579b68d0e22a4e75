"""Walk a loop with scripted verdicts instead of running actions: a rehearsal of its routing.

The walk follows the executor's rules exactly: the same route resolution
(`routing.resolve_route`), the same passes for `max_iterations` (`passes.Passes`), the
same handling of terminal states, `$current` and undeclared targets. Nothing runs, so
what depends on a run (output, captures, elapsed time, cost, the loop `timeout`) is not
known: references to it are shown as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from little_loops.fsm.actions.spec import Interpolation
from little_loops.fsm.definition.graph.routing import RouteChoice, error_way, resolve_route
from little_loops.fsm.definition.graph.transitions import restart
from little_loops.fsm.definition.model.endings import ends_in_failure
from little_loops.fsm.definition.model.fanout import FANOUT_ACTION_TYPE, fan_out_of, fan_out_text
from little_loops.fsm.definition.model.lint_flags import PASTE_FLAG
from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY
from little_loops.fsm.definition.model.typed import (
    CURRENT_STATE_TOKEN,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.rules import caps
from little_loops.fsm.engine.scenarios import Scenario
from little_loops.fsm.engine.simulate_branches import branch_labels, check_branch_script, joined
from little_loops.fsm.engine.simulate_notes import known, limit_notes
from little_loops.fsm.engine.simulated_output import capped, pure_verdict, simulated
from little_loops.fsm.engine.simulation import (
    ERROR,
    MAX_ITERATIONS,
    MAX_STEPS,
    SCRIPT_EXHAUSTED,
    SUBLOOP_SEPARATOR,
    TERMINAL,
    TERMINAL_FAILURE,
    UNRESOLVED_TARGET,
    SimulatedStep,
    SimulationResult,
    check_script,
)
from little_loops.fsm.engine.subloop import end_verdict
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError, LoopDefinitionError
from little_loops.fsm.facts.outcomes import Outcome, outcome_of
from little_loops.fsm.facts.verdict_words import FAILURE, canonical_verdict
from little_loops.fsm.values.interpolation import Expansion, InterpolationContext, to_text
from little_loops.fsm.values.modifiers import has_fallback
from little_loops.fsm.values.references import ESCAPE, OPEN, reference_pattern
from little_loops.fsm.values.shellquote import UNKNOWN_VALUE, env_lines, render


class _Walk:
    def __init__(
        self,
        fsm: FSMLoop,
        verdicts: Mapping[str, Sequence[str]],
        default: str | None,
        max_steps: int | None,
        scenario: Scenario | None = None,
        branches: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.fsm = fsm
        self.scenario = scenario
        self.branch_script = {name: list(items) for name, items in (branches or {}).items()}
        self.script = {name: list(items) for name, items in verdicts.items()}
        self.used = dict.fromkeys(self.script, 0)
        self.default = default
        self.max_steps = max_steps
        self.steps: list[SimulatedStep] = []
        self.current = fsm.initial
        self.arrived_on_error: str | None = None  # as the executor's (engine/core.py)
        self.passes = Passes()
        # the caps (engine/rules/caps.py): states run, repeats of the state, a cap's route
        self.ran, self.repeats = 0, 0
        self.capped: str | None = None
        self.cap_done = False
        self.captured: set[str] = set()
        # --compat: the current action's simulated output and exit code, and the captured
        # ones by name, as little-loops' simulate gives them (engine/simulated_output.py)
        self.output: tuple[str, int] = ("", 0)
        self.acted = False  # an action has run on the walk (`${prev.*}` is known)
        self.outputs: dict[str, dict[str, Any]] = {}
        self.prev: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self.prompts = 0
        self.judged = 0

    def end(self, how: str, message: str) -> SimulationResult:
        unused = {
            name: items[self.used[name] :]
            for name, items in self.script.items()
            if self.used[name] < len(items)
        }
        return SimulationResult(
            loop=self.fsm.name,
            max_iterations=self.fsm.max_iterations,
            steps=self.steps,
            terminated_by=how,
            final_state=self.current,
            iterations=self.passes.iteration,
            message=message,
            notes=limit_notes(self.fsm, self.prompts, self.judged, self.passes.iteration),
            unused=unused,
        )

    def run(self) -> SimulationResult:
        fsm = self.fsm
        while True:
            if self.max_steps is not None and len(self.steps) >= self.max_steps:
                return self.end(MAX_STEPS, f"stopped after {self.max_steps} steps (max_steps)")
            state = fsm.states[self.current]
            arrived = self.arrive(state)
            if isinstance(arrived, SimulationResult):
                return arrived
            if arrived:
                continue
            if state.terminal:
                ended = self.terminal(state)
                if ended is not None:
                    return ended
                continue
            self.passes.ran(self.current)
            self.ran += 1
            missing = self.missing_input(state)
            step = self.enter(state, runs=missing is None)
            self.acted = self.acted or (missing is None and bool(state.action))
            self.steps.append(step)
            verdict: str | None = None
            if missing is not None:  # the action cannot be written out: it does not run
                step.notes.append(missing)
                verdict, step.verdict_from = ERROR_VERDICT, "the run would fail here"
                step.verdict = verdict
                self.prev = {"state": self.current, "verdict": verdict}
                self.result = {"verdict": verdict}
            elif state.next is None:
                judged = self.verdict_of(state, step)
                if isinstance(judged, SimulationResult):
                    return judged
                verdict = judged
            choice = resolve_route(state, verdict)
            if missing is not None and state.next is not None:
                way = error_way(state)
                choice = None if way is None else RouteChoice(way.target, way.reason)
            elif state.next is not None and self.scenario is not None:
                choice = self.scenario.error_route(state) or choice
            choice = self.not_retried(state, verdict) or choice
            if choice is None:
                return self.end(
                    ERROR, f"no valid transition from '{self.current}' for verdict '{verdict}'"
                )
            if choice.target == CURRENT_STATE_TOKEN:
                target, reason = self.current, f"{choice.reason} ($current)"
            else:
                target, _ = self.render(choice.target)
                reason = choice.reason
            step.target, step.reason = target, reason
            if OPEN in target:
                return self.end(
                    UNRESOLVED_TARGET,
                    f"route target '{target}' of '{self.current}' is only known when the loop runs",
                )
            if target not in fsm.states:
                return self.end(ERROR, self.illegal(target, verdict))
            self.arrived_on_error = None
            if verdict == ERROR_VERDICT:
                self.arrived_on_error = f"reached from state '{self.current}' on the verdict error"
            self.repeats = self.repeats + 1 if target == self.current else 0
            self.cap_done = self.capped is not None
            self.current = target

    def not_retried(self, state: StateConfig, verdict: str | None) -> RouteChoice | None:
        """With --compat, as a run: an action that failed (an `error`; a `next:` state's
        failed action) with an exit code `retryable_exit_codes` leaves out goes to
        `on_retry_exhausted` at once (the exit code is the scenario's, as little-loops')."""
        code, codes = self.output[1], state.retryable_exit_codes
        if not self.fsm.theirs or self.scenario is None or state.on_retry_exhausted is None:
            return None
        if codes is None or code == 0 or code in codes:
            return None
        failed = (
            verdict == ERROR_VERDICT
            if state.next is None
            else self.scenario.error_route(state) is not None
        )
        return (
            RouteChoice(state.on_retry_exhausted, f"on_retry_exhausted (exit {code})")
            if failed
            else None
        )

    def verdict_of(self, state: StateConfig, step: SimulatedStep) -> SimulationResult | str:
        """The verdict of *state*'s step, scripted (or its child's end), read as little-loops
        reads it with --compat; the walk's end when no verdict is left for it."""
        picked = self.fan_verdict(state, step) or self.next_verdict() or self.child_verdict(state)
        if picked is None:
            given = self.script.get(self.current, [])
            used = f" (scripted: {', '.join(given)})" if given else ""
            return self.end(
                SCRIPT_EXHAUSTED,
                f"no scripted verdict left for '{self.current}'{used} and no --default",
            )
        verdict, step.verdict_from = picked
        if self.fsm.theirs and state.loop is not None and verdict == ERROR_VERDICT:
            # little-loops' rehearsal of a sub-loop: an error with no error route
            # takes the failure route
            verdict = ERROR_VERDICT if error_way(state) is not None else FAILURE
        if (
            self.fsm.theirs
            and self.scenario is not None
            and state.loop is None  # a sub-loop's verdict is its child's end
            and picked[1].startswith("scenario")
        ):  # little-loops' simulate runs the evaluator on the simulated output
            judged = pure_verdict(state, *self.output, self.evaluation_context())
            if judged is not None:
                verdict, step.verdict_from = judged
        step.verdict = verdict
        self.check_verdict(state, step)
        self.prev = {"state": self.current, "verdict": verdict}
        self.result = {"verdict": verdict}
        return verdict

    def arrive(self, state: StateConfig) -> SimulationResult | bool:
        """The caps at the arrival at *state*, as the run's (engine/rules/caps.py): the
        walk's end, True when it went elsewhere instead, False to enter the state."""
        fsm = self.fsm
        way = caps.arrived(fsm, self.current, self.ran, self.repeats, self.capped, self.cap_done)
        if way is None and self.capped is None and self.passes.begins(self.current, state):
            if self.passes.iteration >= fsm.max_iterations:
                way = caps.at_cap(fsm, MAX_ITERATIONS)
            else:
                self.passes.start()
        if isinstance(way, Outcome):
            return self.end(way, self.cap_message(way))
        if way is None:
            return False
        if way.target not in fsm.states:
            return self.end(ERROR, self.illegal(way.target, None))
        self.current, self.repeats, self.arrived_on_error = way.target, 0, None
        self.capped = None if way.cap is None else str(way.cap)
        return True

    def terminal(self, state: StateConfig) -> SimulationResult | None:
        """Enter the terminal *state*: the walk's end, or None after a maintain restart."""
        step = self.enter(state)
        self.steps.append(step)
        way = None if self.capped is not None else restart(self.fsm, state)
        if way is None:
            step.reason = "terminal"
            if self.capped is not None:  # a cap's route ended here
                return self.end(outcome_of(self.capped), self.cap_message(self.capped))
            return self.end_in_terminal(state)
        step.target, step.reason = way.target, "maintain restart"
        if way.target not in self.fsm.states:
            return self.end(ERROR, self.illegal(way.target, None))
        self.current, self.arrived_on_error = way.target, None
        self.passes.restarted()
        return None

    def cap_message(self, cap: str) -> str:
        """How a walk that ended at the loop's cap *cap* says so."""
        limit = self.fsm.max_steps if cap == MAX_STEPS else self.fsm.max_iterations
        return f"{cap} ({limit}) reached in '{self.current}'"

    def end_in_terminal(self, state: StateConfig) -> SimulationResult:
        """The end at a terminal state: a failure when it says `outcome: failure` or the walk
        came to it on the verdict error, as the run ends (engine/core.py)."""
        if self.arrived_on_error is not None:
            return self.end(TERMINAL_FAILURE, self.arrived_on_error)
        if ends_in_failure(self.current, state):
            said = "outcome: failure" if state.outcome else "a failure by its name"
            message = f"reached terminal state '{self.current}' ({said})"
            return self.end(TERMINAL_FAILURE, message)
        return self.end(TERMINAL, f"reached terminal state '{self.current}'")

    def missing_input(self, state: StateConfig) -> str | None:
        """Under `--compat`, why *state*'s action cannot run: it reads the loop's input
        (`${context.input}`) or a required parameter (but `run_dir`, the run's), with no
        fallback, and no value is given, or (a shell action) a capture not made yet on this
        path, or `${prev.*}` before any action ran. little-loops' simulate fails to write
        such an action out and takes the error route; else None."""
        fsm = self.fsm
        if not fsm.theirs or not state.action:
            return None
        shell = state.action_kind().interpolation is Interpolation.SHELL  # a script: it fails
        required = {k for k, spec in fsm.parameters.items() if spec.required}
        wanted = ({fsm.input_key} | required) - {RUN_DIR_KEY} - fsm.context.keys()
        for match in reference_pattern().finditer(state.action):
            if match.group(0) == ESCAPE or has_fallback(match):
                continue
            key = match.group("path").split(".", 1)[0].split("[", 1)[0]
            if match.group("ns") == "context" and key in wanted:
                return f"${{context.{key}}}: no value is given; the run would fail here"
            if match.group("ns") == "captured" and key not in self.captured and shell:
                return f"${{captured.{key}}}: nothing is captured yet; the run would fail here"
            if match.group("ns") == "prev" and not self.acted:
                return "${prev...}: no action has run yet; the run would fail here"
        return None

    def enter(self, state: StateConfig, runs: bool = True) -> SimulatedStep:
        """The step for entering the current state: its action, as far as it can be known
        (*runs*: whether it runs, as a scenario counts actions)."""
        step = SimulatedStep(self.current, self.passes.iteration)
        if self.scenario is not None:
            self.scenario.entered(runs and not state.terminal and bool(state.loop or state.action))
            if self.fsm.theirs:
                self.output = simulated(state, self.scenario.verdict()[0])
                if state.capture and state.action:
                    out, code = self.output
                    self.outputs[state.capture] = {"output": out, "exit_code": code}
        if state.loop is not None:
            step.action, step.action_type = f"loop {state.loop}", "loop"
            if state.capture and not self.fsm.theirs:  # little-loops' rehearsal captures none
                self.captured.add(state.capture)
        fan = fan_out_of(state)
        if fan is not None:  # its branches are not run: its verdict is scripted
            step.action, step.action_type = fan_out_text(fan), FANOUT_ACTION_TYPE
            self.captured.add(self.current)  # ${captured.STATE.*}: the fan-out's results
        if state.action:
            kind = state.action_kind()
            shell = kind.interpolation is Interpolation.SHELL and not state.is_approval()
            step.action, step.notes = self.render(state.action, shell)  # a question is text
            step.action_type = kind.action_types[0]
            if kind.agent is not None:
                self.prompts += 1
            if state.capture:
                self.captured.add(state.capture)
        if not state.terminal and state.next is None:
            from little_loops.fsm.evaluators.registry import needs_llm  # not at --help

            judge = needs_llm(state.effective_evaluate().type)
            if judge and self.fsm.llm.enabled and state.action:
                self.judged += 1
        return step

    def evaluation_context(self) -> InterpolationContext:
        """What an evaluator's `${...}` reads in the walk (--compat: the captured outputs)."""
        return self._context(self.outputs)

    def _context(self, captured: dict[str, Any] | None = None) -> InterpolationContext:
        """What `${...}` reads at this point of the walk: no environment, *captured* if given."""
        return InterpolationContext(
            context=self.fsm.context,
            captured=captured if captured is not None else {},
            prev=self.prev,
            result=self.result,
            state_name=self.current,
            iteration=self.passes.iteration,
            loop_name=self.fsm.name,
            env={},
        )

    def next_verdict(self) -> tuple[str, str] | None:
        items = self.script.get(self.current, [])
        index = self.used.get(self.current, 0)
        if index < len(items):
            self.used[self.current] = index + 1
            return items[index], "scripted"
        if self.scenario is not None and not self.child_script():
            return self.scenario.verdict()
        if self.default is not None and not self.child_script():
            return self.default, "default"
        return None

    def fan_verdict(self, state: StateConfig, step: SimulatedStep) -> tuple[str, str] | None:
        """A fan-out state given --branch-verdicts: its branches' verdicts (the same at each
        visit), joined by its `join:` as a run joins them."""
        given = self.branch_script.get(self.current)
        config = fan_out_of(state)
        if given is None or config is None:
            return None
        labels = branch_labels(config) or [""] * len(given)
        step.branches = [
            {"branch": f"#{i} {label}".rstrip(), "verdict": verdict}
            for i, (label, verdict) in enumerate(zip(labels, given, strict=True))
        ]
        return joined(config, given), f"join {config.join} of the scripted branches"

    def child_script(self) -> dict[str, list[str]]:
        """The verdicts left for states of the current sub-loop state's child, by its names."""
        prefix = self.current + SUBLOOP_SEPARATOR
        return {
            key[len(prefix) :]: items[self.used[key] :]
            for key, items in self.script.items()
            if key.startswith(prefix)
        }

    def child_verdict(self, state: StateConfig) -> tuple[str, str] | None:
        """Walk the child loop of a sub-loop state with its scripted verdicts: its end is
        the verdict (success, failure at an `outcome: failure` terminal, else error)."""
        child, script = self.fsm.children.get(self.current), self.child_script()
        if child is None or not script:
            return None
        given = {**child.context, **(state.with_ or {})}  # `${...}` values shown as written
        walk = _Walk(
            replace(child, context=given), script, self.default, self.max_steps, self.scenario
        )
        ended, named = walk.run(), self.current + SUBLOOP_SEPARATOR
        for key, count in walk.used.items():
            self.used[named + key] += count
        inner = [replace(s, state=named + s.state, depth=s.depth + 1) for s in ended.steps]
        self.steps[-1:-1] = inner  # shown before the sub-loop state's verdict
        verdict = end_verdict(child, ended.terminated_by, ended.final_state)
        return verdict, f"loop {child.name} ended in {ended.final_state}: {ended.terminated_by}"

    def check_verdict(self, state: StateConfig, step: SimulatedStep) -> None:
        from little_loops.fsm.definition.graph.verdicts import state_verdicts  # not at --help

        found = state_verdicts(self.fsm, state)
        if found is None or step.verdict is None or found.can_give(step.verdict) is not False:
            return
        possible = ", ".join([*(found.verdicts or ()), ERROR_VERDICT])
        step.notes.append(
            f"'{step.verdict}' is not a verdict this state can give ({found.source}: {possible})"
        )

    def render(self, text: str, shell: bool = False) -> tuple[str, list[str]]:
        """*text* with the references a simulation knows resolved (quoted as the run would
        quote them when *shell*: it is a shell action); notes on the others."""
        ctx = self._context()
        notes: list[str] = []
        parts: list[str] = []
        pos = 0
        values: dict[int, Any] = {}  # a known reference's value, by where it starts
        for match in reference_pattern().finditer(text):
            parts.append(text[pos : match.start()])
            pos = match.end()
            if match.group(0) == ESCAPE:
                parts.append(OPEN)
                continue
            namespace, path = match.group("ns"), match.group("path")
            ref = f"${{{namespace}.{path}}}"
            first = path.split(".", 1)[0].split("[", 1)[0]
            if has_fallback(match):
                pass  # a default (or "") stands in for what is missing
            elif namespace == "captured" and first not in self.captured:
                notes.append(
                    f"{ref}: nothing is captured as '{first}' yet on this path; the run "
                    "would fail here (undefined variable)"
                )
            elif namespace == "result" and self.result is None:
                notes.append(f"{ref}: no evaluation result yet; the run would fail here")
            piece = match.group(0)
            if known(namespace, first, self.prev):
                try:
                    values[match.start()] = Expansion(ctx).modified(match, quote=not shell)
                    piece = to_text(values[match.start()])
                except InterpolationError:
                    pass
            parts.append(piece)
        parts.append(text[pos:])
        if not shell or OPEN not in text:
            return "".join(parts), notes
        return self.shell_script(text, ctx, values, notes), notes

    def shell_script(
        self, text: str, ctx: InterpolationContext, values: dict[int, Any], notes: list[str]
    ) -> str:
        """A shell action as the run hands it to bash: the values it reads (one
        `LL_V_n=...` line each; an unknown one stays a reference), then the script."""

        def lookup(match: Any) -> Any:
            return values.get(match.start(), UNKNOWN_VALUE)

        try:
            rendered = render(
                text, ctx, lookup, paste_refused=bool(self.fsm.lint_ok.get(PASTE_FLAG))
            )
        except InterpolationError as exc:
            notes.append(f"the run would fail here: {exc}")
            return text
        return "\n".join([*env_lines(rendered.env), rendered.script])

    def illegal(self, target: str, verdict: str | None) -> str:
        return (
            f"illegal transition {self.current} → {target}: '{target}' is not a declared state "
            f"(verdict {verdict!r})"
        )


def simulate(
    fsm: FSMLoop,
    verdicts: Mapping[str, Sequence[str]],
    default: str | None = None,
    max_steps: int | None = None,
    scenario: str | None = None,
    branches: Mapping[str, Sequence[str]] | None = None,
) -> SimulationResult:
    """Walk *fsm* from its initial state with *verdicts* (state -> verdicts, used in order).

    A state whose list is used up gets *default*; with no default the walk stops
    (`script_exhausted`). Raises LoopDefinitionError when *verdicts* names a state that
    does not exist or takes no verdicts (terminal, or `next:`). *scenario* (a name of
    `scenarios.SCENARIOS`) gives the states with no scripted verdict left theirs.
    *branches* (fan-out state -> a verdict per branch) gives such a state the verdict its
    `join:` makes of them, at each visit (simulate_branches.check_branch_script).
    """
    check_script(fsm, verdicts)
    fans = check_branch_script(fsm, branches or {})
    both = sorted(set(fans) & set(verdicts))
    if both:
        raise LoopDefinitionError(
            f"--verdicts and --branch-verdicts both script state '{both[0]}': give one"
        )
    ours = {name: [canonical_verdict(v) for v in items] for name, items in verdicts.items()}
    default = None if default is None else canonical_verdict(default)  # `yes` is success
    picked = None if scenario is None else Scenario(scenario)
    if fsm.theirs:  # little-loops rehearses a loop with its max_steps at most 20
        fsm = capped(fsm)
    return _Walk(fsm, ours, default, max_steps, picked, fans).run()
