"""The paradigm registry: each paradigm name and its compiler, and the dispatch by name.

To add a paradigm, write `paradigms/<name>.py` with a `compile_<name>(spec) -> FSMLoop`
and add one line to `COMPILERS`. The templates and naming rules are documented in
docs/paradigms.md; keep the two in step.
"""

from __future__ import annotations

from typing import Any, Protocol

from little_loops.fsm.definition.checks.key_tables import FSM_PARADIGM
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.paradigms.convergence import compile_convergence
from little_loops.fsm.paradigms.goal import compile_goal
from little_loops.fsm.paradigms.imperative import compile_imperative
from little_loops.fsm.paradigms.invariants import compile_invariants
from little_loops.fsm.paradigms.native import compile_fsm
from little_loops.fsm.paradigms.ralph import compile_ralph
from little_loops.fsm.values.value_checks import type_name


class ParadigmCompiler(Protocol):
    """A compiler: a paradigm spec in, an FSM out; a bad spec raises LoopDefinitionError."""

    def __call__(self, spec: dict[str, Any]) -> FSMLoop: ...


COMPILERS: dict[str, ParadigmCompiler] = {
    "goal": compile_goal,
    "convergence": compile_convergence,
    "invariants": compile_invariants,
    "imperative": compile_imperative,
    "ralph": compile_ralph,
    FSM_PARADIGM: compile_fsm,
}
PARADIGMS: tuple[str, ...] = tuple(COMPILERS)


def compile_paradigm(spec: dict[str, Any]) -> FSMLoop:
    """Compile a loaded loop file of any paradigm into an FSM.

    No `paradigm:` key means `fsm`. A document that already has both `initial:` and
    `states:` is an FSM whatever its `paradigm:` says: that key then only records the
    paradigm it was compiled from (the output of `ll-loop compile` loads back unchanged).
    """
    if not isinstance(spec, dict):
        raise LoopDefinitionError(f"a loop must be a mapping, got {type_name(spec)}")
    paradigm = spec.get("paradigm", FSM_PARADIGM)
    if not isinstance(paradigm, str):
        raise LoopDefinitionError(
            f"paradigm: expected a string, got {type_name(paradigm)}; known: {', '.join(PARADIGMS)}"
        )
    compiler = COMPILERS.get(paradigm)
    if compiler is None:
        hint = did_you_mean(paradigm, PARADIGMS)
        raise LoopDefinitionError(
            f"unknown paradigm '{paradigm}'{hint}; known: {', '.join(PARADIGMS)}"
        )
    if "initial" in spec and "states" in spec:
        return compile_fsm(spec)
    return compiler(spec)
