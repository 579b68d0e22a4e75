"""The `claude:` options table: the flags each option becomes, merging, and their checks."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.actions.claude_options import (
    CLAUDE_OPTIONS,
    SKIP_PERMISSIONS_FLAG,
    claude_flags,
    describe_options,
    merged,
)
from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.validate.loopfile import validate_definition


def test_no_options_is_what_a_claude_action_always_ran_with() -> None:
    runner = DefaultActionRunner(commands={"claude": ("claude",)})
    assert runner.argv(ActionRequest("Fix it", None, "claude")) == [
        "claude",
        SKIP_PERMISSIONS_FLAG,
        "--output-format",
        "stream-json",
        "--verbose",
        "-p",
        "--",
        "Fix it",
    ]


@pytest.mark.parametrize(
    ("options", "flags"),
    [
        ({"model": "claude-x"}, ["--model", "claude-x"]),
        ({"tools": ["Read", "Bash"]}, ["--tools", "Read,Bash"]),
        ({"tools": []}, ["--tools", ""]),
        (
            {"allowed_tools": ["Bash(git *)", "Edit"]},
            ["--allowedTools", "Bash(git *)", "Edit"],
        ),
        ({"allowed_tools": []}, []),
        ({"disallowed_tools": ["Write"]}, ["--disallowedTools", "Write"]),
        ({"fallback_model": "claude-y"}, ["--fallback-model", "claude-y"]),
        ({"agent": "reviewer"}, ["--agent", "reviewer"]),
        ({"effort": "high"}, ["--effort", "high"]),
        ({"max_turns": 3}, ["--max-turns", "3"]),
        ({"append_system_prompt": "Be brief."}, ["--append-system-prompt", "Be brief."]),
        ({"extra_args": ["--add-dir", "../lib"]}, ["--add-dir", "../lib"]),
    ],
)
def test_each_option_becomes_its_flag(options: dict[str, Any], flags: list[str]) -> None:
    assert claude_flags(options) == [SKIP_PERMISSIONS_FLAG, *flags]


def test_a_permission_mode_replaces_skipping_permissions() -> None:
    assert claude_flags({"permission_mode": "plan", "model": "m"}) == [
        "--permission-mode",
        "plan",
        "--model",
        "m",
    ]


def test_the_prompt_comes_after_p_so_a_tool_list_cannot_take_it() -> None:
    runner = DefaultActionRunner(commands={"claude": ("claude",)})
    argv = runner.argv(
        ActionRequest(
            "Fix it",
            None,
            "claude",
            options={"tools": ["Read"], "extra_args": ["--x"]},
            resume_session="sess-1",
        )
    )
    assert argv[-5:] == ["--resume", "sess-1", "-p", "--", "Fix it"]
    assert argv.index("--x") < argv.index("-p")


def test_a_state_lays_its_options_over_the_loops_and_null_unsets() -> None:
    loop = {"model": "a", "tools": ["Read"], "effort": "low"}
    assert merged(loop, {"model": "b", "tools": None}) == {"model": "b", "effort": "low"}
    assert merged(loop, None) == loop


def test_describe_options_in_table_order() -> None:
    assert describe_options({"tools": ["Read", "Bash"], "model": "m"}) == (
        "model=m, tools=[Read, Bash]"
    )


def _messages(data: dict[str, Any]) -> list[str]:
    return [str(p) for p in validate_definition(data)]


def _loop(state: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "name": "demo",
        "initial": "fix",
        "states": {"fix": {**state, "next": "done"}, "done": {"terminal": True}},
        **top,
    }


PROMPT = {"action": "Fix it", "action_type": "prompt"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            _loop({**PROMPT, "claude": {"modle": "x"}}),
            "loop 'demo' > states > fix > claude > modle: unknown key (did you mean model?)",
        ),
        (
            _loop(PROMPT, claude={"allowedTools": ["Read"]}),
            "loop 'demo' > claude > allowedTools: unknown key (did you mean allowed_tools?)",
        ),
        (
            _loop({**PROMPT, "claude": {"tools": "Read"}}),
            "loop 'demo' > states > fix > claude > tools: expected a list of strings, got 'Read'",
        ),
        (
            _loop({**PROMPT, "claude": {"effort": "hgh"}}),
            "loop 'demo' > states > fix > claude > effort: expected one of low, medium, high, "
            "xhigh, max, got 'hgh' (did you mean high?)",
        ),
        (
            _loop({**PROMPT, "claude": {"max_turns": 0}}),
            "loop 'demo' > states > fix > claude > max_turns: expected a whole number >= 1, got 0",
        ),
        (
            _loop({"action": "make", "claude": {"model": "x"}}),
            "loop 'demo' > states > fix > claude: only a prompt or slash-command state runs "
            "Claude Code (this state's action runs with bash)",
        ),
        (
            _loop({"action": "make", "session": "continue"}),
            "loop 'demo' > states > fix > session: only a prompt or slash-command state runs "
            "Claude Code (this state's action runs with bash)",
        ),
        (
            _loop({**PROMPT, "session": "contnue"}),
            "loop 'demo' > states > fix > session: expected one of fresh, continue, got "
            "'contnue' (did you mean continue?)",
        ),
        (
            _loop(PROMPT, llm={"backend": "cli"}),
            "loop 'demo' > llm > backend: expected one of auto, api, claude, opencode, got 'cli'",
        ),
    ],
)
def test_claude_option_problems(data: dict[str, Any], message: str) -> None:
    assert _messages(data) == [message]


def test_well_formed_claude_options_pass() -> None:
    options = {
        "model": "claude-sonnet-4-5",
        "fallback_model": "claude-haiku-4-5",
        "tools": [],
        "allowed_tools": ["Bash(git *)"],
        "disallowed_tools": ["Write"],
        "agent": "reviewer",
        "effort": "max",
        "max_turns": 5,
        "append_system_prompt": "",
        "permission_mode": "acceptEdits",
        "extra_args": ["--add-dir", "x"],
    }
    assert set(options) == set(CLAUDE_OPTIONS)
    data = _loop(
        {"action": "/fix", "claude": options, "session": "continue", "session_key": "fixer"},
        claude={"model": "claude-opus-4-5"},
        llm={"backend": "claude"},
    )
    assert _messages(data) == []


def test_a_prompt_starting_with_a_dash_is_not_read_as_a_claude_flag() -> None:
    """Claude Code's `-p` takes no value: without `--` a prompt (or a parameter filling one)
    such as `--settings=FILE` or `- fix it` was parsed as an option (checked by hand with
    Claude Code 2.1.197: `claude -p --version` prints the version)."""
    runner = DefaultActionRunner(commands={"claude": ("claude",)})
    assert runner.argv(ActionRequest("--settings=evil.json", None, "claude"))[-3:] == [
        "-p",
        "--",
        "--settings=evil.json",
    ]
