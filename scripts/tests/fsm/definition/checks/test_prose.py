"""An action written as a sentence for Claude, told from a bash command (checks/prose.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from little_loops.fsm.definition.checks.prose import (
    PROMPT_HINT,
    cannot_run_hint,
    reads_like_a_sentence,
    sentence_message,
    sentence_warning,
)
from little_loops.fsm.definition.model.typed import StateConfig


@pytest.mark.parametrize(
    "action",
    ["Fix the failing test", "Review ${context.file} and tidy it up.", "Refactor it, then stop"],
)
def test_prose_reads_like_a_sentence(action: str) -> None:
    assert reads_like_a_sentence(action)


@pytest.mark.parametrize(
    "action",
    [
        "pytest -x tests",  # no capital
        "Fix it",  # too short
        "Echo the | output",  # shell syntax
        "${context.cmd} runs this now",  # only known at run time
        "./Fix the failing test",  # a path
    ],
)
def test_commands_do_not(action: str) -> None:
    assert not reads_like_a_sentence(action)


def test_a_capitalised_command_on_path_is_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert reads_like_a_sentence("Frob the widgets now")
    program = tmp_path / "Frob"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert not reads_like_a_sentence("Frob the widgets now")


def test_the_warning_names_the_first_word_and_the_fix() -> None:
    message = sentence_message("Fix the failing test")
    assert "which has no command 'Fix'" in message
    assert message.endswith(PROMPT_HINT)
    assert sentence_warning(StateConfig.from_dict({"action": "Fix the failing test"})) == message
    typed = StateConfig.from_dict({"action": "Fix the failing test", "action_type": "shell"})
    assert sentence_warning(typed) is None


def test_the_hint_after_exit_126_and_127() -> None:
    assert cannot_run_hint("./x", not_found=False).startswith("exit 126: bash found the command")
    assert cannot_run_hint("Fix the failing test", not_found=True) == sentence_message(
        "Fix the failing test"
    )
    assert cannot_run_hint("frobnicate", not_found=True).startswith("exit 127: bash found no")
