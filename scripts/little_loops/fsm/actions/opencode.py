"""The opencode action kind (`agent: opencode`): `opencode run --format json`, the prompt on stdin.

opencode (the `opencode-ai` package on npm, 1.x) runs a model of any provider it is logged
in to (`opencode auth login`, kept in ~/.local/share/opencode/auth.json) or that its
config declares (`opencode.json`, `$OPENCODE_CONFIG`, `$OPENCODE_CONFIG_CONTENT`). The
prompt goes on stdin: `opencode run` joins its message arguments and wraps one that holds
a space in quotes, and reads `007` as the number 7, so an argument would not arrive as
written. Its events are read by opencode_events, its limits by opencode_limits.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.agent_kind import exit_failed, key_given, said_lines
from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.spec import ActionKindSpec, KindOption, OwnRetry, PromptInput
from little_loops.fsm.values.value_checks import boolean, pattern, string, string_list

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.opencode_events import Session
    from little_loops.fsm.actions.ratelimit import ClaudeLimit
    from little_loops.fsm.actions.request import ActionRequest, ActionResult

PROGRAM = "opencode"
INSTALL_HINT = "install opencode: npm install -g opencode-ai"
LOGIN_HINT = (
    "run `opencode auth login`, set a provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), "
    "or declare a provider in opencode.json"
)
# Flags of every opencode action: its events as JSON lines, one a line.
# opencode's own retries of a refused call: none to cap from here. 1.18 retries a 429 or
# 5xx five times (a fixed cap, no setting, variable or flag), waiting what the answer's
# retry-after says (no upper bound), else 2, 4, 8, 16, 30 s, printing nothing of it unless
# its log is on stderr: OPENCODE_OWN_RETRY ends it at its first retry of a rate or usage
# limit (docs/agents/opencode.md).
OPENCODE_RETRY_ENV: dict[str, str] = {}
JSON_FLAGS: tuple[str, ...] = ("--format", "json")
# Its log on stderr at INFO, for the line that says it sent a refused call again
# (OwnRetry.retried); the step keeps only its ERROR lines (OwnRetry.quiet), as with
# `--log-level ERROR`: nothing at all in a run without an error, and stdout's events are
# the same (measured with 1.18). A level the state's `extra_args` sets wins, its lines all
# kept (1.18 fails on `--log-level` given twice; every level prints errors).
LOG_FLAGS: tuple[str, ...] = ("--print-logs",)
LOG_LEVEL: tuple[str, ...] = ("--log-level", "INFO")
# The log line 1.18 prints for each refused call of the session (not of its title's
# side request, `small=true`), before it waits to retry: `timestamp=... level=ERROR
# run=... message="stream error" providerID=... small=false agent=build ...
# error.error="AI_APICallError: You exceeded your current quota, ..."`. Only the words of
# a rate or usage limit end it at once. The line of any other refusal (a 429 whose words
# name no limit, a 5xx, a refused key: the line has no status) ends it when it still runs
# OPENCODE_SETTLE seconds later without having sent the call again, or at a second such
# line: what it does not retry (a refused key, a bad request) it gives up on at once, with
# its own error event; what it retries, it first waits for (`retry-after`, an hour if it
# says an hour; else 2 s, 4 s, ...), then logs the call's `message=stream` INFO line again
# (small=false), after which its answer may take as long as any call's. 15 s: its first
# wait without a `retry-after` (2 s), with room for a loaded machine. Under a level the
# state sets below INFO that line never comes: the retried call must answer in the 15 s.
OPENCODE_SETTLE = 15.0
OPENCODE_OWN_RETRY = OwnRetry(
    begins=(
        # Atomic groups: each field is looked for once (its last), so a long line of
        # repeated fields is read in linear time, not with backtracking over each pair.
        r"^timestamp=\S+ level=ERROR (?!.*\bsmall=true\b)(?>.*\bmessage=\"stream error\" )"
        r"(?i:(?>.*\berror\.error=\")(?P<said>AI_APICallError: (?=.*(?:quota|rate.?limit|"
        r"too many requests|usage.?limit|resource.?exhausted|\b429\b))[^\"]*))"
    ),
    allowed=0,
    maybe=(
        r"^timestamp=\S+ level=ERROR (?!.*\bsmall=true\b)(?>.*\bmessage=\"stream error\" )"
        r"(?>.*\berror\.error=\")(?P<said>AI_APICallError: [^\"]*)"
    ),
    settle=OPENCODE_SETTLE,
    retried=r"^timestamp=\S+ level=INFO (?!.*\bsmall=true\b)(?>.*\bmessage=stream )",
    quiet=r"timestamp=\S+ level=(?!ERROR )[A-Z]+ ",
)
# With a log level of the state's own (`extra_args`), every line it prints is kept.
OPENCODE_OWN_RETRY_AS_ASKED = dataclasses.replace(OPENCODE_OWN_RETRY, quiet=None)
# A line of its log (LOG_FLAGS) rather than words of its own on stderr.
_LOG_LINE = r"^timestamp=\S+ level=[A-Z]+ "
# What opencode 1.18 prints on stderr (exit 1, no event) for `--session ID` it has no
# record of (another machine, a removed ~/.local/share/opencode/opencode.db).
NO_SESSION = "Session not found"
# Why an opencode session that used tokens and said a cost of 0 is not counted.
UNPRICED = (
    "opencode said a cost of $0 for the tokens it used: it has no price for its model "
    "(give the model a `cost` in opencode.json, or name one ll-loop prices: "
    "`opencode: {model: openai/gpt-5}`)"
)
# The oldest major version whose `run --format json` events this module reads.
SUPPORTED_MAJOR = 1
# An idle_timeout below this on an opencode action risks ending a session that is working.
QUIET_SECONDS = 120
# Environment variables that hold a key of a provider opencode knows.
KEY_VARIABLES: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "OPENCODE_API_KEY",
    "OPENCODE_AUTH_CONTENT",
)

OPENCODE_OPTIONS: dict[str, KindOption] = {
    "model": KindOption(
        "--model",
        pattern(r"^[^/\s]+/\S+$", "provider/model, e.g. openai/gpt-5"),
        "The model, as provider/model (`openai/gpt-5`, `anthropic/claude-sonnet-4-5`).",
    ),
    "agent": KindOption("--agent", string, "The opencode agent of the session (build, plan, ...)."),
    "variant": KindOption(
        "--variant", string, "The model variant: a provider's reasoning effort (high, max, ...)."
    ),
    "auto": KindOption(
        "--auto",
        boolean,
        "Approve every permission the config does not deny (else a tool call that needs "
        "approval is refused).",
    ),
    "thinking": KindOption("--thinking", boolean, "Print the model's thinking into the log."),
    "pure": KindOption("--pure", boolean, "Run without external plugins."),
    "title": KindOption("--title", string, "The title of the session."),
    "files": KindOption("--file", string_list, "Files attached to the prompt."),
    "extra_args": KindOption(
        None, string_list, "Further `opencode run` arguments, passed verbatim and not checked."
    ),
}


def flags(options: Mapping[str, Any]) -> list[str]:
    """The `opencode run` arguments *options* stand for, `extra_args` last."""
    out: list[str] = []
    for name, option in OPENCODE_OPTIONS.items():
        value = options.get(name)
        if value is None or option.flag is None:
            continue
        if isinstance(value, bool):
            out += [option.flag] if value else []
        elif isinstance(value, list):
            for item in value:
                out += [option.flag, str(item)]
        else:
            out += [option.flag, str(value)]
    return out + [str(arg) for arg in options.get("extra_args") or []]


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`opencode run` with JSON events, the request's options and the session it continues;
    the prompt is its stdin."""
    options = request.options or {}
    resume = ["--session", request.resume_session] if request.resume_session else []
    logs = [*LOG_FLAGS, *([] if _own_level(options) else LOG_LEVEL)]
    return [*program, "run", *JSON_FLAGS, *logs, *flags(options), *resume]


