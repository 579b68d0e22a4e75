"""A custom agent (`agents:` of a loop or `.loops/agents.yaml`): a command of the user's, as a kind.

The command is the user's fixed text, run with bash; the prompt reaches it as data, never as
shell text: as its last argument (`"$@"`), on its standard input, or in the file named by
`$LL_PROMPT_FILE`. Its answer is its stdout; `cost_pattern` reads what it spent and
`limit_pattern` says it is out of quota.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, SANDBOX_KEY
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation, PromptInput
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values import regex_limit
from little_loops.fsm.values.regex_limit import SLOW_HINT, RegexTooSlow, within
from little_loops.fsm.values.value_checks import (
    ACTION_SECONDS,
    Check,
    describe,
    is_finite,
    one_of,
    optional,
    string,
    text,
)

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine
    from little_loops.fsm.actions.ratelimit import ClaudeLimit
    from little_loops.fsm.actions.request import ActionRequest, ActionResult

PROMPT_MODES: tuple[str, ...] = tuple(mode.value for mode in PromptInput)
DEFAULT_AGENT_TIMEOUT = 1800  # seconds, like Claude Code's: a session takes minutes
# bash runs `COMMAND "$@"`: the prompt is the one argument after the command's own.
_WITH_ARGUMENT = '{command} "$@"'
# A command ending in a control operator (`;`, `&`, `|`): "$@" after it runs as a command.
_ENDS_IN_OPERATOR = r"(?<!\\)[;&|]\Z"
_NOT_LAST_ARGUMENT = (
    "the prompt is added as the command's last argument, and after {what} it would {then}: "
    "end the command with its program or an argument, or use prompt: stdin or file"
)


def with_argument(command: str) -> str:
    """The script bash runs for an agent taking its prompt as an argument: *command* (its
    trailing newlines and blanks dropped, so `command: |` works) with `"$@"` after it."""
    return _WITH_ARGUMENT.format(command=command.rstrip())


def argument_problem(command: str) -> str | None:
    """Why the prompt, added after *command* as its last argument, would not be one: a
    trailing `;`, `&` or `|` makes it a command of its own, a comment swallows it."""
    found = re.search(_ENDS_IN_OPERATOR, command.rstrip())
    if found is not None:
        return _NOT_LAST_ARGUMENT.format(what=f"'{found.group(0)}'", then="run as a command")
    # Here, not at the top: the bash parser loads only for a loop with a custom agent.
    from little_loops.fsm.values.shellparse import COMMENT, placements

    script = with_argument(command).encode("utf-8", "surrogateescape")
    start = len(script) - len(b'"$@"')
    if placements(script, [(start, len(script))])[0].form == COMMENT:
        return _NOT_LAST_ARGUMENT.format(what="a comment", then="be no argument at all")
    return None


def _regex(value: object) -> str | None:
    problem = string(value)
    if problem is not None or not isinstance(value, str):
        return problem
    try:
        re.compile(value)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    return None


def _cost_regex(value: object) -> str | None:
    problem = _regex(value)
    if problem is not None or not isinstance(value, str):
        return problem
    if re.compile(value).groups != 1:
        return "expected a regular expression with one group (the dollars spent)"
    return None


def _command(value: object) -> str | None:
    problem = text(value)
    if problem is not None or not isinstance(value, str):
        return problem
    if not value.strip():  # `bash -c ' "$@"'` would run the prompt as the command
        return "expected a command, got an empty one"
    return "a command cannot hold a NUL byte" if "\0" in value else None


COMMAND = Check(_command, {"type": "string", "pattern": "\\S"})
REGEX = Check(_regex, {"type": "string", "minLength": 1, "format": "regex"})
COST_REGEX = Check(_cost_regex, {"type": "string", "minLength": 1, "format": "regex"})

# The keys of one custom agent, each with its check and what it means (docs, schema, hovers).
AGENT_KEYS: dict[str, tuple[Check, str]] = {
    "command": (
        COMMAND,
        "The command that runs the agent, with bash, in the run's working folder (the "
        "project root, or the run's worktree). Required.",
    ),
    "prompt": (
        optional(one_of(PROMPT_MODES)),
        "How the command gets the prompt: argument (its last argument, the default), stdin, "
        "or file (the path is in $LL_PROMPT_FILE).",
    ),
    "limit_pattern": (
        optional(REGEX),
        "A regular expression: output (stdout or stderr) of a failed call (exit code not 0) "
        "matching it means the agent is out of quota, a usage limit (waited out, or the next "
        "agent of a fallback list).",
    ),
    "cost_pattern": (
        optional(COST_REGEX),
        "A regular expression with one group: the dollars the call spent (its last match in "
        "stdout; when stdout has none, in stderr).",
    ),
    "options_end": (
        optional(text),
        "With prompt: argument, the argument that ends the command's options (`--` for most "
        "programs): given before the prompt, so a prompt starting with `-` is no option. "
        "Without it, such a prompt fails the step without running the command.",
    ),
    "timeout": (
        optional(ACTION_SECONDS),
        "Seconds a call may run when its state gives no timeout: (default "
        f"{DEFAULT_AGENT_TIMEOUT}).",
    ),
    SANDBOX_KEY: (
        optional(SANDBOX_CHECK),
        "The sandbox its calls run in when their state gives none (over the loop's): bwrap, "
        "none, or a mapping (docs/sandbox.md).",
    ),
}
REQUIRED_AGENT_KEYS: tuple[str, ...] = ("command",)


@dataclass(frozen=True)
class AgentDefinition:
    """One custom agent as its file declares it; `source` says where (for messages)."""

    command: str
    prompt: PromptInput = PromptInput.ARGUMENT
    limit_pattern: str | None = None
    cost_pattern: str | None = None
    timeout: float | None = None
    options_end: str | None = None
    sandbox: Any = None  # `sandbox:` as written (actions/sandbox.py reads it)
    source: str = "agents"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "agents") -> AgentDefinition:
        """The definition of checked data (`definition_problems` found nothing)."""
        return cls(
            command=str(data["command"]),
            prompt=PromptInput(data.get("prompt") or PromptInput.ARGUMENT),
            limit_pattern=data.get("limit_pattern"),
            cost_pattern=data.get("cost_pattern"),
            timeout=data.get("timeout"),
            options_end=data.get("options_end"),
            sandbox=data.get(SANDBOX_KEY),
            source=source,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": self.command}
        if self.prompt is not PromptInput.ARGUMENT:
            out["prompt"] = self.prompt.value
        for key in ("limit_pattern", "cost_pattern", "timeout", "options_end", SANDBOX_KEY):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def _no_cost_pattern(machine: Machine, options: Mapping[str, Any]) -> str | None:
    return "it has no cost_pattern (add one to its definition: what its output says it spent)"


def _name_problem(name: str) -> str | None:
    """Why `agent:` could never choose the custom agent *name* (it splits a value on commas,
    strips blanks, fills in `${...}`), or it would garble a display line; None: usable."""
    if "," in name:
        return "a comma separates the agents of a fallback list"
    if name != name.strip():
        return "blanks around a name are dropped"
    if "${" in name:
        return "${...} is filled in"
    if not name.isprintable():
        return "it holds a control character"
    return None


def definition_problems(
    name: object, data: object, builtin: Sequence[str]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """What is wrong with the custom agent *name* defined as *data*: (key path under the
    agent, message) each; *builtin* are the names it may not take."""
    if not isinstance(name, str) or not name:
        yield (), f"an agent name must be a non-empty string, got {describe(name)}"
        return
    unusable = _name_problem(name)
    if unusable is not None:
        yield (), f"an agent: value cannot name it: {unusable}"
    if name in builtin:
        yield (), f"'{name}' is a built-in agent: give the custom one another name"
    if not isinstance(data, Mapping):
        yield (), f"expected a mapping with a command, got {describe(data)}"
        return
    for key, value in data.items():
        entry = AGENT_KEYS.get(key) if isinstance(key, str) else None
        if entry is None:
            hint = did_you_mean(str(key), AGENT_KEYS) or f" (allowed: {', '.join(AGENT_KEYS)})"
            yield (str(key),), f"unknown key{hint}"
            continue
        problem = entry[0](value)
        if problem is not None:
            yield (key,), problem
    for key in REQUIRED_AGENT_KEYS:
        if data.get(key) is None:
            yield (), f"missing required key '{key}' (the command that runs the agent)"
    command = data.get("command")
    if data.get("prompt") in (None, PromptInput.ARGUMENT.value) and isinstance(command, str):
        problem = argument_problem(command) if _command(command) is None else None
        if problem is not None:
            yield ("command",), problem


def _last_cost(pattern: re.Pattern[str], result: ActionResult) -> float | None:
    """The dollars of the last match in stdout; when stdout has none, in stderr. A match
    that is no amount (`-5`, `nan`, `1e400`) is skipped: it would cheat the budget."""
    for stream in (result.output, result.stderr):
        cost = None
        # The iterator does the matching, so the list is made within the time limit.
        matches: Callable[[], list[re.Match[str]]] = partial(list, pattern.finditer(stream))
        for found in within(regex_limit.REGEX_TIME_LIMIT, matches):
            try:
                spent = float(found.group(1))
            except (TypeError, ValueError):
                continue
            if is_finite(spent) and spent >= 0:
                cost = spent
        if cost is not None:
            return cost
    return None


def _too_slow(name: str, key: str, result: ActionResult) -> None:
    """Say in *result*'s stderr (shown by `ll-loop logs`) that *key* was abandoned."""
    seconds = regex_limit.REGEX_TIME_LIMIT
    said = f"ll-loop: {name}'s {key} took longer than {seconds:g}s to match ({SLOW_HINT})"
    result.stderr = f"{result.stderr.rstrip()}\n{said}\n".lstrip()


