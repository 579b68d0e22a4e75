"""The seed path of the paradigm compilers: they live in `little_loops.fsm.paradigms`."""

from little_loops.fsm.paradigms.compile import (
    COMPILERS,
    compile_convergence,
    compile_goal,
    compile_imperative,
    compile_invariants,
    compile_paradigm,
)

__all__ = [
    "COMPILERS",
    "compile_convergence",
    "compile_goal",
    "compile_imperative",
    "compile_invariants",
    "compile_paradigm",
]
