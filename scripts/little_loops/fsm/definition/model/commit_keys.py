"""Checkpoint keys (`commit:`, `rollback:`): their rows, the loop's commit mode among them."""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import LOOP, STATE, Key
from little_loops.fsm.definition.model.typed import COMMIT_EACH_PASS
from little_loops.fsm.values.value_checks import Check, boolean, describe, optional


def _commit_mode(value: object) -> str | None:
    if value == COMMIT_EACH_PASS or value is False:
        return None
    if value is True:
        # true would read as "commit once": the loop-level word says when.
        return f"expected {COMMIT_EACH_PASS} or false, got true (commit: true goes on a state)"
    return f"expected {COMMIT_EACH_PASS} or false, got {describe(value)}"


# The loop's `commit:`: each_pass (every state's action commits) or false (the default).
COMMIT_MODE = Check(_commit_mode, {"enum": [COMMIT_EACH_PASS, False]})
COMMIT = Key(
    "commit",
    (LOOP, STATE),
    optional(boolean),
    "In a worktree run: after the action (a state without one: when entered), commit the "
    "worktree if it changed ('ll-loop NAME: STATE (pass N)'). Default: the loop's commit:.",
    checks={LOOP: COMMIT_MODE},
    defaults={LOOP: False},
    docs={
        LOOP: "each_pass: in a worktree run, every state's action is followed by a git commit "
        "when it changed the worktree (as if each state had commit: true). Default false."
    },
)
ROLLBACK = Key(
    "rollback",
    (STATE,),
    boolean,
    "In a worktree run: before the action, discard the worktree's uncommitted changes and "
    "untracked files (git reset --hard HEAD, git clean -fd); HEAD never moves. Default false.",
    default=False,
)
KEYS: tuple[Key, ...] = (COMMIT, ROLLBACK)
# The checkpoint keys a state may have (definition/checks/commit_checks.py checks them).
STATE_KEYS: tuple[str, ...] = tuple(row.name for row in KEYS if STATE in row.where)