def _own_level(options: Mapping[str, Any]) -> bool:
    """Whether the state's `extra_args` set opencode's log level."""
    extra = [str(arg) for arg in options.get("extra_args") or []]
    return any(arg == "--log-level" or arg.startswith("--log-level=") for arg in extra)


def own_retry(request: ActionRequest) -> OwnRetry:
    """How opencode says it retries, for *request*: its INFO lines kept from the step
    unless the state asked for a log level itself."""
    return OPENCODE_OWN_RETRY_AS_ASKED if _own_level(request.options or {}) else OPENCODE_OWN_RETRY


def _session(result: ActionResult) -> Session:
    from little_loops.fsm.actions.claude import file_lines
    from little_loops.fsm.actions.opencode_events import read_session

    if result.output_path and os.path.exists(result.output_path):
        return read_session(file_lines(result.output_path))
    return read_session(result.output.splitlines())


def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
    """opencode's answer, tokens, cost, session and tool calls, read from its events; an
    error it reported, or its exit status, becomes `error`."""
    from little_loops.fsm.actions.opencode_events import error_text, plain
    from little_loops.fsm.facts.pricing import estimate_cost

    session = _session(result)
    if not session.seen:
        return _failed(result, plain(result.stderr) or result.output)
    changes: dict[str, Any] = {
        "output": session.answer,
        "usage": dict(session.tokens),
        "truncated": False,  # the events were read from the whole file
        "session_id": session.session_id,
        "tool_calls": session.tool_calls() or None,
        "tools_failed": session.tools_failed,
    }
    model = (request.options or {}).get("model")
    cost: float | None = session.cost
    if not cost and any(session.tokens.values()):
        # opencode says 0 for a model it has no price for (its events never name the
        # model): priced here when the loop names one ll-loop knows, else not counted.
        cost = estimate_cost(model, session.tokens) if isinstance(model, str) else None
        if cost is None:
            changes["uncounted"] = UNPRICED
    changes["cost_usd"] = cost
    if isinstance(model, str) and cost:
        changes["model_costs"] = {model: cost}
    if session.implausible is not None:  # neither counted nor priced: an error of its output
        changes.update(cost_usd=None, model_costs=None, uncounted=None)
        changes["error"] = result.error or f"opencode {session.implausible}"
    done = dataclasses.replace(result, **changes)
    if result.error is not None or session.implausible is not None:
        return done
    if session.errors:
        done.error = "opencode reported an error: " + error_text(session.errors[-1])
        done.exit_code = done.exit_code or 1
    elif result.exit_code != 0:
        return _failed(done, plain(result.stderr))
    elif session.steps == 0:
        done.error = "opencode ended without finishing a step (no answer)"
        done.exit_code = 1
    return done


