"""The `claude:` options of a loop or state: each one's Claude Code flag, value check and doc.

This table is the one place the vocabulary is written: validation, the JSON Schema, the
runner's command line, the dry-run plan and the docs tests all read it. The flags are those
of Claude Code 2.1.x (`claude --help`; `--max-turns` works but is not listed there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.actions.spec import KindOption, described
from little_loops.fsm.actions.spec import filled as filled  # where they were first written
from little_loops.fsm.actions.spec import merged as merged
from little_loops.fsm.values.value_checks import (
    integer,
    one_of,
    string,
    string_list,
    text,
)

# What an action runs with when no `permission_mode` is given (as before options existed).
SKIP_PERMISSIONS_FLAG = "--dangerously-skip-permissions"
EFFORT_LEVELS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
PERMISSION_MODES: tuple[str, ...] = (
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "default",
    "dontAsk",
    "plan",
)


CLAUDE_OPTIONS: dict[str, KindOption] = {
    "model": KindOption("--model", string, "The model of the session (an alias or full name)."),
    "fallback_model": KindOption(
        "--fallback-model", string, "The model to fall back to when the model is overloaded."
    ),
    "tools": KindOption(
        "--tools",
        string_list,
        "The only built-in tools the session is offered ([] for none).",
        joined=True,
    ),
    "allowed_tools": KindOption(
        "--allowedTools",
        string_list,
        "Permission rules that allow tools without asking (restricts nothing while "
        "permissions are skipped, the default: use tools for that).",
    ),
    "disallowed_tools": KindOption(
        "--disallowedTools", string_list, "Permission rules that deny tools."
    ),
    "agent": KindOption("--agent", string, "The agent (subagent definition) of the session."),
    "effort": KindOption(
        "--effort", one_of(EFFORT_LEVELS), "The effort level: " + ", ".join(EFFORT_LEVELS) + "."
    ),
    "max_turns": KindOption("--max-turns", integer(1), "The most agent turns of the session."),
    "append_system_prompt": KindOption(
        "--append-system-prompt", text, "Text appended to Claude Code's system prompt."
    ),
    "permission_mode": KindOption(
        "--permission-mode",
        one_of(PERMISSION_MODES),
        "The permission mode; when given, --dangerously-skip-permissions (the default) is "
        "not passed.",
    ),
    "extra_args": KindOption(
        None, string_list, "Further claude arguments, passed verbatim and not checked."
    ),
}


def claude_flags(options: Mapping[str, Any]) -> list[str]:
    """The claude arguments *options* stand for, permission flag first, `extra_args` last.

    Every list-valued flag is variadic in Claude Code, so the caller must put an option
    (such as `-p`) between these and the prompt.
    """
    mode = options.get("permission_mode")
    out = [SKIP_PERMISSIONS_FLAG] if mode is None else ["--permission-mode", str(mode)]
    for name, option in CLAUDE_OPTIONS.items():
        value = options.get(name)
        if value is None or option.flag is None or name == "permission_mode":
            continue
        if isinstance(value, list):
            values = [str(v) for v in value]
            if option.joined:  # `tools: []` is `--tools ""`: no tools at all
                out += [option.flag, ",".join(values)]
            elif values:
                out += [option.flag, *values]
        else:
            out += [option.flag, str(value)]
    out += [str(arg) for arg in options.get("extra_args") or []]
    return out


def describe_options(options: Mapping[str, Any]) -> str:
    """*options* on one line, in table order: `model=claude-x, tools=[Read, Bash]`."""
    return described(options, CLAUDE_OPTIONS)
