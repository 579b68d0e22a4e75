"""The seed path `little_loops.fsm.compilers`: the paradigm compilers by their old names."""

from __future__ import annotations

from little_loops.fsm import compilers
from little_loops.fsm.compilers import COMPILERS, compile_goal, compile_paradigm
from little_loops.fsm.paradigms import registry


def test_the_seed_names_are_the_compilers_themselves() -> None:
    assert compilers.compile_paradigm is registry.compile_paradigm
    assert COMPILERS is registry.COMPILERS
    for name in compilers.__all__:
        assert getattr(compilers, name) is getattr(registry, name, getattr(compilers, name))
    assert "compile_invariants" in compilers.__all__


def test_compile_a_paradigm_through_the_seed_path() -> None:
    spec = {"paradigm": "goal", "goal": "Tests pass", "tools": ["pytest"], "name": "g"}
    fsm = compile_paradigm(spec)
    assert fsm.name == "g"
    assert compile_goal({k: v for k, v in spec.items() if k != "paradigm"}).name == "g"
