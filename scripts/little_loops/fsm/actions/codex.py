"""The Codex action kind (`agent: codex`): `codex exec --json`, its options, readiness and judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.agent_kind import key_given, login_file
from little_loops.fsm.actions.codex_options import BYPASS_FLAG, CODEX_OPTIONS, codex_flags
from little_loops.fsm.actions.home import AgentHome
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation, JudgeSupport

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.ratelimit import ClaudeLimit
    from little_loops.fsm.actions.request import ActionRequest, ActionResult

__all__ = ["BYPASS_FLAG", "SPEC", "argv", "judge_argv", "judge_verdict", "ready", "strict_schema"]

# The readers of its JSON lines (codex_events) are imported when an action has run, not
# when a loop file is checked: `ll-loop validate` stays light.

CODEX_INSTALL_HINT = "install Codex: npm install -g @openai/codex"
CODEX_LOGIN_HINT = "log in to Codex: run `codex login`, or set OPENAI_API_KEY"
# Where Codex finds an API key without a login (`codex login` writes $CODEX_HOME/auth.json).
KEY_VARIABLES: tuple[str, ...] = ("OPENAI_API_KEY", "CODEX_API_KEY")
# The oldest Codex whose flags and JSON lines this module was written against.
MIN_VERSION: tuple[int, int, int] = (0, 171, 0)
# Every action: JSON lines on stdout, and no refusal to run outside a git repository.
JSON_FLAGS: tuple[str, ...] = ("--json", "--skip-git-repo-check")
# The judge: read-only, no saved session, its answer checked against the schema file.
JUDGE_FLAGS: tuple[str, ...] = (*JSON_FLAGS, "--ephemeral", "--sandbox", "read-only")
# Codex's own retries of a refused call, which our fallback and rate-limit handling must not
# wait behind: none to cap. Codex 0.171 does not retry a 429 (a usage or a rate limit: one
# request, then ll-loop decides); its request_max_retries / stream_max_retries (a model
# provider's, in config.toml; no variable; refused for the built-in `openai` provider, also
# from `-c`) are for 5xx answers and dropped streams.
CODEX_RETRY_ENV: dict[str, str] = {}
# Codex prints a line only when an item is done; a long command (a test run) is silent.
CODEX_QUIET_SECONDS = 120
CODEX_HOME = (".codex", "$CODEX_HOME")  # its login, config and sessions
# What of them it writes while it runs (a sandbox keeps the rest read-only: config.toml and
# its `notify`, hooks and MCP servers, AGENTS.md, rules, skills, agents, prompts): its
# sessions, logs, history and a refreshed login.
CODEX_WRITES = (
    "sessions/",
    "log/",
    "thread-writer-locks/",
    "history.jsonl",
    "installation_id",
    "auth.json",
)
# Its state databases (SQLite, which makes its journal files next to them) cannot stay in
# the read-only $CODEX_HOME: inside a sandbox they are the step's own, in its private /tmp.
CODEX_SANDBOXED_ENV = {"CODEX_SQLITE_HOME": "/tmp/codex-state"}
# x.y.z in `codex --version` (compiled when asked: `ll-loop validate` compiles no pattern).


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`codex exec` (or `codex exec resume THREAD`) with the request's `codex:` options,
    JSON output and the prompt; `--` ends the options, so a prompt starting with `-` is
    no flag."""
    options = request.options or {}
    if request.resume_session:
        flags = codex_flags(options, resume=True)
        return [*program, "exec", "resume", *flags, *JSON_FLAGS, "--", request.resume_session,
                request.action]  # fmt: skip
    return [*program, "exec", *codex_flags(options), *JSON_FLAGS, "--", request.action]


def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
    """Codex's answer, tokens, cost, thread and commands (codex_events.finish)."""
    from little_loops.fsm.actions.codex_events import finish as read

    return read(result, request)


def usage_limit(result: ActionResult) -> ClaudeLimit | None:
    """The usage or rate limit the session ended on (codex_events.usage_limit)."""
    from little_loops.fsm.actions.codex_events import usage_limit as limit

    return limit(result)


def lost_session(result: ActionResult) -> bool:
    """True when Codex could not resume the thread it was asked to."""
    from little_loops.fsm.actions.codex_events import lost_session as lost

    return lost(result)


def readable(line: str) -> list[str]:
    """One line of `codex exec --json` output as the lines a person reads."""
    from little_loops.fsm.actions.codex_events import readable as lines_of

    return lines_of(line)


