"""Which coding agents a prompt state runs on: the `agent:` key of a loop and a state, resolved.

`agent:` is a name (`claude`, another built-in agent, a custom agent of `agents:`) or a list
of them, the fallback order. A name may be a `${context.NAME}` (or `${env.NAME}`) reference,
so a parameter picks the agent; a filled-in value naming several agents (`claude,mine`, or a
list parameter) is a fallback list too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions import registry
from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.definition.reading.loader import load_file
from little_loops.fsm.definition.reading.loop_files import AGENTS_FILE_NAME, LOOPS_FOLDER
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError, ValidationError
from little_loops.fsm.facts.runfile import kind_of
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate
from little_loops.fsm.values.value_checks import Check, describe, mapping, optional, string

if TYPE_CHECKING:
    from little_loops.fsm.actions.custom import AgentDefinition

AGENT_KEY = "agent"  # of a loop (its prompt states' default) and of a state
AGENTS_KEY = "agents"  # the loop's custom agents, by name
# The namespaces an `agent:` reference may read: what is known before the first step.
AGENT_NAMESPACES: tuple[str, ...] = ("context", "env")
# Patterns, compiled when first used (`ll-loop validate` compiles none at import).
_REFERENCE = r"\$\{([A-Za-z_][\w-]*)\."
_WHOLE_REFERENCE = r"^\$\{context\.([A-Za-z_][\w-]*)\}$"


def _agent_value(value: object) -> str | None:
    if isinstance(value, list):
        if not value:
            return "expected at least one agent name"
        for item in value:
            problem = string(item)
            if problem is not None:
                return f"expected a list of agent names, got {describe(item)} in it"
        return None
    problem = string(value)
    return (
        None
        if problem is None
        else f"expected an agent name or a list of them, got {describe(value)}"
    )


AGENT_CHECK = Check(
    _agent_value,
    {
        "anyOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        ]
    },
)
# The loop's custom `agents:`; the JSON Schema of each entry is json_schema.py's
# `customAgent`, from custom.AGENT_KEYS (definition/checks/agent_checks.py checks them).
AGENTS_CHECK = Check(mapping.find, {"type": "object"})
# The loop's `agent:` (a state's own is a row of core_keys.py) and its custom `agents:`
# (FSMLoop.agents holds each one's AgentDefinition), one row each.
KEYS: tuple[Key, ...] = (
    Key(
        "agent",
        (LOOP,),
        optional(AGENT_CHECK),
        "The coding agent of every prompt and slash-command state without its own agent: "
        f"{', '.join(AGENTS)} (the default is claude) or a custom agent's name; a list is the "
        "fallback order (the next agent runs the step when one is out of quota or not ready). "
        "May be a ${context.NAME} reference (a parameter).",
    ),
    Key(
        "agents",
        (LOOP,),
        optional(AGENTS_CHECK),
        "Custom agents by name, each a command of yours that gets the prompt and prints the "
        "answer; .loops/agents.yaml declares them for every loop of the project (an entry "
        "here of the same name wins).",
        default={},
    ),
)


def written_names(value: object) -> list[str]:
    """The names an `agent:` value gives, as written (references not filled in); [] for none."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def reference_problem(name: str) -> str | None:
    """Why a written agent name cannot be filled in before the run (it reads `captured` ...)."""
    for namespace in re.findall(_REFERENCE, name):
        if namespace not in AGENT_NAMESPACES:
            return (
                f"'{name}': an agent is chosen before the state runs, so it may read only "
                "${context.NAME} and ${env.NAME}"
            )
    return None


def filled_names(value: object, context: Mapping[str, Any]) -> list[str]:
    """The agent names of an `agent:` value with its references filled in from *context*
    (a run's values, or the parameters' defaults); a value naming several (`a,b` or a list
    parameter) stands for all of them, in order. Raises InterpolationError for a reference
    that cannot be filled in."""
    ctx = InterpolationContext(context=context)
    out: list[str] = []
    for name in written_names(value):
        whole = re.match(_WHOLE_REFERENCE, name)
        if whole is not None and isinstance(context.get(whole.group(1)), list):
            out += [str(item).strip() for item in context[whole.group(1)]]
            continue
        out += [part.strip() for part in interpolate(name, ctx).split(",")]
    return [name for name in dict.fromkeys(out) if name]


def agent_kinds(custom: Mapping[str, ActionKindSpec]) -> Mapping[str, ActionKindSpec]:
    """Every agent a loop can name: the built-in ones, then its custom ones (a custom one
    first when both have a name); a built-in one's module is imported when it is looked up."""
    return _AgentKinds(custom)


