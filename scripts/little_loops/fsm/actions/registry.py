"""The action kinds by name: the one list that validation, the runner, the plan and display read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from little_loops.fsm.actions import claude_code, codex, gemini, mcp_tool, opencode, shell
from little_loops.fsm.actions.spec import ActionKindSpec

if TYPE_CHECKING:
    from little_loops.fsm.actions.machine import Machine

# In the order the docs and messages list their action types. To add an action kind: write
# its module (its SPEC) in this folder and add it here.
KINDS: dict[str, ActionKindSpec] = {
    spec.name: spec
    for spec in (
        claude_code.SPEC,
        shell.SPEC,
        codex.SPEC,
        gemini.SPEC,
        opencode.SPEC,
        mcp_tool.SPEC,
    )
}
# The kind of an action without `action_type:` (unless it is a `/` command, see `kind_of`).
DEFAULT_KIND = shell.SPEC
# The kind of an action without `action_type:` that starts with `/`: a slash command.
SLASH_KIND = claude_code.SPEC
# The coding agents a prompt or slash-command state can run on (`agent:`), by name: the kinds
# with an `agent`. `claude` serves `action_type: prompt` itself; any other agent kind serves
# no action type of its own (`action_types=()`): the state's `agent:` picks it.
AGENTS: dict[str, ActionKindSpec] = {
    spec.name: spec for spec in KINDS.values() if spec.agent is not None
}
# The agent of a prompt state with no `agent:` anywhere (as before agents could be chosen).
DEFAULT_AGENT = claude_code.SPEC
# Every `action_type:` value some kind serves, and its kind.
BY_ACTION_TYPE: dict[str, ActionKindSpec] = {
    name: spec for spec in KINDS.values() for name in spec.action_types
}
ACTION_TYPE_NAMES: tuple[str, ...] = tuple(BY_ACTION_TYPE)
# The kinds with an options block (`claude:` ...), by the loop and state key of the block.
BY_OPTIONS_KEY: dict[str, ActionKindSpec] = {
    spec.options_key: spec for spec in KINDS.values() if spec.options_key
}


def kind_of(action_type: object, action: object) -> ActionKindSpec:
    """The kind of an action, from its state's `action_type:` and its text: the kind that
    serves that action type; without one, a `/` command goes to `SLASH_KIND`, else bash.
    An action type no kind serves (approval, a typo validation refuses) is `DEFAULT_KIND`."""
    if isinstance(action_type, str) and action_type:
        return BY_ACTION_TYPE.get(action_type, DEFAULT_KIND)
    if action_type is None and isinstance(action, str) and action.startswith("/"):
        return SLASH_KIND
    return DEFAULT_KIND


def is_agent_action(action_type: object, action: object) -> bool:
    """True when an action with this `action_type:` and text goes to a coding agent (a
    prompt or slash command: the state's `agent:` says which one)."""
    return kind_of(action_type, action).agent is not None


def can_judge(spec: ActionKindSpec) -> bool:
    """True when the agent *spec* can be the `llm_structured` judge: its CLI answers with
    schema-checked JSON (`spec.judge`; Claude Code through evaluators/judge_claude.py)."""
    return spec.judge is not None or spec is DEFAULT_AGENT


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
    return spec.action_types[0] if spec.action_types else DEFAULT_AGENT.action_types[0]


def get(name: str) -> ActionKindSpec:
    """The kind called *name* (as an `ActionRequest` names it); KeyError when none is."""
    return KINDS[name]
