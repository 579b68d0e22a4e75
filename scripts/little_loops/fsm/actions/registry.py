"""The action kinds by name: the one list that validation, the runner, the plan and display read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from little_loops.fsm.actions import shell
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine


@dataclass(frozen=True)
class Entry:
    """A kind as the registry knows it before its module is imported: what validation reads
    of it to check a file that does not use it (tests hold each equal to the kind's SPEC)."""

    name: str  # its SPEC's name
    module: str  # its module in this folder, imported on first use of the kind
    action_types: tuple[str, ...] = ()
    options_key: str | None = None
    state_keys: tuple[str, ...] = ()
    agent: bool = False  # it has an `agent` (a coding agent a prompt state can run on)
    interpolation: Interpolation = Interpolation.TEXT  # how `${...}` lands in its action
    default_evaluator: str = "exit_code"  # the evaluator of its state without `evaluate:`


_AGENT_EVALUATOR = "llm_structured"  # a coding agent's answer is judged by default
# In the order the docs and messages list their action types. To add an action kind: write
# its module (its SPEC) in this folder and add its entry here.
ENTRIES: dict[str, Entry] = {
    entry.name: entry
    for entry in (
        Entry(
            "claude",
            "claude_code",
            ("prompt", "slash_command"),
            "claude",
            ("claude", "session", "session_key"),
            agent=True,
            default_evaluator=_AGENT_EVALUATOR,
        ),
        Entry("shell", "shell", ("shell",), interpolation=Interpolation.SHELL),
        Entry(
            "codex",
            "codex",
            (),
            "codex",
            ("codex", "session", "session_key"),
            agent=True,
            default_evaluator=_AGENT_EVALUATOR,
        ),
        Entry(
            "gemini",
            "gemini",
            (),
            "gemini",
            ("gemini", "session", "session_key"),
            agent=True,
            default_evaluator=_AGENT_EVALUATOR,
        ),
        Entry(
            "opencode",
            "opencode",
            (),
            "opencode",
            ("opencode", "session", "session_key"),
            agent=True,
            default_evaluator=_AGENT_EVALUATOR,
        ),
        Entry(
            "mcp_tool",
            "mcp_tool",
            ("mcp_tool",),
            state_keys=("params",),
            default_evaluator="mcp_result",
        ),
    )
}
_LOADED: dict[str, ActionKindSpec] = {shell.SPEC.name: shell.SPEC}


def _spec(name: str) -> ActionKindSpec:
    """The SPEC of the kind called *name*, its module imported the first time."""
    spec = _LOADED.get(name)
    if spec is None:
        module = import_module(f"little_loops.fsm.actions.{ENTRIES[name].module}")
        spec = _LOADED[name] = module.SPEC
    return spec


class KindTable(Mapping[str, ActionKindSpec]):
    """Kinds by some key of theirs: the keys are known up front, and a kind's module is
    imported when its spec is first looked up (`in` and iterating the keys import none), so
    validating a shell-only loop imports no agent."""

    def __init__(self, keys: Mapping[str, str]) -> None:  # key -> kind name
        self._keys = dict(keys)

    def name_of(self, key: str, default: str) -> str:
        """The name of the kind for *key* (*default* when none is), importing none."""
        return self._keys.get(key, default)

    def __getitem__(self, key: str) -> ActionKindSpec:
        return _spec(self._keys[key])

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


KINDS = KindTable({name: name for name in ENTRIES})
# The kind of an action without `action_type:` (unless it is a `/` command, see `kind_of`).
DEFAULT_KIND = shell.SPEC
# The kind (by name) of an action without `action_type:` that starts with `/`: a slash
# command; and the agent of a prompt state with no `agent:` anywhere (as before agents could
# be chosen). Both are `SLASH_KIND` and `DEFAULT_AGENT` (see `__getattr__`).
_CLAUDE = "claude"
# The coding agents a prompt or slash-command state can run on (`agent:`), by name: the kinds
# with an `agent`. `claude` serves `action_type: prompt` itself; any other agent kind serves
# no action type of its own (`action_types=()`): the state's `agent:` picks it.
AGENTS = KindTable({name: name for name, entry in ENTRIES.items() if entry.agent})
# Every `action_type:` value some kind serves, and its kind.
BY_ACTION_TYPE = KindTable(
    {action_type: e.name for e in ENTRIES.values() for action_type in e.action_types}
)
ACTION_TYPE_NAMES: tuple[str, ...] = tuple(BY_ACTION_TYPE)
# The kinds with an options block (`claude:` ...), by the loop and state key of the block.
BY_OPTIONS_KEY = KindTable({e.options_key: e.name for e in ENTRIES.values() if e.options_key})

if TYPE_CHECKING:
    SLASH_KIND: ActionKindSpec
    DEFAULT_AGENT: ActionKindSpec


def __getattr__(name: str) -> ActionKindSpec:
    """`SLASH_KIND` and `DEFAULT_AGENT`: Claude Code's kind, its module imported on first use."""
    if name in ("SLASH_KIND", "DEFAULT_AGENT"):
        return _spec(_CLAUDE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def entry_of(action_type: object, action: object) -> Entry:
    """The kind of an action, from its state's `action_type:` and its text, as the registry
    knows it before importing it: the kind that serves that action type; without one, a `/`
    command goes to `SLASH_KIND`, else bash. An action type no kind serves (approval, a typo
    validation refuses) is `DEFAULT_KIND`'s."""
    if isinstance(action_type, str) and action_type:
        return ENTRIES[BY_ACTION_TYPE.name_of(action_type, DEFAULT_KIND.name)]
    if action_type is None and isinstance(action, str) and action.startswith("/"):
        return ENTRIES[_CLAUDE]
    return ENTRIES[DEFAULT_KIND.name]


def kind_of(action_type: object, action: object) -> ActionKindSpec:
    """The kind of an action (see `entry_of`), its module imported the first time."""
    return _spec(entry_of(action_type, action).name)


def is_agent_action(action_type: object, action: object) -> bool:
    """True when an action with this `action_type:` and text goes to a coding agent (a
    prompt or slash command: the state's `agent:` says which one); imports no agent kind."""
    return entry_of(action_type, action).agent


def can_judge(spec: ActionKindSpec) -> bool:
    """True when the agent *spec* can be the `llm_structured` judge: its CLI answers with
    schema-checked JSON (`spec.judge`; Claude Code through evaluators/judge_claude.py)."""
    return spec.judge is not None or spec is _spec(_CLAUDE)


def agent_problem(spec: ActionKindSpec, machine: Machine) -> str | None:
    """Why the agent *spec* cannot run on *machine* (`Machine.here()`): its program is not
    on PATH, no login, a version we do not support; one line naming the fix, None when it is
    ready. A custom agent is its user's command, run by bash: nothing to check before. The
    preflight asks it of every agent of a run; a fallback may ask it before the next agent."""
    if spec.name in AGENTS:
        program = spec.program[0]
        if machine.which(program) is None:
            return f"{program} is not on PATH; {spec.install_hint}"
    return None if spec.ready is None else spec.ready(machine)


def recorded(action_type: object, agent: object = None) -> ActionKindSpec | None:
    """The kind of a step as its `action_start` records it: its `agent` (the kind's name)
    when it names one, else by its `action_type` (an older record of a prompt: Claude
    Code); None for a step no kind ran (a sub-loop, an old or foreign record) and for
    an agent of a loop's own (`agents:`), whose output is plain text."""
    if isinstance(agent, str):
        return KINDS.get(agent)
    return BY_ACTION_TYPE.get(action_type) if isinstance(action_type, str) else None


def recorded_type(spec: ActionKindSpec) -> str:
    """The `action_type` a step of *spec* is recorded with: its own first action type, or
    `prompt` for an agent kind that serves none itself (codex, a custom agent ...)."""
    return spec.action_types[0] if spec.action_types else _spec(_CLAUDE).action_types[0]


def get(name: str) -> ActionKindSpec:
    """The kind called *name* (as an `ActionRequest` names it); KeyError when none is."""
    return KINDS[name]
