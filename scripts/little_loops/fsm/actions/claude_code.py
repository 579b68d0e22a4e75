"""The Claude Code action kind (`action_type: prompt`, `slash_command`): `claude -p`, read."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.actions.agent_kind import key_given, login_file
from little_loops.fsm.actions.claude_options import CLAUDE_OPTIONS, claude_flags
from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.ratelimit import AgentLimit
    from little_loops.fsm.actions.request import ActionRequest, ActionResult

# The readers of Claude Code's transcript (json, regular expressions) are imported when an
# action has run, not when a loop file is checked: `ll-loop validate` stays light.

CLAUDE_INSTALL_HINT = "install Claude Code: npm install -g @anthropic-ai/claude-code"
CLAUDE_ROOT_ERROR = (
    "claude refuses --dangerously-skip-permissions as root; "
    "set IS_SANDBOX=1 in a sandbox, or run as a normal user"
)
# What Claude Code (2.1.x) prints on stderr, exit 1, when run as root without IS_SANDBOX=1:
# "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
_CLAUDE_ROOT_REFUSAL = "cannot be used with root/sudo privileges"
CLAUDE_LOGIN_HINT = "log in to Claude Code: run `claude` and /login, or set ANTHROPIC_API_KEY"
# What Claude Code (2.1.x) answers, exit 1 and no API call, with no login or key it can use:
# "Not logged in · Please run /login" (a rejected key: "Invalid API key · Please run /login").
_NO_LOGIN = ("Not logged in", "Invalid API key")
_LOGIN_TAIL = "Please run /login"
# Where Claude Code finds a key or login (besides macOS's keychain, which is not read here):
# the environment, its OAuth credentials file, a key it stored, or a settings' key helper.
_LOGIN_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)
# Claude Code retries a refused API call 10 times with backoff by default (a usage limit's
# 429 eleven times, minutes with a spinner): two, then our rate-limit handling decides.
CLAUDE_RETRY_ENV = {"CLAUDE_CODE_MAX_RETRIES": "2"}
# An idle_timeout below this on a Claude action risks ending a session that is working.
CLAUDE_QUIET_SECONDS = 120
# Its folders: ~/.claude, or $CLAUDE_CONFIG_DIR when set (which then holds its .claude.json).
CLAUDE_FOLDERS = (".claude", "$CLAUDE_CONFIG_DIR")
# What of them it writes while it runs (a sandbox keeps the rest read-only: settings.json
# and its hooks, plugins, commands, agents, skills, CLAUDE.md): its sessions and their
# memory (projects/), todos, file history, plans, debug logs, and a refreshed login.
CLAUDE_WRITES = (
    "projects/",
    "sessions/",
    "session-env/",
    "todos/",
    "file-history/",
    "plans/",
    "debug/",
    "statsig/",
    ".credentials.json",
)


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`claude` with the request's `claude:` options, stream-json output, the session it
    resumes, and the prompt."""
    from little_loops.fsm.actions.claude import CLAUDE_JSON_FLAGS

    flags = claude_flags(request.options or {})
    resume = ["--resume", request.resume_session] if request.resume_session else []
    # `-p` ends the (variadic) option values: the prompt cannot be taken for one; `--`
    # ends the options, so a prompt starting with `-` (`--settings=...`) is no flag.
    return [*program, *flags, *CLAUDE_JSON_FLAGS, *resume, "-p", "--", request.action]


def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
    """Claude's answer, cost, tokens, session and tool calls read from its transcript."""
    from little_loops.fsm.actions.claude import apply_report, with_tool_calls

    if (
        result.error is None
        and result.exit_code != 0
        and (_CLAUDE_ROOT_REFUSAL in result.stderr or _CLAUDE_ROOT_REFUSAL in result.output)
    ):
        result.error = CLAUDE_ROOT_ERROR
    transcript = result.output  # apply_report replaces it with Claude's answer
    return with_tool_calls(apply_report(result), transcript)


def cannot_run(result: ActionResult) -> str | None:
    """Why Claude Code's *result* says it cannot run here: refused as root, or no login."""
    if result.error == CLAUDE_ROOT_ERROR:
        return CLAUDE_ROOT_ERROR
    if result.error is None:
        return None
    said = f"{result.output}\n{result.error}"
    if _LOGIN_TAIL in said and any(words in said for words in _NO_LOGIN):
        return f"claude is not logged in: {CLAUDE_LOGIN_HINT}"
    return None