def _never_ran() -> tuple[int, int]:
    """Exit codes of a command bash could not run (not executable, not found): nothing
    spent. Read here, not at the top: `ll-loop validate` stays light (no supervisor)."""
    from little_loops.fsm.actions.supervisor import CANNOT_RUN_EXIT_CODE, NOT_FOUND_EXIT_CODE

    return (CANNOT_RUN_EXIT_CODE, NOT_FOUND_EXIT_CODE)


def _count(name: str, cost: re.Pattern[str], result: ActionResult) -> None:
    """Set *result*'s cost from the custom agent *name*'s output (`cost_pattern`), or say
    it is uncounted: a command that ran and said nothing of its spend."""
    try:
        spent = _last_cost(cost, result)
    except RegexTooSlow:
        spent = None
        _too_slow(name, "cost_pattern", result)
    if spent is not None:
        result.cost_usd = spent
    elif result.exit_code not in _never_ran():
        result.uncounted = "its output did not say what it spent (cost_pattern)"


def custom_kind(name: str, definition: AgentDefinition) -> ActionKindSpec:
    """The action kind of the custom agent *name*: bash runs its command; the prompt goes
    in as its definition says; its stdout is the answer."""
    script = (
        with_argument(definition.command)
        if definition.prompt is PromptInput.ARGUMENT
        else definition.command
    )
    limit = re.compile(definition.limit_pattern) if definition.limit_pattern else None
    cost = re.compile(definition.cost_pattern) if definition.cost_pattern else None

    as_argument = definition.prompt is PromptInput.ARGUMENT
    options_end = [definition.options_end] if definition.options_end is not None else []

    def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
        # `bash -c SCRIPT NAME [--] [PROMPT]`: NAME is $0, the prompt the last of "$@",
        # never part of SCRIPT.
        tail = [*options_end, request.action] if as_argument else []
        return [*program, script, name, *tail]

    def refuses(request: ActionRequest) -> str | None:
        if not as_argument or options_end or not request.action.startswith("-"):
            return None
        return (
            f"the prompt starts with '-', which the custom agent {name} would take as an "
            "option: give the agent options_end: -- (when its command reads what follows as "
            "arguments), or prompt: stdin or file"
        )

    def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
        if cost is not None:
            _count(name, cost, result)
        return result

    def usage_limit(result: ActionResult) -> ClaudeLimit | None:
        # As for Claude Code, a call that finished is never read as a limit: an answer may
        # well mention one (the task is about limits), and re-running it costs each time.
        if limit is None or (result.exit_code == 0 and result.error is None):
            return None
        # Here, not at the top: `ll-loop validate` stays light (ratelimit reads JSON).
        from little_loops.fsm.actions.ratelimit import USAGE_LIMIT, ClaudeLimit

        try:
            found = within(
                regex_limit.REGEX_TIME_LIMIT,
                lambda: limit.search(result.output) or limit.search(result.stderr),
            )
        except RegexTooSlow:  # taken as no limit; said once, by finish, for the cost
            return None
        if found is None:
            return None
        return ClaudeLimit(USAGE_LIMIT, None, f"{name}: {found.group(0)}")

    return ActionKindSpec(
        name=name,
        summary=f"the custom agent {name}: {definition.command}",
        action_types=(),
        argv=argv,
        program=("bash", "-c"),
        interpolation=Interpolation.TEXT,
        default_evaluator="llm_structured",
        default_timeout=definition.timeout or DEFAULT_AGENT_TIMEOUT,
        agent=name,
        install_hint="bash runs it: check its command in the agent's definition",
        prompt_input=definition.prompt,
        uncounted=None if definition.cost_pattern else _no_cost_pattern,
        no_judge=f"the custom agent {name} cannot answer with schema-checked JSON",
        finish=finish,
        usage_limit=usage_limit,
        refuses=refuses,
        label=f"{name} call",
        runs_as=f"goes to the custom agent {name}",
        only_states="a prompt or slash-command state runs on an agent",
    )
