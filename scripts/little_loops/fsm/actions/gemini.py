"""The Gemini CLI agent (`agent: gemini`): `gemini --output-format stream-json --prompt=...`, read.

Flags and outputs are those of `@google/gemini-cli` 0.61 (`gemini --help`). Its session
lives in `~/.gemini/tmp/<project>/chats/`; `--resume <session id>` continues it. It
retries a refused API call itself (up to `general.maxAttempts` of its settings, 10 by
default) and then ends with a `result` line whose status is `error`.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.agent_kind import exit_failed, key_given, login_file, said_lines
from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.spec import (
    GAVE_WAY,
    ActionKindSpec,
    Interpolation,
    KindOption,
    OwnRetry,
)
from little_loops.fsm.values.value_checks import boolean, one_of, string, string_list

if TYPE_CHECKING:
    from little_loops.fsm.actions.gemini_stream import Session
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.ratelimit import ClaudeLimit
    from little_loops.fsm.actions.request import ActionRequest, ActionResult

GEMINI_INSTALL_HINT = "install Gemini CLI: npm install -g @google/gemini-cli"
# What of ~/.gemini it writes while it runs (a sandbox keeps the rest read-only:
# settings.json and its hooks and MCP servers, .env, GEMINI.md, extensions, commands,
# skills, policies, agents): its sessions and logs (tmp/), history, and a refreshed login.
# Its registry of projects (projects.json, replaced by a rename) is the step's own.
GEMINI_WRITES = ("tmp/", "history/", "oauth_creds.json", "google_accounts.json")
GEMINI_CODE = ("tmp/bin/",)  # the programs it downloads (ripgrep) and runs
GEMINI_LOGIN_HINT = (
    "set GEMINI_API_KEY (a key from https://aistudio.google.com/apikey), or run gemini once "
    "and choose Login with Google"
)
# Gemini CLI's own retries of a refused call: none to cap from here. 0.61 reads them only
# from its settings files (`general.maxAttempts`, 10 by default; a system file counts only
# when root owns it and every folder above it), no variable or flag, and ll-loop does not
# write the user's files. A daily quota (a usage limit) is not retried: one request, then
# ll-loop decides; a per-minute quota (a rate limit) is retried with its backoff (5 s, 12 s,
# ...): GEMINI_OWN_RETRY ends it at its second retry (docs/agents/gemini.md).
GEMINI_RETRY_ENV: dict[str, str] = {}
# What 0.61 prints on stderr (its debugLogger.warn) before it waits to retry a 429 itself:
# "Attempt 1 failed: <the API's message, several lines>. Retrying after 5186ms..." for a
# quota with a retry delay, else "Attempt 1 failed with status 429. Retrying with
# backoff..." or "Attempt 1 failed with 429 error (no Retry-After header). Retrying with
# backoff...". Its first retry of a 429 (5 s or the API's delay) is let through: a session
# that hits a per-minute quota once goes on as it is; a second refusal ends it (two
# requests), and ll-loop decides. A 5xx (an overloaded or failing API: "Attempt 1 failed
# with status 503. Retrying with backoff...", or "with 5xx error") ends it at its first
# retry, before its own 5 s backoff: ll-loop's overload wait decides (usage_limit reads it
# as OVERLOADED, never a usage limit).
GEMINI_OWN_RETRY = OwnRetry(
    begins=r"^Attempt \d+ failed(?:: | with status (?:429|5\d\d)\b| with (?:429|5xx) error\b)",
    ends=r"\. Retrying (?:after \d+ms|with backoff)\.\.\.",
    allowed=1,
    at_once=r"^Attempt \d+ failed with (?:status 5\d\d\b|5xx error\b)",
)
# Added to every Gemini action: one JSON object a line, read by gemini_stream.
GEMINI_JSON_FLAGS: tuple[str, ...] = ("--output-format", "stream-json")
# The approval mode of an action without `approval_mode:`: every tool call runs without
# asking (nobody is there to answer), as Claude Code runs with its permissions skipped.
DEFAULT_APPROVAL_MODE = "yolo"
APPROVAL_MODES: tuple[str, ...] = ("default", "auto_edit", "yolo", "plan")
# The oldest Gemini CLI checked to have everything used here (stream-json, --approval-mode,
# --policy, --include-directories, --resume by session id): run with 0.61.0.
MIN_VERSION: tuple[int, int, int] = (0, 30, 0)

GEMINI_OPTIONS: dict[str, KindOption] = {
    "model": KindOption("--model", string, "The model of the session (gemini-2.5-pro, ...)."),
    "approval_mode": KindOption(
        "--approval-mode",
        one_of(APPROVAL_MODES),
        "Which tool calls run without asking: default (none: a headless session is not "
        "offered the tools that would ask, such as the shell), auto_edit (file edits), "
        "yolo (all, the default here), plan (read-only).",
    ),
    "sandbox": KindOption(
        None, boolean, "Run the tools in Gemini CLI's sandbox (--sandbox; docker or podman)."
    ),
    "include_directories": KindOption(
        "--include-directories",
        string_list,
        "More directories the session may read and change, beside the project's.",
    ),
    "allowed_tools": KindOption(
        "--allowed-tools",
        string_list,
        "Tools that run without asking in approval mode default or auto_edit "
        "(`run_shell_command(git status)`); deprecated by Gemini CLI in favour of policy.",
    ),
    "policy": KindOption(
        "--policy", string_list, "Policy files or folders of Gemini CLI's policy engine."
    ),
    "extensions": KindOption(
        "--extensions", string_list, "The only Gemini CLI extensions to load (all when not given)."
    ),
    "extra_args": KindOption(
        None, string_list, "Further gemini arguments, passed verbatim and not checked."
    ),
}


def gemini_flags(options: Mapping[str, Any]) -> list[str]:
    """The gemini arguments *options* stand for: approval mode first, `extra_args` last;
    each item of a list is its own `--flag item` (a path may hold a comma)."""
    out = ["--approval-mode", str(options.get("approval_mode") or DEFAULT_APPROVAL_MODE)]
    for name, option in GEMINI_OPTIONS.items():
        value = options.get(name)
        if value is None or option.flag is None or name == "approval_mode":
            continue
        for item in value if isinstance(value, list) else [value]:
            out += [option.flag, str(item)]
    if options.get("sandbox") is not None:
        out.append("--sandbox" if options["sandbox"] else "--sandbox=false")
    out += [str(arg) for arg in options.get("extra_args") or []]
    return out


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`gemini` with the request's `gemini:` options, stream-json output, the session it
    resumes, and the prompt as `--prompt=TEXT` (one argument: a prompt starting with `-`
    is no flag)."""
    flags = gemini_flags(request.options or {})
    resume = ["--resume", request.resume_session] if request.resume_session else []
    return [*program, *flags, *GEMINI_JSON_FLAGS, *resume, f"--prompt={request.action}"]