class _AgentKinds(Mapping[str, ActionKindSpec]):
    """The built-in agents then a loop's custom ones, as `{**AGENTS, **custom}` without
    looking up (importing) a built-in one that is not asked for."""

    def __init__(self, custom: Mapping[str, ActionKindSpec]) -> None:
        self._custom = dict(custom)

    def __getitem__(self, name: str) -> ActionKindSpec:
        return self._custom[name] if name in self._custom else AGENTS[name]

    def __contains__(self, name: object) -> bool:
        return name in self._custom or name in AGENTS

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*AGENTS, *self._custom]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*AGENTS, *self._custom]))


def kinds_named(
    names: list[str], kinds: Mapping[str, ActionKindSpec], where: str, written: object = None
) -> list[ActionKindSpec]:
    """The agent kinds *names* name; LoopDefinitionError (one line, *where* first, with a
    did-you-mean) for a name no agent has. No names: the default agent (Claude Code), when
    no `agent:` is *written*; one filled in to none (`--set agent=`) is an error."""
    if not names and written is not None:
        raise LoopDefinitionError(f"{where}: {no_agent(written)}")
    if not names:
        return [registry.DEFAULT_AGENT]
    out = []
    for name in names:
        spec = kinds.get(name)
        if spec is None:
            raise LoopDefinitionError(f"{where}: {unknown_agent(name, kinds)}")
        out.append(spec)
    return out


def no_agent(value: object) -> str:
    """`'${context.agent}' names no agent once filled in`: a value that filled to nothing."""
    written = ", ".join(written_names(value))
    return f"'{written}' names no agent once filled in (give it an agent name)"


def unknown_agent(name: str, known: Iterable[str]) -> str:
    """`unknown agent 'claud' (did you mean claude?)`, else the agents there are."""
    known = list(known)
    hint = did_you_mean(name, known) or f" (agents: {', '.join(known)})"
    return f"unknown agent '{name}'{hint}"


def project_agents_file(loop_file: Path | None) -> Path:
    """The project's `agents.yaml`: in the `.loops` folder *loop_file* is in, else in the
    `.loops` of the current folder's project (a library loop, a loop given by path)."""
    if loop_file is not None and Path(loop_file).absolute().parent.name == LOOPS_FOLDER:
        return Path(loop_file).parent / AGENTS_FILE_NAME  # as the loop file is named
    # Here, not at the top: layout compiles patterns, and validate compiles none at import.
    from little_loops.fsm.facts.layout import default_loops_dir

    return default_loops_dir() / AGENTS_FILE_NAME


def read_project_agents(path: Path) -> tuple[dict[str, AgentDefinition], list[str]]:
    """The custom agents of the project file *path* ({} when there is none), and its
    problems, one line each naming the file (and the line); a file with a problem gives none."""
    agents, problems = check_project_agents(path)
    return agents, [_placed(path, problem) for problem in problems]


def _placed(path: Path, problem: ValidationError) -> str:
    where = str(path) + "".join(f":{n}" for n in (problem.line, problem.column) if n is not None)
    return f"{where}: {problem.message}"


def check_project_agents(path: Path) -> tuple[dict[str, AgentDefinition], list[ValidationError]]:
    """The custom agents of the project file *path* ({} when there is none), and its problems,
    each at its line; a file with a problem gives none."""
    if not path.exists():
        return {}, []
    if not path.is_file():  # a FIFO would hang the read; /dev/zero would fill it
        what = kind_of(path.stat().st_mode)
        return {}, [ValidationError(f"is {what}, not a regular file of agents")]
    try:
        doc = load_file(path)
    except LoopFileError as exc:
        detail = exc.detail.replace("loop settings", "agents")
        return {}, [ValidationError(detail, line=exc.line, column=exc.column)]
    problems: list[ValidationError] = []
    for key in doc.data:
        if key != AGENTS_KEY:
            said = f"unknown key {key!r} (expected only agents:)"
            problems.append(ValidationError(said, line=doc.line_of((str(key),))))
    entries = doc.data.get(AGENTS_KEY)
    if not isinstance(entries, Mapping):
        problems.append(ValidationError("expected agents: with a mapping of agents by name"))
        return {}, problems
    from little_loops.fsm.actions.custom import AgentDefinition, definition_problems

    for name, entry in entries.items():
        for at, message in definition_problems(name, entry, tuple(AGENTS)):
            where = (AGENTS_KEY, str(name), *at)
            said = f"{' > '.join(where)}: {message}"
            problems.append(ValidationError(said, line=doc.line_of(where)))
    if problems:
        return {}, problems
    source = str(path)
    return {str(n): AgentDefinition.from_dict(e, source) for n, e in entries.items()}, []
