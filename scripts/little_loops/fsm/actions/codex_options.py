"""The `codex:` options of a loop or state: each one's Codex CLI flag, value check and doc.

The flags are those of `codex exec` 0.171 (`codex exec --help`). `codex exec resume` takes
fewer (no `--sandbox`, no `--profile`): a resumed session gets its sandbox as the config
key `sandbox_mode` instead, and keeps the profile it started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.actions.spec import KindOption
from little_loops.fsm.values.value_checks import (
    Check,
    check_with,
    describe,
    one_of,
    string,
    string_list,
)

# What a session runs with when no `sandbox` is given, like Claude Code's skipped permission
# prompts: the loop runs unattended, so nothing may stop to ask.
BYPASS_FLAG = "--dangerously-bypass-approvals-and-sandbox"
SANDBOX_MODES: tuple[str, ...] = ("read-only", "workspace-write", "danger-full-access")
APPROVAL_POLICIES: tuple[str, ...] = ("untrusted", "on-request", "on-failure", "never")


def _is_toml_value(value: object) -> bool:
    if isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, list) and all(_is_toml_value(item) for item in value)


@check_with({"type": "object", "additionalProperties": {}})
def _config_check(value: object) -> str | None:
    """`config:`: a mapping of config keys (dotted paths) to values TOML can write."""
    if not isinstance(value, Mapping):
        return f"expected a mapping of config keys to values, got {describe(value)}"
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            return f"expected config keys that are non-empty strings, got {describe(key)}"
        if not _is_toml_value(item):
            return f"config {key}: expected a string, number, true/false or a list of them"
    return None


CONFIG_CHECK: Check = _config_check

CODEX_OPTIONS: dict[str, KindOption] = {
    "model": KindOption("--model", string, "The model of the session (`codex exec -m`)."),
    "sandbox": KindOption(
        "--sandbox",
        one_of(SANDBOX_MODES),
        "Where its shell commands may write; when given, "
        "--dangerously-bypass-approvals-and-sandbox (the default) is not passed.",
    ),
    "approval_policy": KindOption(
        None,
        one_of(APPROVAL_POLICIES),
        "When it asks before running a command (config key approval_policy); only with "
        "`sandbox` (nobody answers in a loop: never is the one that fits).",
    ),
    "profile": KindOption(
        "--profile",
        string,
        "A profile of its config ($CODEX_HOME/<name>.config.toml laid over config.toml); "
        "a resumed session keeps the one it started with.",
    ),
    "config": KindOption(
        None,
        CONFIG_CHECK,
        "Config overrides, each passed as `-c key=value` (the value written as TOML), "
        "e.g. `{model_reasoning_effort: high}`.",
    ),
    "extra_args": KindOption(
        None, string_list, "Further codex exec arguments, passed verbatim and not checked."
    ),
}


def toml_value(value: Any) -> str:
    """*value* written as TOML (a JSON string is a TOML basic string)."""
    import json  # here: checking a loop file does not import the readers of output

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def codex_flags(options: Mapping[str, Any], *, resume: bool = False) -> list[str]:
    """The codex exec arguments *options* stand for, sandbox first, `extra_args` last; for
    `codex exec resume` when *resume* (its sandbox as `-c sandbox_mode=...`, no profile)."""
    sandbox = options.get("sandbox")
    if sandbox is None:
        out = [BYPASS_FLAG]
    elif resume:
        out = ["-c", f"sandbox_mode={toml_value(sandbox)}"]
    else:
        out = ["--sandbox", str(sandbox)]
    if options.get("model") is not None:
        out += ["--model", str(options["model"])]
    if options.get("profile") is not None and not resume:
        out += ["--profile", str(options["profile"])]
    if options.get("approval_policy") is not None:
        out += ["-c", f"approval_policy={toml_value(options['approval_policy'])}"]
    for key, value in (options.get("config") or {}).items():
        out += ["-c", f"{key}={toml_value(value)}"]
    out += [str(arg) for arg in options.get("extra_args") or []]
    return out
