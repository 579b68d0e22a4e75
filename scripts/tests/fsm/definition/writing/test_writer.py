"""The FSM YAML writer: key order, readable strings, YAML 1.1 safety, exact round trip."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.writer import dump_fsm_yaml


def loop(**extra: Any) -> FSMLoop:
    data: dict[str, Any] = {
        "name": "demo",
        "initial": "check",
        "states": {
            "check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
            "fix": {"action": "/ll:manage_issue bug fix", "next": "check"},
            "done": {"terminal": True},
        },
    }
    data.update(extra)
    return FSMLoop.from_dict(data)


def reload(text: str) -> FSMLoop:
    return FSMLoop.from_dict(load_text(text).data)


def test_key_order_is_name_initial_context_states_then_settings() -> None:
    fsm = loop(
        max_iterations=5,
        paradigm="goal",
        context={"b": 1, "a": 2},
        maintain=True,
        llm={"enabled": False},
    )
    top = [line.split(":")[0] for line in dump_fsm_yaml(fsm).splitlines() if line[:1].isalpha()]
    assert top == [
        "name",
        "initial",
        "context",
        "states",
        "paradigm",
        "max_iterations",
        "maintain",
        "llm",
    ]


def test_states_and_context_keep_definition_order() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "zeta",
            "context": {"zz": 1, "aa": 2},
            "states": {"zeta": {"next": "alpha"}, "alpha": {"terminal": True}},
        }
    )
    data = yaml.safe_load(dump_fsm_yaml(fsm))
    assert list(data["states"]) == ["zeta", "alpha"]
    assert list(data["context"]) == ["zz", "aa"]


def test_whole_document_is_block_style() -> None:
    text = dump_fsm_yaml(loop(scope=["src/", "tests/"]))
    assert text == (
        "name: demo\n"
        "initial: check\n"
        "states:\n"
        "  check:\n"
        "    action: pytest\n"
        "    on_success: done\n"
        "    on_failure: fix\n"
        "  fix:\n"
        "    action: /ll:manage_issue bug fix\n"
        "    next: check\n"
        "  done:\n"
        "    terminal: true\n"
        "scope:\n"
        "  - src/\n"
        "  - tests/\n"
    )


def test_multi_line_strings_use_literal_style() -> None:
    script = 'set -e\nruff check src/\necho "done: $?"\n'
    fsm = loop(states={"s": {"action": script, "terminal": True}}, initial="s")
    text = dump_fsm_yaml(fsm)
    assert (
        '  s:\n    action: |\n      set -e\n      ruff check src/\n      echo "done: $?"\n' in text
    )
    assert reload(text) == fsm


def test_long_commands_stay_on_one_line() -> None:
    command = "ruff check " + " ".join(f"src/module_{i}.py" for i in range(40))
    fsm = loop(states={"s": {"action": command, "terminal": True}}, initial="s")
    assert f"    action: {command}\n" in dump_fsm_yaml(fsm)


@pytest.mark.parametrize(
    "word",
    [
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "Y",
        "N",
        "true",
        "False",
        "null",
        "~",
        "1.5",
        "1e3",
        "0o7",
    ],
)
def test_strings_a_yaml_1_1_reader_would_misread_are_quoted(word: str) -> None:
    fsm = loop(
        initial=word,
        context={word: word},
        states={word: {"action": word, "next": "done"}, "done": {"terminal": True}},
    )
    text = dump_fsm_yaml(fsm)
    # PyYAML's own loader speaks YAML 1.1: every one of these must still come back a string.
    data = yaml.safe_load(text)
    assert data["initial"] == word
    assert data["context"] == {word: word}
    assert data["states"][word]["action"] == word
    assert reload(text) == fsm


def test_header_lines_become_comments() -> None:
    text = dump_fsm_yaml(loop(), header="Compiled from x.yaml\n\nDo not edit.")
    assert text.startswith("# Compiled from x.yaml\n#\n# Do not edit.\nname: demo\n")
    assert reload(text) == loop()


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_state_names = st.text(min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(
    name=st.text(min_size=1, max_size=20),
    names=st.lists(_state_names, min_size=1, max_size=4, unique=True),
    actions=st.lists(st.text(max_size=60), min_size=4, max_size=4),
    context=st.dictionaries(st.text(max_size=10), _values, max_size=4),
    backoff=st.one_of(st.none(), st.floats(0, 100)),
)
def test_any_loop_round_trips_exactly(
    name: str,
    names: list[str],
    actions: list[str],
    context: dict[str, Any],
    backoff: float | None,
) -> None:
    states = {
        state: {"action": actions[i], "next": names[(i + 1) % len(names)]}
        for i, state in enumerate(names)
    }
    fsm = FSMLoop.from_dict(
        {
            "name": name,
            "initial": names[0],
            "context": context,
            "states": states,
            "backoff": backoff,
        }
    )
    assert reload(dump_fsm_yaml(fsm)) == fsm


@pytest.mark.parametrize("text", ["a\r\nb", "0\x85", "x\u2028y", "p\u2029", "tab\there\n"])
def test_unusual_line_breaks_survive(text: str) -> None:
    fsm = loop(states={"s": {"action": text, "terminal": True}}, initial="s")
    assert reload(dump_fsm_yaml(fsm)).states["s"].action == text
