"""What a run needs from this machine, checked before its first step: the agent CLIs it calls.

Each agent CLI is one check in `CHECKS`: the program it needs, which steps of a loop call it
(with the arguments they pass), and what stops it from running here. A check of another
agent (codex, gemini, ...) is one more class with the `AgentCheck` methods and a line in
`CHECKS`; `needs`, `problems`, `require` and the dry-run plan read the tuple.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from little_loops.fsm.actions import claude_code
from little_loops.fsm.actions.claude_code import CLAUDE_INSTALL_HINT, CLAUDE_ROOT_ERROR
from little_loops.fsm.actions.claude_options import SKIP_PERMISSIONS_FLAG, claude_flags
from little_loops.fsm.definition.graph import loop_graph
from little_loops.fsm.definition.model import FSMLoop, StateConfig
from little_loops.fsm.definition.subloop_checks import MAX_DEPTH
from little_loops.fsm.definition.verdicts import judged_by_llm
from little_loops.fsm.evaluators.judge_claude import CLAUDE_BACKEND, JUDGE_FLAGS, judge_backend
from little_loops.fsm.facts.errors import LoopSetupError


@dataclass(frozen=True)
class Machine:
    """What the checks look at: the environment, whether this process is root, and how a
    program is found on PATH (the real ones by default; a test may give its own)."""

    env: Mapping[str, str]
    root: bool
    which: Callable[[str], str | None]

    @classmethod
    def here(cls) -> Machine:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        return cls(dict(os.environ), root, shutil.which)


@dataclass(frozen=True)
class Use:
    """One call of an agent CLI a run can make: the state, what it does, its arguments."""

    state: str
    subloop: str | None  # the sub-loop the state is in; None: the run's own loop
    what: str  # `runs a Claude Code prompt`
    args: tuple[str, ...]

    @property
    def where(self) -> str:
        """`state 'fix' of sub-loop 'child' runs a Claude Code prompt`."""
        inside = "" if self.subloop is None else f" of sub-loop '{self.subloop}'"
        return f"state '{self.state}'{inside} {self.what}"


class AgentCheck(Protocol):
    """One agent CLI a run may call: the calls a state makes, and what stops it here."""

    program: str

    def calls(self, fsm: FSMLoop, state: StateConfig) -> list[tuple[str, tuple[str, ...]]]:
        """What *state* of *fsm* does with the program, and the arguments, per call."""
        ...

    def problem(self, uses: Sequence[Use], machine: Machine) -> str | None:
        """Why the program cannot make these calls here (one line naming the fix), or None."""
        ...


# Claude Code refuses these as root unless the environment says it runs in a sandbox.
_ROOT_REFUSED = (SKIP_PERMISSIONS_FLAG, "--allow-dangerously-skip-permissions")
_BYPASS_MODE = "bypassPermissions"
_SANDBOX_VARIABLES = ("IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP")  # each must be "1" (Claude 2.1)


class ClaudeCode:
    """`claude`: prompt and slash-command actions, and the llm_structured judge when it asks
    Claude Code (no API key, or `llm.backend: claude`)."""

    program = claude_code.SPEC.program[0]  # the command the kind's runner starts

    def calls(self, fsm: FSMLoop, state: StateConfig) -> list[tuple[str, tuple[str, ...]]]:
        out = []
        if state.action and state.action_kind().program[0] == self.program:
            flags = claude_flags(fsm.options_for(state))
            out.append(("runs a Claude Code prompt", tuple(flags)))
        if fsm.llm.enabled and judged_by_llm(state) and judge_backend(fsm.llm) == CLAUDE_BACKEND:
            why = "llm.backend: claude" if fsm.llm.backend == CLAUDE_BACKEND else "no API key"
            out.append((f"is judged through Claude Code (llm_structured, {why})", JUDGE_FLAGS))
        return out

    def problem(self, uses: Sequence[Use], machine: Machine) -> str | None:
        if machine.which(self.program) is None:
            missing = f"{uses[0].where}, but claude is not on PATH; {CLAUDE_INSTALL_HINT}"
            if all(use.args == JUDGE_FLAGS for use in uses):  # only the judge asks it
                missing += " (or set ANTHROPIC_API_KEY for the judge, or run with --no-llm)"
            return missing
        if machine.root and not any(machine.env.get(v) == "1" for v in _SANDBOX_VARIABLES):
            refused = next((use for use in uses if _refused_as_root(use.args)), None)
            if refused is not None:
                return f"{refused.where} as root: {CLAUDE_ROOT_ERROR}"
        return None


def _refused_as_root(args: Sequence[str]) -> bool:
    """Whether Claude Code, run as root outside a sandbox, refuses *args*."""
    return any(
        arg in _ROOT_REFUSED
        or arg == f"--permission-mode={_BYPASS_MODE}"
        or (arg == "--permission-mode" and value == _BYPASS_MODE)
        for arg, value in pairwise([*args, ""])
    )


CHECKS: tuple[AgentCheck, ...] = (ClaudeCode(),)


def _states(
    fsm: FSMLoop, start: str | None, depth: int = 0
) -> Iterator[tuple[str, FSMLoop, StateConfig]]:
    """Each state a run can enter, by name, with the loop it is in; the states of the
    sub-loops it can enter too (validation has refused recursion)."""
    can_enter = loop_graph(fsm).reachable(start)
    for name, state in fsm.states.items():
        if name not in can_enter:
            continue
        yield name, fsm, state
        child = fsm.children.get(name) if state.loop is not None else None
        if child is not None and depth < MAX_DEPTH:
            yield from _states(child, None, depth + 1)


def needs(fsm: FSMLoop, start: str | None = None) -> dict[str, list[Use]]:
    """The calls of each agent CLI a run of *fsm* (from *start*, default its initial state)
    can make, by program; a program no reachable state calls is left out."""
    found: dict[str, list[Use]] = {}
    for name, loop, state in _states(fsm, start):
        subloop = None if loop is fsm else loop.name
        for check in CHECKS:
            for what, args in check.calls(loop, state):
                found.setdefault(check.program, []).append(Use(name, subloop, what, args))
    return found


def problems(
    fsm: FSMLoop, start: str | None = None, machine: Machine | None = None
) -> dict[str, str]:
    """What stops each agent CLI the run needs, by program (empty: ready to run)."""
    machine = Machine.here() if machine is None else machine
    uses = needs(fsm, start)
    out: dict[str, str] = {}
    for check in CHECKS:
        if check.program in uses:
            problem = check.problem(uses[check.program], machine)
            if problem is not None:
                out[check.program] = problem
    return out


def require(fsm: FSMLoop, start: str | None = None, machine: Machine | None = None) -> None:
    """Raise LoopSetupError (one line per problem, joined) when a tool the run needs is
    missing or refuses to run here; nothing has run and no run file is written yet."""
    found = problems(fsm, start, machine)
    if found:
        raise LoopSetupError("; and ".join(found.values()))
