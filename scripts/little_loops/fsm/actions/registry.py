"""The action kinds by name: the one list that validation, the runner, the plan and display read."""

from __future__ import annotations

from little_loops.fsm.actions import claude_code, opencode, shell
from little_loops.fsm.actions.spec import ActionKindSpec

# In the order the docs and messages list their action types. To add an action kind: write
# its module (its SPEC) in this folder and add it here.
KINDS: dict[str, ActionKindSpec] = {
    spec.name: spec
    for spec in (
        claude_code.SPEC,
        shell.SPEC,
        opencode.SPEC,
    )
}
# The kind of an action without `action_type:` (unless it is a `/` command, see `kind_of`).
DEFAULT_KIND = shell.SPEC
# The kind of an action without `action_type:` that starts with `/`: a slash command.
SLASH_KIND = claude_code.SPEC
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


def recorded(action_type: object) -> ActionKindSpec | None:
    """The kind of a step as its event records it (`action_type` of `action_start`), or
    None for a step no kind ran (a sub-loop, an old or foreign record)."""
    return BY_ACTION_TYPE.get(action_type) if isinstance(action_type, str) else None


def get(name: str) -> ActionKindSpec:
    """The kind called *name* (as an `ActionRequest` names it); KeyError when none is."""
    return KINDS[name]
