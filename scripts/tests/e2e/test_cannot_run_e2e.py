"""Every "cannot run" cause of docs/agents/fallback.md, with the real agent CLIs: the agent
the preflight finds unable to run here is named, skipped and never started; one whose own
output says so at run time gives way to the next agent of the list for the rest of the run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.fake_gemini import gemini_home
from support.fake_openai import FakeOpenAI
from support.fallback_loop import FIX_CALC_LOOP
from support.npm_cli import CODEX as CODEX_CLI
from support.npm_cli import GEMINI_CLI, OPENCODE, cli_or_skip
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

CODEX = "codex: {model: gpt-5-codex}"
# A second agent of our own: it fixes the planted bug (2+3 instead of 2+2).
MINE = "agents: {mine: {command: bash ./mine.sh}}"
MINE_SH = "sed -i 's/2+3/2+2/' calc.sh && echo 'fixed calc.sh'\n"
NOT_READY_LINE = "↪ {agent} cannot run here: on with {to}"


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def _fix_with_codex(root: Path, fake_openai: FakeOpenAI) -> None:
    (root / "calc.sh").write_text("echo $((2+3))\n")
    fake_openai.reply_shell("sed -i 's/2+3/2+2/' calc.sh")
    fake_openai.reply_text("Fixed calc.sh.")


def _switched(root: Path, done: Any, first: str, second: str, started: list[str]) -> None:
    """The run ended done, the step ran on *started* agents, one switch for not_ready."""
    assert done.returncode == ExitCode.OK, done.stderr
    assert json.loads(done.stdout)["final_state"] == "done"
    assert (root / "calc.sh").read_text() == "echo $((2+2))\n"
    events = llproc.events(root, "fallback")
    assert [e.get("agent") for e in _of(events, "action_start")] == [*started, None]
    (switch,) = _of(events, "agent_switch")
    assert (switch["from"], switch["to"], switch["reason"]) == (first, second, "not_ready")
    assert NOT_READY_LINE.format(agent=first, to=second) in done.stderr
    assert "\x1b" not in done.stderr  # no raw colour codes in our messages


@pytest.mark.skipif(os.geteuid() != 0, reason="Claude Code's root refusal needs root")
def test_claude_refused_as_root_is_skipped_by_the_preflight_and_never_started(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("IS_SANDBOX")
    root = loop_project.root
    _fix_with_codex(root, fake_openai)
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second="codex", declared=CODEX)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "claude refuses --dangerously-skip-permissions as root" in done.stderr
    assert "(claude is skipped: the next agent of the list runs)" in done.stderr
    _switched(root, done, "claude", "codex", ["codex"])
    assert agent.requests == []


def test_claude_with_no_login_is_skipped_by_the_preflight_and_never_started(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # and its fresh HOME holds no login
    root = loop_project.root
    _fix_with_codex(root, fake_openai)
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second="codex", declared=CODEX)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "claude has no API key and no login" in done.stderr
    _switched(root, done, "claude", "codex", ["codex"])
    assert agent.requests == []


def test_claude_saying_not_logged_in_at_run_time_gives_way_for_the_rest_of_the_run(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # A credentials file the preflight takes for a login, which Claude Code refuses (an
    # expired or revoked login): it answers "Not logged in · Please run /login".
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    config = tmp_path_factory.mktemp("claude-config")
    (config / ".credentials.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    root = loop_project.root
    _fix_with_codex(root, fake_openai)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second="codex", declared=CODEX)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "is skipped" not in done.stderr  # the preflight could not tell
    _switched(root, done, "claude", "codex", ["claude", "codex"])
    outcome = json.loads(done.stdout)
    assert outcome["limited_agents"]["claude"] == {"reason": "not_ready", "until": None}


@pytest.fixture
def gemini_untrusted(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real Gemini CLI first on PATH with a key, in a folder it was never told to trust
    (and without NO_COLOR: its refusal is printed in red)."""
    gemini = cli_or_skip(GEMINI_CLI)
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")) or name == "NO_COLOR":
            monkeypatch.delenv(name)
    home = gemini_home(tmp_path_factory.mktemp("gemini-home"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_API_KEY", "fake-gemini-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")  # never reached
    monkeypatch.setenv("PATH", f"{gemini.parent}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.usefixtures("gemini_untrusted")
def test_gemini_in_an_untrusted_folder_is_skipped_by_the_preflight(
    loop_project: LoopProject,
) -> None:
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE_SH)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="gemini", second="mine", declared=MINE)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "gemini does not trust the loop's folder" in done.stderr
    _switched(root, done, "gemini", "mine", ["mine"])


@pytest.mark.usefixtures("gemini_untrusted")
def test_gemini_alone_in_an_untrusted_folder_stops_before_the_first_step(
    loop_project: LoopProject,
) -> None:
    root = loop_project.root
    loop_project.write(
        "alone", FIX_CALC_LOOP.replace("[{first}, {second}]", "gemini").format(declared="")
    )

    done = llproc.console(root, "run", "alone", timeout=180)

    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "gemini does not trust the loop's folder" in done.stderr
    assert "\x1b" not in done.stderr
    assert not (root / ".loops" / ".running" / "alone.events.jsonl").exists()


@pytest.mark.usefixtures("gemini_untrusted")
def test_gemini_refusing_the_folder_at_run_time_gives_way_to_the_next_agent(
    loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rule the preflight reads as trusting the folder that Gemini CLI reads from
    # elsewhere (GEMINI_CLI_TRUSTED_FOLDERS_PATH is set after the preflight, for the agent
    # alone, by a wrapper): the refusal comes from the step itself.
    root = loop_project.root
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    real = cli_or_skip(GEMINI_CLI)
    (wrapper / "gemini").write_text(
        f'#!/bin/sh\n[ "$1" = --version ] || export GEMINI_CLI_TRUST_WORKSPACE=false\n'
        f'exec "{real}" "$@"\n'
    )
    (wrapper / "gemini").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE_SH)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="gemini", second="mine", declared=MINE)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    _switched(root, done, "gemini", "mine", ["gemini", "mine"])


def test_opencode_with_only_the_config_it_writes_itself_is_skipped_by_the_preflight(
    loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opencode = cli_or_skip(OPENCODE)
    for name in list(os.environ):
        if name.startswith(("OPENCODE_", "XDG_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    written = home / ".config" / "opencode" / "opencode.jsonc"  # as opencode 1.x writes it
    written.parent.mkdir(parents=True)
    written.write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{opencode.parent}{os.pathsep}{os.environ['PATH']}")
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE_SH)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="opencode", second="mine", declared=MINE)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "opencode has no key or login" in done.stderr
    _switched(root, done, "opencode", "mine", ["mine"])


def test_codex_with_no_key_and_no_login_is_skipped_by_the_preflight(
    loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = cli_or_skip(CODEX_CLI)
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CODEX_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.codex/auth.json
    monkeypatch.setenv("PATH", f"{codex.parent}{os.pathsep}{os.environ['PATH']}")
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE_SH)
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="codex", second="mine", declared=MINE)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert "codex has no key and no login" in done.stderr
    _switched(root, done, "codex", "mine", ["mine"])
