"""What an action kind is: the `action_type:` names it serves and how it runs, declared once.

Each kind's module in this folder (`shell.py`, `claude_code.py`) has a `SPEC`; the one list
of them is `registry.py`. Validation, the defaults of a state, the runner, the dry-run plan
and the display read the spec, so nothing else names a kind. The request a kind runs (which
carries its kind), the result it gives and the limit it may end on are declared here with
it: the kind's functions take them, so they are one concept (`request.py` names the pair).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.home import AgentHome

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.sandbox import Confinement
    from little_loops.fsm.values.interpolation import InterpolationContext
    from little_loops.fsm.values.shellquote import Rendered
    from little_loops.fsm.values.value_checks import Check


@dataclass
class ActionRequest:
    """Everything `DefaultActionRunner.execute` can be told about one action.

    `timeout`/`idle_timeout` are seconds (None: no limit); `cwd` overrides the runner's
    directory; `env` is laid over the current environment; `output_file` receives all of
    stdout, and `layout.stderr_file(output_file)` all of stderr (instead of the runner's
    `output_dir` default). `kind` names the action's kind (`registry.KINDS`); `options`
    holds the options of its kind (`claude:` of a Claude action, see `spec.options_key`)
    and `resume_session` the id of the session it continues; both are ignored by a kind
    without options or sessions. `spec` is the kind itself, for a runner that may not know
    it by name (a loop's custom agent); None: `kind` names one of the runner's kinds.
    `confinement`: the sandbox its command runs in (None: none).
    """

    action: str
    timeout: float | None
    kind: str
    idle_timeout: float | None = None
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    output_file: Path | None = None
    options: Mapping[str, Any] | None = None
    resume_session: str | None = None
    spec: ActionKindSpec | None = None
    confinement: Confinement | None = None

    def standalone(self) -> str:
        """The action as one text that needs no environment of its own: each variable of
        `env` assigned (single-quoted) on a line before it. For a runner that is handed only
        text (the original design's `run(action, timeout, is_slash_command)`), so a shell
        script's values still reach it as data."""
        if not self.env:
            return self.action
        from little_loops.fsm.values.shellquote import env_lines

        return "\n".join([*env_lines(dict(self.env)), self.action])


@dataclass
class ActionResult:
    """What an action did. The first four fields are the executor's original contract.

    `output`/`stderr` hold at most the runner's tail of each stream; `truncated` says the
    real output was longer and `output_path` names the file that has all of stdout.
    `error` is a one-line explanation when the action could not run properly (missing
    executable, claude refusing root, timeout, idle timeout, stop); it means an error verdict.
    """

    output: str
    stderr: str
    exit_code: int
    duration_ms: int
    truncated: bool = False
    output_path: str | None = None
    timed_out: bool = False
    error: str | None = None
    cost_usd: float | None = None  # Claude Code's total_cost_usd for a prompt action
    usage: dict[str, int] | None = None  # Claude Code's token counters
    session_id: str | None = None  # the Claude Code session the action ran in
    model_costs: dict[str, float] | None = None  # Claude Code's cost of each model it used
    tool_calls: list[str] | None = None  # a Claude session's tool calls and results, as text
    tools_failed: int = 0  # how many of the agent's own tool calls failed (a command's exit)
    # Why its spend cannot be counted (tokens no price is known for, no cost said): under a
    # budget the run stops after it (spend.budget_unkept); None: counted, or nothing spent.
    uncounted: str | None = None


@dataclass(frozen=True)
class AgentLimit:
    """An agent (or the judge) refused for now: the kind of limit, when it resets (epoch
    seconds) if said. Each agent's kind reads its own (`ActionKindSpec.usage_limit`)."""

    kind: str
    resets_at: float | None = None
    message: str = ""

    def resets_text(self) -> str | None:
        """The reset time as a person reads it (`15:00`, local time), or None."""
        if self.resets_at is None:
            return None
        from datetime import datetime  # here: only a limit's message needs it

        return datetime.fromtimestamp(self.resets_at).strftime("%H:%M")


class Interpolation(StrEnum):
    """How `${...}` values land in an action's text."""

    SHELL = "shell"  # each value handed to bash in an environment variable
    TEXT = "text"  # values as they are (a prompt is text)

    def apply(self, text: str, ctx: InterpolationContext, paste_refused: bool = False) -> Rendered:
        """*text* with its references filled in this way (a shell script's values in the
        environment it runs with; *paste_refused*: see shellquote.render)."""
        from little_loops.fsm.values.interpolation import interpolate
        from little_loops.fsm.values.shellquote import Rendered, render

        if self is Interpolation.SHELL:
            return render(text, ctx, paste_refused=paste_refused)
        return Rendered(interpolate(text, ctx))


class PromptInput(StrEnum):
    """How an agent's program is handed the prompt."""

    ARGUMENT = "argument"  # the last argument of its command line (the kind's `argv` puts it)
    STDIN = "stdin"  # on its standard input
    FILE = "file"  # in a file whose path is in $LL_PROMPT_FILE


def _same_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    return dict(schema)


@dataclass(frozen=True)
class JudgeSupport:
    """How an agent's CLI can be the `llm_structured` judge: it answers with JSON that the
    CLI itself checked against a JSON Schema (Claude Code `--json-schema`, Codex
    `exec --output-schema`). The judge writes `schema(verdict schema)` to a file, runs
    `argv`, reads the output with the kind's `finish`, then takes `verdict` of it."""

    # The command line that asks *prompt* with the schema in the file *schema*, given the
    # agent's options (`model` when the judge names one) and *program*, program first.
    argv: Callable[[str, Path, Mapping[str, Any], Sequence[str]], list[str]]
    # The JSON object it answered, from its finished result, or None when it gave none.
    verdict: Callable[[ActionResult], dict[str, Any] | None]
    # The verdict schema as this CLI needs it (e.g. closed objects for a strict API).
    schema: Callable[[Mapping[str, Any]], dict[str, Any]] = _same_schema
    # True: `llm.model`'s default (a Claude model) is not passed; the agent's own default
    # model judges unless the loop names one.
    own_model: bool = False


# The start of the error of a step whose CLI was ended as it began retrying a refused call
# itself (OwnRetry): a kind's `usage_limit` reads the rest, what the CLI said.
GAVE_WAY = "the agent retries a refused call itself: "


@dataclass(frozen=True)
class OwnRetry:
    """How an agent CLI says on stderr, while it runs, that it is retrying a refused call
    (a rate limit, an overloaded API) itself: a line matching `begins` (re.search) opens its
    message, the line matching `ends` closes it (None: the same line); a group `said` of
    `begins` is the part of its line to keep (default: the line). The runner ends the CLI's
    process tree on the `allowed + 1`-th such message, or on the first whose opening line
    also matches `at_once`, and the step fails with it as its error, which the kind's
    `usage_limit` reads, so ll-loop's waits or the fallback list decide, not its backoff.
    A line matching `maybe` (its group `said` kept) is a refusal the CLI may or may not
    retry: it is heard when the CLI still runs `settle` seconds after it (what it does not
    retry, it gives up on at once), or at once when a second such line comes. A line
    matching `retried` after it says the CLI sent the call again: no longer heard at
    `settle` (its answer may take any time), still at once on a second refusal. Lines
    matching `quiet` (a log level asked only for `retried`) are read here and kept from the
    step's stderr and its file."""

    begins: str
    ends: str | None = None
    allowed: int = 0
    at_once: str | None = None
    maybe: str | None = None
    settle: float = 0.0
    retried: str | None = None
    quiet: str | None = None


@dataclass(frozen=True)
class KindOption:
    """One key of a kind's options mapping: the flag it becomes (None: handled on its own),
    its check, its doc. `joined`: a list value is one comma-separated argument; otherwise
    each item is an argument of its own."""

    flag: str | None
    check: Check
    doc: str
    joined: bool = False


def _as_is(result: ActionResult, request: ActionRequest) -> ActionResult:
    return result


def _no_limit(result: ActionResult) -> AgentLimit | None:
    return None


def _never(result: ActionResult) -> bool:
    return False


def _takes(request: ActionRequest) -> str | None:
    return None


def _no_reason(result: ActionResult) -> str | None:
    return None


@dataclass(frozen=True)
class ActionKindSpec:
    """Everything ll-loop knows about one kind of action.

    `action_types[0]` is the word the `action_start` event and the run records keep as
    `action_type` (so `prompt` for every Claude Code action, as before kinds existed).
    """

    name: str  # its own name: its program's key in the runner, its usage's prefix (NAME_)
    summary: str  # one line, for the docs and `action_type:`'s description
    action_types: tuple[str, ...]  # the `action_type:` values that mean this kind
    # The command line of a request: *program* (the runner's command for this kind) first.
    argv: Callable[[ActionRequest, Sequence[str]], list[str]]
    program: tuple[str, ...]  # the command the runner starts it with unless told another
    interpolation: Interpolation = Interpolation.TEXT
    default_evaluator: str = "exit_code"  # the evaluator of a state without `evaluate:`
    default_timeout: float = 120  # seconds, when the state gives no `timeout:`
    agent: str | None = None  # the coding agent it asks (as a person names it), None: a command
    # The loop and state key of its options (a mapping), their table, and the state keys
    # only this kind may use.
    options_key: str | None = None
    options: Mapping[str, KindOption] = field(default_factory=dict)
    state_keys: tuple[str, ...] = ()
    # Its state's `params:` mapping (`${...}` filled in) is the request's options `params`.
    takes_params: bool = False
    # What its options block is, at the loop and in a state: for the JSON Schema and hovers.
    options_doc: str = ""
    loop_options_doc: str = ""
    state_options_doc: str = ""
    sessions: bool = False  # `session: continue` resumes its previous session
    # The loop's `idle_timeout:` applies (an agent may be silent for long; only its state's does).
    loop_idle_timeout: bool = True
    # Shortest `idle_timeout:` that does not cut off a working session (None: any), and why.
    quiet_seconds: float | None = None
    quiet_reason: str = ""
    home: AgentHome = AgentHome()  # its files under $HOME, as a sandbox shows them
    # Its program sets $PWD itself from the folder it starts in (bash corrects a stale one
    # and exports it): no PWD laid over our environment, so the child is handed ours as is.
    sets_pwd: bool = False
    install_hint: str = ""  # said when its program is not on PATH
    login_hint: str = ""  # said when it has no key or login (`run codex login, or set ...`)
    # Why it cannot run here (no key or login, a version we do not support): one line that
    # names the fix, or None when it is ready. Run before a run's first step (preflight).
    ready: Callable[[Machine], str | None] | None = None
    prompt_input: PromptInput = PromptInput.ARGUMENT
    # Why its spend cannot be counted here with these options (the words after "its spend
    # cannot be counted:", naming the fix), or None. None for the field: it always reports
    # what it spent (Claude Code's `total_cost_usd`) or spends nothing.
    uncounted: Callable[[Machine, Mapping[str, Any]], str | None] | None = None
    # Environment variables that cap the agent CLI's own retries of a refused call (so our
    # rate-limit handling and fallback decide, not minutes of its backoff), each set unless
    # ll-loop's own environment sets it.
    retry_env: Mapping[str, str] = field(default_factory=dict)
    # What it prints on stderr when it retries a refused call itself, for a CLI whose
    # retries no variable caps (None: it prints nothing that says so, or needs no cap).
    own_retry: OwnRetry | None = None
    # Its `own_retry` for a request whose options change what it prints (None: `own_retry`).
    own_retry_for: Callable[[ActionRequest], OwnRetry | None] | None = None
    # How it judges (`llm_structured` through this agent); None: it cannot, for `no_judge`.
    judge: JudgeSupport | None = None
    no_judge: str = ""
    # Reads what it printed: the answer, cost, usage, session, tool calls and errors.
    finish: Callable[[ActionResult, ActionRequest], ActionResult] = _as_is
    usage_limit: Callable[[ActionResult], AgentLimit | None] = _no_limit  # a rate/usage limit
    lost_session: Callable[[ActionResult], bool] = _never  # it could not resume the session
    # Why it cannot be given *request* safely (the step fails without running); None: it can.
    refuses: Callable[[ActionRequest], str | None] = _takes
    # Why its finished result says it cannot run here at all (not logged in, refused as
    # root, an untrusted folder, no provider): one line naming the fix, or None. A fallback
    # list goes on with its next agent for the rest of the run (docs/agents/fallback.md).
    cannot_run: Callable[[ActionResult], str | None] = _no_reason
    # Its output file as a person reads it (one printed line to lines), and its latest step;
    # None: the output is plain text.
    readable: Callable[[str], list[str]] | None = None
    latest_step: Callable[[str], str | None] | None = None
    label: str = "action"  # what `ll-loop logs` calls one run of it
    runs_as: str = "runs as a command"  # for messages: "this state's action ..."
    # Which states may use its `state_keys`, for the message when another state does.
    only_states: str = ""

    @property
    def shown_as(self) -> str:
        """The kind as the report and messages name it: its agent, else its name."""
        return self.agent or self.name

    def interpolate(
        self, text: str, ctx: InterpolationContext, paste_refused: bool = False
    ) -> Rendered:
        """The action's text with `${...}` filled in as this kind needs."""
        return self.interpolation.apply(text, ctx, paste_refused)

    def describe_options(self, options: Mapping[str, Any]) -> str:
        """*options* on one line, in its table's order (see `described`)."""
        return described(options, self.options)


def described(options: Mapping[str, Any], table: Mapping[str, KindOption]) -> str:
    """*options* on one line, in *table*'s order: `model=claude-x, tools=[Read, Bash]`."""
    parts = []
    for name in table:
        if name in options:
            value = options[name]
            shown = f"[{', '.join(map(str, value))}]" if isinstance(value, list) else str(value)
            parts.append(f"{name}={shown}")
    return ", ".join(parts)


def merged(defaults: Mapping[str, Any], own: Mapping[str, Any] | None) -> dict[str, Any]:
    """A state's options: its own block laid over the loop's, key by key (null unsets)."""
    out = {**defaults, **(own or {})}
    return {key: value for key, value in out.items() if value is not None}


def filled(options: Mapping[str, Any], fill: Callable[[str], str]) -> dict[str, Any]:
    """*options* with `${...}` filled in (by *fill*) in each text value and list item, so a
    parameter can pick the model: `claude: {model: "${context.model}"}`."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, str):
            out[key] = fill(value)
        elif isinstance(value, list):
            out[key] = [fill(item) if isinstance(item, str) else item for item in value]
        else:
            out[key] = value
    return out
