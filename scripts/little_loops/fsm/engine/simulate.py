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
from little_loops.fsm.definition.lint_flags import PASTE_FLAG
from little_loops.fsm.definition.model import (
    CURRENT_STATE_TOKEN,
    OUTCOME_FAILURE,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.definition.routing import resolve_route
from little_loops.fsm.definition.transitions import restart
from little_loops.fsm.engine.passes import Passes
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
)
from little_loops.fsm.engine.subloop import end_verdict
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError, LoopDefinitionError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.values.interpolation import Expansion, InterpolationContext, to_text
from little_loops.fsm.values.modifiers import has_fallback
from little_loops.fsm.values.references import ESCAPE, OPEN, reference_pattern
from little_loops.fsm.values.shellquote import UNKNOWN_VALUE, env_lines, render


def check_script(fsm: FSMLoop, verdicts: Mapping[str, Sequence[str]]) -> None:
    """Raise LoopDefinitionError when *verdicts* names a state that takes none."""
    for name, items in verdicts.items():
        parent, sep, inner = name.partition(SUBLOOP_SEPARATOR)
        if sep and parent in fsm.children:  # a state of a sub-loop state's child loop
            check_script(fsm.children[parent], {inner: items})
            continue
        if name not in fsm.states:
            hint = did_you_mean(name, fsm.states) or f" (states: {', '.join(fsm.states)})"
            raise LoopDefinitionError(
                f"--verdicts: '{name}' is not a state of loop '{fsm.name}'{hint}"
            )
        state = fsm.states[name]
        if state.terminal or state.next is not None:
            why = "it is terminal" if state.terminal else "it has next:"
            raise LoopDefinitionError(
                f"--verdicts: state '{name}' is not evaluated ({why}), so it takes no verdicts"
            )
        if any(not v for v in items):
            raise LoopDefinitionError(f"--verdicts: state '{name}' has an empty verdict")