def ready(machine: Machine) -> str | None:
    """Why Claude Code cannot run here (no key and no login it can use), or None. On macOS
    its login is in the keychain, which is not read: it counts as logged in."""
    import json  # read only in the preflight: checking a loop file stays light
    import sys

    env = machine.env
    if sys.platform == "darwin" or key_given(env, _LOGIN_VARIABLES):
        return None
    config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
    folder = config or machine.home / ".claude"
    if login_file([folder / ".credentials.json"]):
        return None
    for path, keys in (
        ((config or machine.home) / ".claude.json", ("primaryApiKey",)),
        (folder / "settings.json", ("apiKeyHelper", "env")),
    ):
        try:  # a regular file only: a FIFO would hang the preflight
            data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and any(_given(data.get(key)) for key in keys):
            return None
    return f"claude has no API key and no login: {CLAUDE_LOGIN_HINT}"


def _given(value: object) -> bool:
    """A key's value in Claude Code's files that can log it in: a text, or (`env`) a
    mapping naming one of its login variables."""
    if isinstance(value, dict):
        return any(_given(value.get(name)) for name in _LOGIN_VARIABLES)
    return isinstance(value, str) and bool(value.strip())


def usage_limit(result: ActionResult) -> AgentLimit | None:
    """The rate, overload or usage limit the session ended on (ratelimit.claude_limit)."""
    from little_loops.fsm.actions.ratelimit import claude_limit

    return claude_limit(result)


def lost_session(result: ActionResult) -> bool:
    """True when Claude Code could not resume the session it was asked to."""
    from little_loops.fsm.actions.claude import lost_session as lost

    return lost(result)


def readable(line: str) -> list[str]:
    """One line of the stream-json transcript as the lines a person reads."""
    from little_loops.fsm.actions.transcript import readable as lines_of

    return lines_of(line)


def latest_step(path: str) -> str | None:
    """The session's latest step, from its transcript file, for the progress ticker."""
    from little_loops.fsm.actions.claude import latest_step as step_of

    return step_of(path)


SPEC = ActionKindSpec(
    name="claude",
    summary="a prompt or slash command sent to Claude Code (claude -p)",
    action_types=("prompt", "slash_command"),
    argv=argv,
    program=("claude",),
    interpolation=Interpolation.TEXT,
    default_evaluator="llm_structured",
    default_timeout=1800,  # a session legitimately takes many minutes
    agent="Claude",
    options_key="claude",
    options=CLAUDE_OPTIONS,
    state_keys=("claude", "session", "session_key"),
    options_doc="Claude Code options: each becomes a flag of the `claude` command line.",
    loop_options_doc=(
        "Claude Code options for every prompt and slash-command state; a state's own "
        "`claude:` is laid over them key by key."
    ),
    state_options_doc=(
        "Claude Code options of this state's session, laid key by key over the loop's `claude:`."
    ),
    sessions=True,
    loop_idle_timeout=False,
    quiet_seconds=CLAUDE_QUIET_SECONDS,
    quiet_reason=(
        "Claude Code prints a line only when a message or a tool call is finished, so a long "
        "reply or a long tool call (a test run) is silent for longer"
    ),
    home=AgentHome(
        paths=(*CLAUDE_FOLDERS, ".claude.json"),  # its settings, sessions, login
        writes=tuple(f"{folder}/{name}" for folder in CLAUDE_FOLDERS for name in CLAUDE_WRITES),
        # It runs --dangerously-skip-permissions as root only inside a sandbox it is told of.
        env={"CLAUDE_CODE_BUBBLEWRAP": "1"},
    ),
    install_hint=CLAUDE_INSTALL_HINT,
    login_hint=CLAUDE_LOGIN_HINT,
    ready=ready,
    retry_env=CLAUDE_RETRY_ENV,
    finish=finish,
    cannot_run=cannot_run,
    usage_limit=usage_limit,
    lost_session=lost_session,
    readable=readable,
    latest_step=latest_step,
    label="Claude session",
    runs_as="goes to Claude Code",
    only_states="a prompt or slash-command state runs Claude Code",
)
