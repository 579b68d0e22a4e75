"""What every agent kind does alike: a failed exit in one line, a key or a login found."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from little_loops.fsm.actions import claude_code, codex, gemini, opencode
from little_loops.fsm.actions.agent_kind import exit_failed, key_given, login_file, said_lines
from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.request import ActionResult


def test_a_failed_exit_is_said_with_its_status_and_the_line_that_says_why() -> None:
    failed = exit_failed(ActionResult("", "boom", 2, 1), "codex", "boom")
    assert (failed.error, failed.exit_code) == ("codex exited with status 2: boom", 2)
    silent = exit_failed(ActionResult("", "", 3, 1), "gemini", None)
    assert silent.error == "gemini exited with status 3: no output"
    # An exit 0, or an error something already set, is left as it is.
    assert exit_failed(ActionResult("ok", "", 0, 1), "codex", "x").error is None
    said = ActionResult("", "", 1, 1, error="opencode reported an error: quota")
    assert exit_failed(said, "opencode", "x").error == "opencode reported an error: quota"


def test_the_lines_that_say_something() -> None:
    assert said_lines("\n  first \n\n\tsecond\n  \n") == ["first", "second"]
    assert said_lines("") == []


def test_a_blank_variable_is_no_key_and_only_a_regular_file_is_a_login(tmp_path: Path) -> None:
    assert key_given({"A": "k"}, ("B", "A"))
    assert not key_given({"A": "  \n"}, ("A",))
    assert not key_given({}, ("A",))
    fifo = tmp_path / "auth.json"
    os.mkfifo(fifo)  # reading it would hang the preflight
    assert not login_file([fifo, tmp_path / "missing"])
    (tmp_path / "creds.json").write_text("{}")
    assert login_file([fifo, tmp_path / "creds.json"])


def _machine(home: Path, env: dict[str, str], version: str | None) -> Machine:
    return Machine(env, False, lambda name: f"/bin/{name}", home, lambda program: version)


@pytest.mark.parametrize(
    ("ready", "variable", "version"),
    [
        (claude_code.ready, "ANTHROPIC_API_KEY", None),
        (codex.ready, "OPENAI_API_KEY", "codex-cli 0.171.0"),
        (gemini.ready, "GEMINI_API_KEY", "0.61.0"),
        (opencode.ready, "OPENAI_API_KEY", "1.18.33"),
    ],
    ids=["claude", "codex", "gemini", "opencode"],
)
def test_every_agent_takes_a_key_alike_and_a_blank_one_is_none(
    ready: Callable[[Machine], str | None],
    variable: str,
    version: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The preflight of each agent: a key given is a way in, a blank one is not (before,
    Codex and opencode took a variable of spaces for a key, Claude Code and Gemini did not)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.platform", "linux")  # Claude Code on macOS: the keychain counts
    (tmp_path / ".gemini").mkdir()
    trusted = json.dumps({str(tmp_path): "TRUST_FOLDER"})
    (tmp_path / ".gemini" / "trustedFolders.json").write_text(trusted)
    assert ready(_machine(tmp_path, {variable: "sk-1"}, version)) is None
    blank = ready(_machine(tmp_path, {variable: "   "}, version))
    assert isinstance(blank, str)
    assert blank.startswith(f"{ready.__module__.rsplit('.', 1)[-1].split('_')[0]} has no ")