def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
    """Gemini's answer, tokens, cost, session and tool calls, read from its transcript (the
    output file when there is one: all of it); a failure becomes `error`."""
    from little_loops.fsm.actions.claude import file_lines
    from little_loops.fsm.actions.gemini_stream import read_session

    path = result.output_path
    session = read_session(file_lines(path) if path else result.output.splitlines())
    if not session.seen and path:
        session = read_session(result.output.splitlines())  # the file is gone
    if not session.seen:
        return _failed(result, result.output)
    more = [f"(and {session.more_tools} more lines)"] if session.more_tools else []
    tools = session.tools + more
    changes: dict[str, Any] = {
        "output": session.answer,
        "truncated": False,
        "session_id": session.session_id,
        "usage": session.usage() if session.report else None,
        "model_costs": session.model_costs() or None,
        "tool_calls": tools or None,
        "tools_failed": len(session.failed_ids | _recorded_failures(session, request)),
    }
    cost = session.cost() if session.report else None
    if cost is not None:
        changes["cost_usd"] = cost
    failure = session.failure()
    if result.error is None and failure is not None:
        first = failure.strip().splitlines() or ["no detail"]
        changes["error"] = f"gemini reported an error: {first[0]}"
        changes["exit_code"] = result.exit_code or 1
    elif result.error is None and session.report is None and result.exit_code == 0:
        changes["error"] = "gemini ended without its final report (the session did not finish)"
        changes["exit_code"] = 1
    return _failed(dataclasses.replace(result, **changes), result.stderr)


