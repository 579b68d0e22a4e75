"""What an action is asked to do and what it did: the request/result pair of every runner."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.values.shellquote import env_lines

if TYPE_CHECKING:
    from collections.abc import Mapping

    from little_loops.fsm.actions.sandbox import Confinement
    from little_loops.fsm.actions.spec import ActionKindSpec


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
