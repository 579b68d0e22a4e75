"""What a simulation gives: the states it walked, how it ended, its exit code; its script."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.outcomes import ExitCode, Outcome
from little_loops.fsm.facts.suggest import did_you_mean

# How a simulation ends, and the exit code `ll-loop simulate` returns for it. The first
# three are the executor's own terminated_by values (fsm/outcomes.py); the others are
# the walk itself not being able to go on.
TERMINAL = Outcome.TERMINAL
TERMINAL_FAILURE = Outcome.TERMINAL_FAILURE  # `outcome: failure`, or reached on the verdict error
MAX_ITERATIONS = Outcome.MAX_ITERATIONS
ERROR = Outcome.ERROR
SCRIPT_EXHAUSTED = "script_exhausted"
UNRESOLVED_TARGET = "unresolved_target"
MAX_STEPS = Outcome.MAX_STEPS  # the loop's max_steps, or the walk's own bound
# `--verdicts build/check=failure`: verdicts for state `check` of the child of state `build`.
SUBLOOP_SEPARATOR = "/"
SIMULATION_EXIT_CODES: dict[str, int] = {
    TERMINAL: ExitCode.OK,
    TERMINAL_FAILURE: ExitCode.TERMINAL_FAILURE,  # as the run would exit
    ERROR: ExitCode.FAILED,
    SCRIPT_EXHAUSTED: ExitCode.USAGE,
    UNRESOLVED_TARGET: ExitCode.USAGE,
    MAX_ITERATIONS: ExitCode.MAX_ITERATIONS,
    MAX_STEPS: ExitCode.MAX_STEPS,
}


@dataclass
class SimulatedStep:
    """One state the walk entered: what would run, the verdict it got, where it went."""

    state: str
    iteration: int
    action: str | None = None  # with what simulation can resolve resolved
    action_type: str | None = None  # "shell" or "prompt"
    verdict: str | None = None
    verdict_from: str | None = None  # "scripted", "default" or "scenario NAME"
    target: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    depth: int = 0  # 1 for a state of a sub-loop's child, named `STATE/CHILD_STATE`
    branches: list[dict[str, str]] = field(default_factory=list)  # a fan-out's: name, verdict


@dataclass
class SimulationResult:
    """The whole walk and how it ended."""

    loop: str
    max_iterations: int
    steps: list[SimulatedStep]
    terminated_by: str
    final_state: str
    iterations: int
    message: str
    notes: list[str] = field(default_factory=list)
    unused: dict[str, list[str]] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return SIMULATION_EXIT_CODES[self.terminated_by]

    @property
    def path(self) -> list[str]:
        return [step.state for step in self.steps]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for step in out["steps"]:
            if not step["depth"]:
                del step["depth"]  # only a sub-loop's steps say how deep they are
            if not step["branches"]:
                del step["branches"]  # only a fan-out's with scripted branches has them
        out["exit_code"] = self.exit_code
        out["path"] = self.path
        return out


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