def _recorded_failures(session: Session, request: ActionRequest) -> set[str]:
    """The calls of this run that Gemini's own record says failed (a command that printed
    something, then exited non-zero: stream-json does not say so). The record holds the
    whole session: a resumed one's earlier calls are not this run's."""
    from little_loops.fsm.actions.gemini_record import failed_calls

    return failed_calls(session.session_id, request.env) & session.tool_ids


def _failed(result: ActionResult, text: str) -> ActionResult:
    """*result* with `error` set when gemini exited non-zero without saying why."""
    if result.error is not None or result.exit_code == 0:
        return result
    plain = re.sub(_ANSI, "", text or result.stderr)
    if _UNTRUSTED in plain:
        return dataclasses.replace(result, error=UNTRUSTED_ERROR)
    lines = [line for line in said_lines(plain) if not line.startswith(_NOISE)]
    detail = next((line for line in lines if line.startswith("Error")), None)
    return exit_failed(result, "gemini", detail or next(iter(lines), None))


# What Gemini CLI prints on stderr before anything of the session's own.
_NOISE = (
    "Warning: 256-color",
    "YOLO mode is enabled",
    "Ripgrep is not available",
    "[STARTUP]",
    "Approval mode overridden",
)
_ANSI = r"\x1b\[[0-9;]*m"
# A folder it has not been told to trust (exit 55, nothing sent): "Gemini CLI is not running
# in a trusted directory. To proceed, either use `--skip-trust`, set ...".
_UNTRUSTED = "not running in a trusted directory"
UNTRUSTED_ERROR = (
    "gemini does not trust the loop's folder: set GEMINI_CLI_TRUST_WORKSPACE=true, trust it "
    "in an interactive gemini session, or give the state `gemini: {extra_args: [--skip-trust]}`"
)
# `--resume ID` of a session it has no file for (exit 42, nothing sent), e.g.
# 'Error resuming session: Invalid session identifier "…"'.
NO_SESSION = "Error resuming session:"
# Patterns, compiled when a result is read (not when a loop file is checked).
# A refused call (after its own retries): the API's 429 RESOURCE_EXHAUSTED message, or its
# own words for a daily quota; a 503 when the model is overloaded.
_DAILY = r"(?i)daily quota|PerDay|\bDaily"
_QUOTA = (
    r"(?i)\b429\b|RESOURCE_EXHAUSTED|exceeded your current quota|Quota exceeded|"
    r"exhausted your capacity|rate limit"
)
_OVERLOADED = (
    r"\b503\b|model is overloaded|UNAVAILABLE|"
    rf"^{re.escape(GAVE_WAY)}Attempt \d+ failed with (?:status 5\d\d|5xx)"
)
# "Please retry in 38.3s." / "Suggested retry after 38s." / "retry in 500ms"
_RETRY_IN = r"(?i)(?:retry in|retry after)\s+([0-9.]+)\s*(ms|s)\b"