def _failed(result: ActionResult, text: str) -> ActionResult:
    """*result* with `error` set when opencode exited non-zero: the first line of *text*
    that is not one of its log lines (the first line when every one is)."""
    import re

    lines = said_lines(text)
    lines = [line for line in lines if not re.match(_LOG_LINE, line)] or lines
    return exit_failed(result, "opencode", next(iter(lines), None))


def usage_limit(result: ActionResult) -> ClaudeLimit | None:
    """The rate, overload or usage limit the session ended on (opencode_limits)."""
    from little_loops.fsm.actions.opencode_limits import message_limit, session_limit

    if result.error is None:
        return None  # a session that finished is never read as a limit
    # Its events (with the headers that say when to retry) are in the output file; without
    # one, finish has put the answer in their place and the error message is what is left.
    found = session_limit(_session(result))
    return found if found is not None else message_limit(result.error)


def lost_session(result: ActionResult) -> bool:
    """True when opencode could not continue the session it was asked to (NO_SESSION)."""
    from little_loops.fsm.actions.opencode_events import plain

    return result.exit_code != 0 and NO_SESSION in plain(result.stderr)


def readable(line: str) -> list[str]:
    """One line of opencode's events as the lines a person reads."""
    from little_loops.fsm.actions.opencode_events import readable as lines_of

    return lines_of(line)


def latest_step(path: str) -> str | None:
    """The session's latest tool call or words, read from the end of its output file."""
    from little_loops.fsm.actions.opencode_events import describe_step
    from little_loops.fsm.actions.transcript import latest_step as latest

    return latest(path, describe_step)


def ready(machine: Machine) -> str | None:
    """Why opencode cannot run here (older than 1.x, no key or login), or None; whether it
    is on PATH is registry.agent_problem's question."""
    from little_loops.fsm.actions.machine import shown_version, version_numbers

    version = version_numbers(machine.version(PROGRAM))
    if version is not None and version[0] < SUPPORTED_MAJOR:
        old = shown_version(version)
        return f"opencode {old} is too old: ll-loop reads {SUPPORTED_MAJOR}.x ({INSTALL_HINT})"
    if logged_in(machine.env, machine.home):
        return None
    return f"opencode has no key or login: {LOGIN_HINT}"