def latest_step(path: str) -> str | None:
    """The session's latest step (`shell: pytest -q`), from the end of its output file."""
    from little_loops.fsm.actions.codex_events import describe_step
    from little_loops.fsm.actions.transcript import latest_step as latest

    return latest(path, describe_step)


def ready(machine: Machine) -> str | None:
    """Why Codex cannot run here (too old, no key and no login), or None."""
    from little_loops.fsm.actions.machine import shown_version, version_numbers

    version = version_numbers(machine.version("codex"))
    if version is None:
        return f"codex --version does not run: {CODEX_INSTALL_HINT}"
    if version < MIN_VERSION:
        old, wanted = shown_version(version), shown_version(MIN_VERSION)
        return f"codex {old} is older than {wanted}: npm install -g @openai/codex"
    home = machine.env.get("CODEX_HOME") or str(machine.home / ".codex")
    if key_given(machine.env, KEY_VARIABLES) or login_file([Path(home) / "auth.json"]):
        return None
    return f"codex has no key and no login: {CODEX_LOGIN_HINT}"


def uncounted(machine: Machine, options: Mapping[str, Any]) -> str | None:
    """Why a Codex session with *options* cannot be priced: no model named anywhere (Codex
    then takes its built-in default, which no file names), or one with no known price."""
    from little_loops.fsm.actions.codex_model import configured_model
    from little_loops.fsm.facts.pricing import price_of, priced_models

    model = configured_model(options, {"HOME": str(machine.home), **machine.env})
    if model is None:
        return (
            "no model is named, and the price of Codex's built-in default is not known "
            "(name one: --model MODEL, `codex: {model: MODEL}` in the loop, or "
            '`model = "MODEL"` in $CODEX_HOME/config.toml)'
        )
    if price_of(model) is None:
        priced = ", ".join(priced_models("openai"))
        return f"its model '{model}' has no known price (priced: {priced})"
    return None


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """*schema* as the Responses API's strict structured output needs it: every object
    closed (`additionalProperties: false`) with all its properties required."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        if out.get("type") == "object" and isinstance(out.get("properties"), dict):
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out

    return dict(walk(dict(schema)))


def judge_argv(
    prompt: str, schema: Path, options: Mapping[str, Any], program: Sequence[str]
) -> list[str]:
    """`codex exec --output-schema FILE` asking *prompt*, read-only and not saved."""
    model = ["--model", str(options["model"])] if options.get("model") else []
    return [*program, "exec", *JUDGE_FLAGS, "--output-schema", str(schema), *model, "--",
            prompt]  # fmt: skip


def judge_verdict(result: ActionResult) -> dict[str, Any] | None:
    """The JSON object of a finished judge session's answer, or None."""
    from little_loops.fsm.actions.transcript import json_object

    return json_object(result.output.strip()) if result.error is None else None


SPEC = ActionKindSpec(
    name="codex",
    summary="a prompt sent to OpenAI's Codex CLI (codex exec)",
    action_types=(),
    argv=argv,
    program=("codex",),
    interpolation=Interpolation.TEXT,
    default_evaluator="llm_structured",
    default_timeout=1800,
    agent="Codex",
    options_key="codex",
    options=CODEX_OPTIONS,
    state_keys=("codex", "session", "session_key"),
    options_doc="Codex options: each becomes a flag of the `codex exec` command line.",
    loop_options_doc=(
        "Codex options for every state whose agent is codex; a state's own `codex:` is laid "
        "over them key by key."
    ),
    state_options_doc="Codex options of this state's session, laid key by key over the loop's.",
    sessions=True,
    retry_env=CODEX_RETRY_ENV,
    loop_idle_timeout=False,
    quiet_seconds=CODEX_QUIET_SECONDS,
    quiet_reason=(
        "Codex prints a line only when a message or a command is finished, so a long reply "
        "or a long command (a test run) is silent for longer"
    ),
    home=AgentHome(
        paths=CODEX_HOME,
        writes=tuple(f"{folder}/{name}" for folder in CODEX_HOME for name in CODEX_WRITES),
        env=CODEX_SANDBOXED_ENV,
    ),
    install_hint=CODEX_INSTALL_HINT,
    login_hint=CODEX_LOGIN_HINT,
    ready=ready,
    uncounted=uncounted,
    judge=JudgeSupport(
        argv=judge_argv, verdict=judge_verdict, schema=strict_schema, own_model=True
    ),
    finish=finish,
    usage_limit=usage_limit,
    lost_session=lost_session,
    readable=readable,
    latest_step=latest_step,
    label="Codex session",
    runs_as="goes to Codex",
    only_states="a prompt state whose agent is codex runs Codex",
)
