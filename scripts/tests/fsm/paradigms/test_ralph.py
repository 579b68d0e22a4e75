"""The ralph paradigm (paradigms/ralph.py): the same prompt each pass until Claude promises."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.errors import ParadigmSpecError
from little_loops.fsm.paradigms.ralph import DEFAULT_PROMISE, compile_ralph


def test_a_prompt_with_gates() -> None:
    fsm = compile_ralph({"paradigm": "ralph", "name": "r", "prompt": "Do it", "gates": ["pytest"]})
    assert (fsm.name, fsm.initial, list(fsm.states)) == ("r", "work", ["work", "gate_1", "done"])
    work = fsm.states["work"]
    assert work.action is not None
    assert work.action.startswith("Do it\n\nYou are working in a loop")
    assert DEFAULT_PROMISE in work.action
    assert "and these checks pass (`pytest`)" in work.action
    assert (work.on_success, work.on_failure) == ("gate_1", "work")
    gate = fsm.states["gate_1"]
    assert (gate.action, gate.on_success, gate.on_failure, gate.on_error) == (
        "pytest",
        "done",
        "work",
        "work",
    )
    assert fsm.states["done"].terminal


def test_the_promise_is_matched_as_written() -> None:
    fsm = compile_ralph({"paradigm": "ralph", "name": "r", "prompt": "x", "promise": "[DONE]"})
    assert fsm.context["promise"] == r"\[DONE\]"
    assert fsm.states["work"].on_success == "done"


def test_a_prompt_file_is_read_before_each_pass() -> None:
    fsm = compile_ralph({"paradigm": "ralph", "name": "r", "prompt_file": "PROMPT.md"})
    assert fsm.initial == "read_prompt"
    assert fsm.states["read_prompt"].action == "cat -- ${context.prompt_file}"
    assert fsm.states["work"].on_failure == "read_prompt"
    assert fsm.context["prompt_file"] == "PROMPT.md"


@pytest.mark.parametrize("spec", [{}, {"prompt": "a", "prompt_file": "b"}])
def test_exactly_one_of_prompt_and_prompt_file(spec: dict[str, str]) -> None:
    with pytest.raises(ParadigmSpecError, match="give exactly one of 'prompt'"):
        compile_ralph({"paradigm": "ralph", "name": "r", **spec})
