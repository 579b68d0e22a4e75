"""The shell action kind (`action_type: shell`, and the default): a bash command, `bash -c`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation

if TYPE_CHECKING:
    from little_loops.fsm.actions.request import ActionRequest


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`bash -c ACTION`: the action is a bash script."""
    return [*program, request.action]


SPEC = ActionKindSpec(
    name="shell",
    summary="a bash command, run with bash -c",
    action_types=("shell",),
    argv=argv,
    program=("bash", "-c"),
    interpolation=Interpolation.SHELL,
    default_evaluator="exit_code",
    default_timeout=120,  # a check should not take long
    label="shell action",
    runs_as="runs with bash",
    sets_pwd=True,
)