def usage_limit(result: ActionResult, now: float | None = None) -> ClaudeLimit | None:
    """The quota or rate limit the session ended on: a daily quota is USAGE_LIMIT, other
    429s RATE_LIMIT (resetting when the API said to retry), a 503 (or any 5xx it was ended
    retrying) OVERLOADED."""
    from little_loops.fsm.actions.ratelimit import OVERLOADED, RATE_LIMIT, USAGE_LIMIT
    from little_loops.fsm.actions.ratelimit import ClaudeLimit as Limit

    if result.error is None:
        return None  # a session that finished is never read as a limit
    text = "\n".join(part for part in (result.error, result.output, result.stderr) if part)
    message = result.error.removeprefix("gemini reported an error: ")[:200]
    if re.search(_DAILY, text) and "quota" in text.lower():
        return Limit(USAGE_LIMIT, None, message)
    if re.search(_QUOTA, text):
        found = re.search(_RETRY_IN, text)
        resets = None
        if found is not None:
            seconds = float(found.group(1)) / (1000 if found.group(2).lower() == "ms" else 1)
            resets = (time.time() if now is None else now) + seconds
        return Limit(RATE_LIMIT, resets, message)
    if re.search(_OVERLOADED, text):
        return Limit(OVERLOADED, None, message)
    return None


def cannot_run(result: ActionResult) -> str | None:
    """Why Gemini CLI's *result* says it cannot run here: a folder it does not trust."""
    return UNTRUSTED_ERROR if result.error == UNTRUSTED_ERROR else None


def lost_session(result: ActionResult) -> bool:
    """True when Gemini CLI could not resume the session it was asked to (see NO_SESSION)."""
    return result.exit_code != 0 and (NO_SESSION in result.stderr or NO_SESSION in result.output)


def readable(line: str) -> list[str]:
    """One line of the stream-json transcript as the lines a person reads."""
    from little_loops.fsm.actions.gemini_stream import readable as lines_of

    return lines_of(line)


def latest_step(path: str) -> str | None:
    """The session's latest step, from its transcript file, for the progress ticker."""
    from little_loops.fsm.actions.gemini_stream import latest_step as step_of

    return step_of(path)


# Where Gemini CLI finds a key or login besides the environment: a Google login's token,
# a key it stored itself, `.env` files it reads, and its settings' chosen auth type.
_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_AUTH_SWITCHES = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GEMINI_CLI_USE_COMPUTE_ADC")
_LOGIN_FILES = (".gemini/oauth_creds.json", ".gemini/gemini-credentials.json")
_ENV_FILES = (".gemini/.env", ".env")


def uncounted(machine: Machine, options: Mapping[str, Any]) -> str | None:
    """Why a Gemini session with *options* cannot be priced: a model named with no known
    price (Gemini CLI names the model it ran on, and its default is a priced family)."""
    from little_loops.fsm.facts.pricing import price_of

    model = options.get("model")
    if isinstance(model, str) and model and price_of(model) is None:
        return f"its model '{model}' has no known price (priced: the gemini-* families)"
    return None


def ready(machine: Machine) -> str | None:
    """Why Gemini CLI cannot run here (no key or login; a folder it does not trust; a
    version older than MIN_VERSION), or None. Its version is read only when a key or login
    is there."""
    if not _has_login(machine):
        return f"gemini has no API key or login: {GEMINI_LOGIN_HINT}"
    if not _trusted(machine):
        return UNTRUSTED_ERROR
    from little_loops.fsm.actions.machine import shown_version, version_numbers

    version = version_numbers(machine.version("gemini"))
    if version is None:
        return None  # it did not say (a wrapper): let it run and say what is wrong
    if version < MIN_VERSION:
        least = shown_version(MIN_VERSION)
        return (
            f"gemini {shown_version(version)} is too old (ll-loop needs {least} or newer): "
            "npm install -g @google/gemini-cli@latest"
        )
    return None


_SKIP_TRUST = "--skip-trust"