def logged_in(env: Mapping[str, str], home: Path, cwd: Path | None = None) -> bool:
    """True when opencode has a login (its auth.json), a provider key in *env*, or a
    config (global, named in *env*, given in *env*, or the project's in *cwd*) that declares
    a provider. A config without one does not count: opencode writes one itself."""
    if key_given(env, KEY_VARIABLES):
        return True
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
    if _object_file(data / "opencode" / "auth.json"):
        return True
    if _declares_provider(env.get("OPENCODE_CONFIG_CONTENT") or ""):
        return True
    here = Path.cwd() if cwd is None else cwd
    files = [config / name for name in ("opencode.json", "opencode.jsonc", "config.json")]
    files += [here / "opencode.json", here / "opencode.jsonc", here / ".opencode" / "opencode.json"]
    if env.get("OPENCODE_CONFIG"):
        files.append(Path(env["OPENCODE_CONFIG"]))
    for path in files:
        try:  # a regular file only: a FIFO would hang the preflight
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
        except (OSError, ValueError):
            continue
        if _declares_provider(text):
            return True
    return False


# A string, a `//` comment or a `/* */` comment of JSONC; and a comma before a closing bracket.
_JSONC_PARTS = r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/'
_TRAILING_COMMA = r",(\s*[}\]])"


def _declares_provider(text: str) -> bool:
    """True when the opencode config *text* (JSON with comments) declares a provider."""
    import json  # not at import: checking a loop file stays light
    import re

    plain = re.sub(_JSONC_PARTS, lambda found: found.group(1) or "", text, flags=re.S)
    try:
        data = json.loads(re.sub(_TRAILING_COMMA, r"\1", plain))
    except ValueError:
        return False
    provider = data.get("provider") if isinstance(data, dict) else None
    return isinstance(provider, dict) and bool(provider)


def _object_file(path: Path) -> bool:
    import json  # not at import: checking a loop file stays light

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data)


SPEC = ActionKindSpec(
    name="opencode",
    summary="a prompt sent to opencode (opencode run --format json)",
    action_types=(),
    argv=argv,
    program=(PROGRAM,),
    default_evaluator="llm_structured",
    default_timeout=1800,  # a session legitimately takes many minutes
    agent="opencode",
    options_key="opencode",
    options=OPENCODE_OPTIONS,
    retry_env=OPENCODE_RETRY_ENV,
    own_retry=OPENCODE_OWN_RETRY,
    own_retry_for=own_retry,
    state_keys=("opencode", "session", "session_key"),
    options_doc="opencode options: each becomes a flag of the `opencode run` command line.",
    loop_options_doc=(
        "opencode options for every state whose agent is opencode; a state's own "
        "`opencode:` is laid over them key by key."
    ),
    state_options_doc=(
        "opencode options of this state, laid key by key over the loop's `opencode:`."
    ),
    sessions=True,
    loop_idle_timeout=False,
    quiet_seconds=QUIET_SECONDS,
    quiet_reason=(
        "opencode prints an event only when a part is finished, so a long reply or a long "
        "tool call (a test run, up to its bash tool's 2-minute default) is silent for longer"
    ),
    home=AgentHome(
        # Its XDG folders: login (auth.json) and sessions, config, cache, state.
        paths=(
            ".local/share/opencode",
            ".config/opencode",
            ".cache/opencode",
            ".local/state/opencode",
        ),
        # What it writes while it runs: its data (login, sessions and their database, logs,
        # snapshots) and state (recent models, prompt history). Its config (opencode.json,
        # plugins, agents, commands, MCP servers) and cache (the providers and programs it
        # installs and runs) stay read-only.
        writes=(".local/share/opencode/", ".local/state/opencode/"),
    ),
    install_hint=INSTALL_HINT,
    login_hint=LOGIN_HINT,
    ready=ready,
    prompt_input=PromptInput.STDIN,
    judge=None,
    no_judge=(
        "opencode cannot be the judge: `opencode run` has no option that makes it answer "
        "with JSON checked against a schema"
    ),
    finish=finish,
    usage_limit=usage_limit,
    lost_session=lost_session,
    readable=readable,
    latest_step=latest_step,
    label="opencode session",
    runs_as="goes to opencode",
    only_states="a prompt state whose agent is opencode",
)
