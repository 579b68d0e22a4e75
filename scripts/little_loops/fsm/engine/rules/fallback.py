"""The fallback rule: the agents a run found limited or missing, until when, and the next one."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.ratelimit import USAGE_LIMIT, AgentLimit
from little_loops.fsm.actions.registry import agent_problem
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.actions.supervisor import NOT_FOUND_EXIT_CODE
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.records import KEEP_SWITCHES, ExecutorSnapshot

# Why a step went on with the next agent of its list (`reason` of `agent_switch`).
USAGE_LIMITED = "usage_limit"  # the agent said its usage limit is reached
NOT_INSTALLED = "not_installed"  # its program is not on PATH (exit 127, command not found)
NOT_READY = "not_ready"  # it failed, and its readiness check says why (no login, no key)
STILL_LIMITED = "limited"  # an earlier step found it limited, and its reset has not come

# What the runner (`command not found on PATH`) or bash (`command not found`, `No such file
# or directory` for a path) says, with exit 127, of a program that is not there.
_MISSING = re.compile(r"command not found|No such file or directory")

# What a person reads for each reason: "claude's usage limit", "claude is not installed".
REASON_WORDS: dict[str, str] = {
    USAGE_LIMITED: "{agent}'s usage limit",
    NOT_INSTALLED: "{agent} is not installed",
    NOT_READY: "{agent} cannot run here",
    STILL_LIMITED: "{agent} still limited",
}


def agents_of(fsm: FSMLoop, state: StateConfig) -> list[ActionKindSpec]:
    """The kinds *state*'s action may run on, in the order it tries them: its agents
    (`agent:`, a list is the fallback order), or its command's kind."""
    return fsm.agents_for(state) or [state.action_kind()]


def switch_text(event: dict[str, Any]) -> str:
    """An `agent_switch` event as a person reads it: `claude's usage limit (resets 15:00):
    on with mine`."""
    words = REASON_WORDS.get(str(event.get("reason")), "{agent} refused")
    said = words.format(agent=event.get("from") or "?")
    resets = event.get("resets")
    tail = f" (resets {resets})" if resets else ""
    return f"{said}{tail}: on with {event.get('to') or '?'}"


@dataclass(frozen=True)
class Refusal:
    """Why an agent could not do a step: the reason, and until when (epoch seconds;
    None: for the rest of the run), with the reset time it said, as shown."""

    reason: str
    until: float | None
    resets: str | None = None


def refusal(
    kind: ActionKindSpec,
    result: ActionResult,
    ladder_s: float,
    machine: Callable[[], Machine] = Machine.here,
) -> Refusal | None:
    """Why *kind*'s *result* sends the step to the next agent, or None (it did the step,
    or failed in a way another agent would not mend: a rate limit waits on the same one).
    A usage limit without a reset time lasts *ladder_s* (the `rate_limit:` ladder's wait).
    A failed agent whose output says it cannot run here (`kind.cannot_run`), or whose
    readiness check (on *machine*) now fails, e.g. its login expired, is skipped for the
    rest of the run, as a missing one."""
    said = f"{result.error or ''}\n{result.stderr}"
    if result.exit_code == NOT_FOUND_EXIT_CODE and _MISSING.search(said):
        return Refusal(NOT_INSTALLED, None)
    if kind.cannot_run(result) is not None:  # its own words: no login, root, untrusted ...
        return Refusal(NOT_READY, None)
    limit: AgentLimit | None = kind.usage_limit(result)
    if limit is None:
        failed = result.error is not None or result.exit_code != 0
        if failed and agent_problem(kind, machine()) is not None:
            return Refusal(NOT_READY, None)
        return None
    if limit.kind != USAGE_LIMIT:
        return None
    now = time.time()
    if limit.resets_at is not None and limit.resets_at > now:
        return Refusal(USAGE_LIMITED, limit.resets_at, limit.resets_text())
    return Refusal(USAGE_LIMITED, now + ladder_s)


class Fallback:
    """The agents this run found limited or missing (saved as `limited_agents`): a later
    step skips them until their time has come; a resume keeps them. The agents the
    preflight found unable to run here (*unready*: name to the reason, `not_installed` or
    `not_ready`) are skipped from the start."""

    def __init__(self, unready: Mapping[str, str] | None = None) -> None:
        self.unready = dict(unready or {})
        self.limited: dict[str, dict[str, Any]] = {}
        self.switches: list[dict[str, Any]] = []  # the last KEEP_SWITCHES `agent_switch`

    def dump(self) -> dict[str, Any]:
        return {
            "limited_agents": {name: dict(entry) for name, entry in self.limited.items()},
            "agent_switches": list(self.switches),
        }

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.limited = {
            name: dict(entry)
            for name, entry in snap.limited_agents.items()
            if isinstance(entry, dict)
        }
        self.switches = [dict(item) for item in snap.agent_switches if isinstance(item, dict)]

    def switched(self, event: dict[str, Any]) -> None:
        """A step went on with another agent (*event*, `agent_switch`'s payload)."""
        self.switches = [*self.switches, dict(event)][-KEEP_SWITCHES:]

    def mark(self, kind: ActionKindSpec, why: Refusal) -> None:
        """*kind* refused: skip it until *why* says."""
        entry: dict[str, Any] = {"reason": why.reason, "until": why.until}
        if why.resets:
            entry["resets"] = why.resets
        self.limited[kind.name] = entry

    def free(
        self, agents: Sequence[ActionKindSpec], now: float | None = None
    ) -> list[ActionKindSpec]:
        """The agents of *agents* that may run now, in their order (one whose time has come
        is free again)."""
        moment = time.time() if now is None else now
        out = []
        for kind in agents:
            if kind.name in self.unready:
                continue
            entry = self.limited.get(kind.name)
            if entry is not None and _until(entry) <= moment:
                del self.limited[kind.name]
                entry = None
            if entry is None:
                out.append(kind)
        return out

    def entry(self, kind: ActionKindSpec) -> dict[str, Any] | None:
        """What the run remembers of *kind*'s refusal, or None."""
        if kind.name in self.unready and kind.name not in self.limited:
            return {"reason": self.unready[kind.name], "until": None}
        return self.limited.get(kind.name)

    def waiting(self, agents: Sequence[ActionKindSpec]) -> AgentLimit | None:
        """When no agent of *agents* is free but one will be: the limit to wait out (until
        the earliest reset); None when one is free, or none ever will be (all missing)."""
        if len(agents) < 2 or self.free(agents):
            return None
        soonest = min(
            (_until(self.entry(kind) or {}) for kind in agents if kind.name not in self.unready),
            default=math.inf,
        )
        if math.isinf(soonest):
            return None
        names = ", ".join(kind.shown_as for kind in agents)
        return AgentLimit(USAGE_LIMIT, soonest, f"every agent of the list is limited ({names})")


def _until(entry: dict[str, Any]) -> float:
    until = entry.get("until")
    return float(until) if isinstance(until, int | float) else math.inf