def _trusted(machine: Machine) -> bool:
    """Whether Gemini CLI (0.61), run headless in *machine*'s folder, trusts it: the
    environment says so, the run passes --skip-trust, its settings turn folder trust off,
    or the longest rule of its trustedFolders.json that holds the folder trusts it."""
    import json  # read only in the preflight: checking a loop file stays light
    import os

    env = machine.env
    said = env.get("GEMINI_CLI_TRUST_WORKSPACE")
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or said == "false":
        return False
    if said == "true" or _SKIP_TRUST in machine.args:
        return True
    try:
        settings = json.loads((machine.home / ".gemini/settings.json").read_text(encoding="utf-8"))
        trust = settings["security"]["folderTrust"]["enabled"]
    except (OSError, ValueError, KeyError, TypeError):
        trust = None
    if trust is False:
        return True
    rules_file = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or ""
    try:
        path = Path(rules_file) if rules_file else machine.home / ".gemini/trustedFolders.json"
        rules = json.loads(path.read_text(encoding="utf-8") if path.is_file() else "{}")
    except (OSError, ValueError):
        return False
    here = os.path.realpath(machine.cwd)
    best, level = -1, None
    for rule, said in rules.items() if isinstance(rules, dict) else ():
        folder = os.path.dirname(rule) if said == "TRUST_PARENT" else rule
        real = os.path.realpath(folder)
        inside = here == real or here.startswith(real.rstrip(os.sep) + os.sep)
        if inside and len(rule) > best:
            best, level = len(rule), said
    return level in ("TRUST_FOLDER", "TRUST_PARENT")


def _has_login(machine: Machine) -> bool:
    import json  # read only in the preflight: checking a loop file stays light

    env = machine.env
    if key_given(env, _KEYS):
        return True
    if any(env.get(name, "").lower() == "true" for name in (*_AUTH_SWITCHES, "CLOUD_SHELL")):
        return True
    home = machine.home
    if login_file(home / name for name in _LOGIN_FILES):
        return True
    for name in _ENV_FILES:
        try:
            text = (home / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(re.search(rf"^\s*(?:export\s+)?{key}\s*=\s*\S", text, re.M) for key in _KEYS):
            return True
    try:
        settings = json.loads((home / ".gemini/settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    auth = settings.get("security", {}).get("auth", {}) if isinstance(settings, dict) else {}
    return isinstance(auth, dict) and isinstance(auth.get("selectedType"), str)


SPEC = ActionKindSpec(
    name="gemini",
    summary="a prompt sent to Gemini CLI (gemini --prompt)",
    action_types=(),
    argv=argv,
    program=("gemini",),
    interpolation=Interpolation.TEXT,
    default_evaluator="llm_structured",
    default_timeout=1800,  # a session legitimately takes many minutes
    agent="Gemini",
    options_key="gemini",
    options=GEMINI_OPTIONS,
    retry_env=GEMINI_RETRY_ENV,
    own_retry=GEMINI_OWN_RETRY,
    state_keys=("gemini", "session", "session_key"),
    options_doc="Gemini CLI options: each becomes a flag of the `gemini` command line.",
    loop_options_doc=(
        "Gemini CLI options for every state whose agent is gemini; a state's own `gemini:` "
        "is laid over them key by key."
    ),
    state_options_doc=(
        "Gemini CLI options of this state's session, laid key by key over the loop's `gemini:`."
    ),
    sessions=True,
    loop_idle_timeout=False,
    quiet_seconds=120,
    quiet_reason=(
        "Gemini CLI prints a line when a tool call starts and ends and as the answer streams, "
        "so a long tool call (a test run) or its own retries of a refused call are silent"
    ),
    home=AgentHome(
        paths=(".gemini",),  # its settings, login and sessions
        writes=tuple(f".gemini/{name}" for name in GEMINI_WRITES),
        code=tuple(f".gemini/{name}" for name in GEMINI_CODE),
    ),
    install_hint=GEMINI_INSTALL_HINT,
    login_hint=GEMINI_LOGIN_HINT,
    ready=ready,
    uncounted=uncounted,
    no_judge=(
        "Gemini CLI has no option that makes it answer JSON checked against a schema "
        "(no --json-schema or --output-schema), so it cannot be the llm_structured judge"
    ),
    finish=finish,
    usage_limit=usage_limit,
    lost_session=lost_session,
    cannot_run=cannot_run,
    readable=readable,
    latest_step=latest_step,
    label="Gemini session",
    runs_as="goes to Gemini CLI",
    only_states="a prompt state whose agent is gemini runs Gemini CLI",
)
