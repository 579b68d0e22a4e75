"""The seed path of the paradigm compilers: they live in `little_loops.fsm.paradigms`."""

from little_loops.fsm.paradigms.convergence import compile_convergence
from little_loops.fsm.paradigms.goal import compile_goal
from little_loops.fsm.paradigms.imperative import compile_imperative
from little_loops.fsm.paradigms.invariants import compile_invariants
from little_loops.fsm.paradigms.registry import COMPILERS, compile_paradigm

__all__ = [
    "COMPILERS",
    "compile_convergence",
    "compile_goal",
    "compile_imperative",
    "compile_invariants",
    "compile_paradigm",
]
