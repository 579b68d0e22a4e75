"""Which model a Codex session runs on: its options and config files, and its own record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from little_loops.fsm.actions.codex_model import configured_model, recorded_model


@pytest.fixture
def home(tmp_path: Path) -> Path:
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        'model = "from-config"\n[profiles.fast]\nmodel = "from-table"\n'
    )
    return tmp_path


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home)}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"model": "opt", "config": {"model": "cfg"}}, "opt"),
        ({"extra_args": ["-m", "flag"], "config": {"model": "cfg"}}, "flag"),
        ({"extra_args": ["--model=flag2"]}, "flag2"),
        ({"config": {"model": "cfg"}}, "cfg"),
        ({"profile": "fast"}, "from-table"),
        ({"profile": "other"}, "from-config"),
        ({}, "from-config"),
    ],
)
def test_the_model_by_precedence(home: Path, options: dict[str, object], expected: str) -> None:
    assert configured_model(options, _env(home)) == expected


def test_a_profile_file_wins_over_the_profiles_table(home: Path) -> None:
    (home / ".codex" / "fast.config.toml").write_text('model = "from-file"\n')
    assert configured_model({"profile": "fast"}, _env(home)) == "from-file"
    config = home / ".codex" / "config.toml"
    config.write_text('profile = "fast"\n' + config.read_text())
    assert configured_model({}, _env(home)) == "from-file"


def test_codex_home_and_broken_config(tmp_path: Path) -> None:
    assert configured_model({}, {"HOME": str(tmp_path)}) is None  # no file: Codex's default
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "config.toml").write_text("model = [not toml\n")
    assert configured_model({}, {"CODEX_HOME": str(other)}) is None


def test_the_record_of_a_session_names_its_last_turns_model(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "2026" / "12" / "06"
    folder.mkdir(parents=True)
    thread = "01a24dae-9659-7ad1-9080-67eb3c50b9df"
    lines = [
        {"type": "session_meta", "payload": {"id": thread}},
        {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        {"type": "turn_context", "payload": {"model": "gpt-5.1-codex"}},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\nnot json\n"
    (folder / f"rollout-2026-12-06T23-26-57-{thread}.jsonl").write_text(text)
    env = {"CODEX_HOME": str(tmp_path)}
    assert recorded_model(thread, env) == "gpt-5.1-codex"
    assert recorded_model("another-thread", env) is None


def test_a_fifo_as_config_is_not_opened(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "config.toml")
    assert configured_model({}, {"CODEX_HOME": str(tmp_path)}) is None  # no wait for a writer