class _Walk:
    def __init__(
        self,
        fsm: FSMLoop,
        verdicts: Mapping[str, Sequence[str]],
        default: str | None,
        max_steps: int | None,
    ) -> None:
        self.fsm = fsm
        self.script = {name: list(items) for name, items in verdicts.items()}
        self.used = dict.fromkeys(self.script, 0)
        self.default = default
        self.max_steps = max_steps
        self.steps: list[SimulatedStep] = []
        self.current = fsm.initial
        self.arrived_on_error: str | None = None  # as the executor's (engine/core.py)
        self.passes = Passes()
        self.captured: set[str] = set()
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
            notes=self.limit_notes(),
            unused=unused,
        )

    def run(self) -> SimulationResult:
        fsm = self.fsm
        while True:
            if self.max_steps is not None and len(self.steps) >= self.max_steps:
                return self.end(MAX_STEPS, f"stopped after {self.max_steps} steps (max_steps)")
            state = fsm.states[self.current]
            if self.passes.begins(self.current, state):
                if self.passes.iteration >= fsm.max_iterations:
                    return self.end(
                        MAX_ITERATIONS,
                        f"max_iterations ({fsm.max_iterations}) reached in '{self.current}'",
                    )
                self.passes.start()
            if state.terminal:
                step = self.enter(state)
                self.steps.append(step)
                way = restart(fsm, state)
                if way is None:
                    step.reason = "terminal"
                    return self.end_in_terminal(state)
                step.target, step.reason = way.target, "maintain restart"
                if way.target not in fsm.states:
                    return self.end(ERROR, self.illegal(way.target, None))
                self.current, self.arrived_on_error = way.target, None
                self.passes.restarted()
                continue
            self.passes.ran(self.current)
            step = self.enter(state)
            self.steps.append(step)
            verdict: str | None = None
            if state.next is None:
                picked = self.next_verdict() or self.child_verdict(state)
                if picked is None:
                    given = self.script.get(self.current, [])
                    used = f" (scripted: {', '.join(given)})" if given else ""
                    return self.end(
                        SCRIPT_EXHAUSTED,
                        f"no scripted verdict left for '{self.current}'{used} and no --default",
                    )
                verdict, step.verdict_from = picked
                step.verdict = verdict
                self.check_verdict(state, step)
                self.prev = {"state": self.current, "verdict": verdict}
                self.result = {"verdict": verdict}
            choice = resolve_route(state, verdict)
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
            self.current = target

    def end_in_terminal(self, state: StateConfig) -> SimulationResult:
        """The end at a terminal state: a failure when it says `outcome: failure` or the walk
        came to it on the verdict error, as the run ends (engine/core.py)."""
        if self.arrived_on_error is not None:
            return self.end(TERMINAL_FAILURE, self.arrived_on_error)
        if state.outcome == OUTCOME_FAILURE:
            message = f"reached terminal state '{self.current}' (outcome: failure)"
            return self.end(TERMINAL_FAILURE, message)
        return self.end(TERMINAL, f"reached terminal state '{self.current}'")

    def enter(self, state: StateConfig) -> SimulatedStep:
        """The step for entering the current state: its action, as far as it can be known."""
        step = SimulatedStep(self.current, self.passes.iteration)
        if state.loop is not None:
            step.action, step.action_type = f"loop {state.loop}", "loop"
            if state.capture:
                self.captured.add(state.capture)
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

    def next_verdict(self) -> tuple[str, str] | None:
        items = self.script.get(self.current, [])
        index = self.used.get(self.current, 0)
        if index < len(items):
            self.used[self.current] = index + 1
            return items[index], "scripted"
        if self.default is not None and not self.child_script():
            return self.default, "default"
        return None

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
        walk = _Walk(replace(child, context=given), script, self.default, self.max_steps)
        ended, named = walk.run(), self.current + SUBLOOP_SEPARATOR
        for key, count in walk.used.items():
            self.used[named + key] += count
        inner = [replace(s, state=named + s.state, depth=s.depth + 1) for s in ended.steps]
        self.steps[-1:-1] = inner  # shown before the sub-loop state's verdict
        verdict = end_verdict(child, ended.terminated_by, ended.final_state)
        return verdict, f"loop {child.name} ended in {ended.final_state}: {ended.terminated_by}"

    def check_verdict(self, state: StateConfig, step: SimulatedStep) -> None:
        from little_loops.fsm.definition.verdicts import state_verdicts  # not at --help

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
        ctx = InterpolationContext(
            context=self.fsm.context,
            prev=self.prev,
            result=self.result,
            state_name=self.current,
            iteration=self.passes.iteration,
            loop_name=self.fsm.name,
            env={},
        )
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
            if _known(namespace, first, self.prev):
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

    def limit_notes(self) -> list[str]:
        fsm = self.fsm
        notes: list[str] = []
        calls = [
            f"{count} {what}{'s' if count != 1 else ''}"
            for count, what in ((self.prompts, "prompt action"), (self.judged, "LLM evaluation"))
            if count
        ]
        if calls:
            notes.append(f"this path calls Claude: {' and '.join(calls)}")
        if fsm.backoff and self.passes.iteration > 1:
            waits = self.passes.iteration - 1
            total = format_duration(waits * float(fsm.backoff) * 1000)
            notes.append(f"backoff: the run would wait {total} in all ({waits} × {fsm.backoff:g}s)")
        if fsm.timeout:
            notes.append(
                f"timeout ({format_duration(int(float(fsm.timeout) * 1000))}) not simulated: "
                "no action runs, so no time passes"
            )
        if fsm.max_cost_usd is not None:
            notes.append(f"max_cost_usd ({fsm.max_cost_usd:g}) not simulated: nothing is spent")
        return notes


def _known(namespace: str, first: str, prev: Mapping[str, Any] | None) -> bool:
    """Whether a simulation knows the value of a reference (outputs, captures, time, the
    environment and evaluation details it does not; env is not printed on purpose)."""
    if namespace in ("context", "state"):
        return True
    if namespace == "loop":
        return first == "name"
    if namespace == "prev":
        return prev is None or first in ("state", "verdict")
    if namespace == "result":
        return first == "verdict"
    return False


def simulate(
    fsm: FSMLoop,
    verdicts: Mapping[str, Sequence[str]],
    default: str | None = None,
    max_steps: int | None = None,
) -> SimulationResult:
    """Walk *fsm* from its initial state with *verdicts* (state -> verdicts, used in order).

    A state whose list is used up gets *default*; with no default the walk stops
    (`script_exhausted`). Raises LoopDefinitionError when *verdicts* names a state that
    does not exist or takes no verdicts (terminal, or `next:`).
    """
    check_script(fsm, verdicts)
    return _Walk(fsm, verdicts, default, max_steps).run()
