"""What a run needs from this machine, checked before its first step: the agent CLIs it calls.

Every agent a reachable state may run on (`FSMLoop.agents_for`, sub-loops too) is checked
from its kind's spec: its program on PATH (`install_hint`), then `ready(machine)` (a login,
a supported version). Claude Code has one check more in `CHECKS`: the judge's calls and its
refusal to run as root outside a sandbox. A state with a fallback list may start while one
of its agents is ready: the others are named in a warning and skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Protocol

from little_loops.fsm.actions.machine import Machine as Machine
from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.actions.registry import agent_problem as agent_problem
from little_loops.fsm.actions.sandbox_key import BWRAP, SANDBOX_KEY, Sandbox
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.checks.subloop_checks import MAX_DEPTH
from little_loops.fsm.definition.graph.edges import loop_graph
from little_loops.fsm.definition.graph.verdicts import judged_by_llm
from little_loops.fsm.definition.model.pr_keys import PR_KEY
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.rules.fallback import NOT_INSTALLED, NOT_READY
from little_loops.fsm.facts.errors import LoopSetupError
from little_loops.fsm.forges import registry as forges
from little_loops.fsm.processes.launch import try_once


@dataclass(frozen=True)
class Use:
    """One call of an agent CLI a run can make: the state, what it does, its arguments."""

    state: str
    subloop: str | None  # the sub-loop the state is in; None: the run's own loop
    what: str  # `runs a Claude Code prompt`
    args: tuple[str, ...]
    # The state's agents when it has a fallback list (one may stand in for another).
    fallback: tuple[str, ...] = field(default=(), compare=False)
    kind: ActionKindSpec | None = field(default=None, compare=False, repr=False)
    sandboxed: bool = field(default=False, compare=False)  # its state runs under bubblewrap

    @property
    def where(self) -> str:
        """`state 'fix' of sub-loop 'child' runs a Claude Code prompt`."""
        inside = "" if self.subloop is None else f" of sub-loop '{self.subloop}'"
        return f"state '{self.state}'{inside} {self.what}"


class AgentCheck(Protocol):
    """One agent CLI a run may call: the calls a state makes, and what stops it here."""

    @property
    def program(self) -> str:
        """The agent CLI's command."""
        ...

    def calls(self, fsm: FSMLoop, state: StateConfig) -> list[tuple[str, tuple[str, ...]]]:
        """What *state* of *fsm* does with the program, and the arguments, per call."""
        ...

    def problem(self, uses: Sequence[Use], machine: Machine) -> str | None:
        """Why the program cannot make these calls here (one line naming the fix), or None."""
        ...


# Claude Code refuses these as root unless the environment says it runs in a sandbox (with
# claude_options.SKIP_PERMISSIONS_FLAG).
_ROOT_REFUSED = ("--allow-dangerously-skip-permissions",)
_BYPASS_MODE = "bypassPermissions"
_SANDBOX_VARIABLES = ("IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP")  # each must be "1" (Claude 2.1)


class ClaudeCode:
    """`claude`: prompt and slash-command actions, and the llm_structured judge when it asks
    Claude Code (no API key, or `llm.backend: claude`). Its modules are loaded by a run
    that has a prompt or an LLM judge."""

    @property
    def program(self) -> str:
        """The command the kind's runner starts."""
        from little_loops.fsm.actions import claude_code

        return claude_code.SPEC.program[0]

    def calls(self, fsm: FSMLoop, state: StateConfig) -> list[tuple[str, tuple[str, ...]]]:
        out = []
        agents = fsm.agents_for(state)
        if agents:
            from little_loops.fsm.actions import claude_code
            from little_loops.fsm.actions.claude_options import claude_flags

            if claude_code.SPEC in agents:
                flags = claude_flags(fsm.options_for(state, claude_code.SPEC))
                out.append(("runs a Claude Code prompt", tuple(flags)))
        # `llm.backend: auto` judges through the state's own agent when it can.
        if fsm.llm.enabled and judged_by_llm(state):
            from little_loops.fsm.evaluators.judge_claude import (
                CLAUDE_BACKEND,
                JUDGE_FLAGS,
                judge_backend,
            )

            judge = judge_backend(fsm.llm.for_agent(fsm.kind_for(state).name))
            if judge == CLAUDE_BACKEND:
                backend = fsm.llm.backend
                why = "llm.backend: claude" if backend == CLAUDE_BACKEND else "no API key"
                out.append((f"is judged through Claude Code (llm_structured, {why})", JUDGE_FLAGS))
        return out

    def problem(self, uses: Sequence[Use], machine: Machine) -> str | None:
        from little_loops.fsm.actions.claude_code import CLAUDE_INSTALL_HINT, CLAUDE_ROOT_ERROR
        from little_loops.fsm.evaluators.judge_claude import JUDGE_FLAGS

        if machine.which(self.program) is None:
            missing = f"{uses[0].where}, but claude is not on PATH; {CLAUDE_INSTALL_HINT}"
            if all(use.args == JUDGE_FLAGS for use in uses):  # only the judge asks it
                missing += " (or set ANTHROPIC_API_KEY for the judge, or run with --no-llm)"
            return missing
        if machine.root and not any(machine.env.get(v) == "1" for v in _SANDBOX_VARIABLES):
            refused = next(
                (use for use in uses if not use.sandboxed and _refused_as_root(use.args)), None
            )
            if refused is not None:
                return f"{refused.where} as root: {CLAUDE_ROOT_ERROR}"
        return None


def _refused_as_root(args: Sequence[str]) -> bool:
    """Whether Claude Code, run as root outside a sandbox, refuses *args*."""
    from little_loops.fsm.actions.claude_options import SKIP_PERMISSIONS_FLAG

    return any(
        arg in _ROOT_REFUSED
        or arg == SKIP_PERMISSIONS_FLAG
        or arg == f"--permission-mode={_BYPASS_MODE}"
        or (arg == "--permission-mode" and value == _BYPASS_MODE)
        for arg, value in pairwise([*args, ""])
    )


CHECKS: tuple[AgentCheck, ...] = (ClaudeCode(),)


def _claude_spec() -> ActionKindSpec:
    """Claude Code's kind (its module loaded by a run that has a prompt or a judge)."""
    from little_loops.fsm.actions import claude_code

    return claude_code.SPEC


def reachable_states(
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
            yield from reachable_states(child, None, depth + 1)


def needs(fsm: FSMLoop, start: str | None = None) -> dict[str, list[Use]]:
    """The calls of each agent a run of *fsm* (from *start*, default its initial state) can
    make, by agent name (`claude` ...); an agent no reachable state calls is left out.
    Raises LoopDefinitionError for a state whose `agent:` names no agent."""
    found: dict[str, list[Use]] = {}
    for name, loop, state in reachable_states(fsm, start):
        subloop = None if loop is fsm else loop.name
        agents = loop.agents_for(state)
        fallback = tuple(spec.name for spec in agents) if len(agents) > 1 else ()
        confined = loop.sandbox_for(state) if state.action else None
        bwrapped = confined is not None and confined.command is None
        for check in CHECKS:
            for what, args in check.calls(loop, state):
                from little_loops.fsm.evaluators.judge_claude import JUDGE_FLAGS

                use = Use(name, subloop, what, args, fallback if args != JUDGE_FLAGS else ())
                if args != JUDGE_FLAGS:  # the judge is ll-loop's own call: never confined
                    use = replace(use, sandboxed=bwrapped)
                found.setdefault(check.program, []).append(use)
        for spec in agents:
            if spec is not _claude_spec():
                what = f"runs a prompt on {spec.shown_as}"
                extra = tuple(map(str, loop.options_for(state, spec).get("extra_args") or ()))
                use = Use(name, subloop, what, extra, fallback, spec)
                found.setdefault(spec.name, []).append(use)
        judge = _judging_agent(loop, state)
        if judge is not None:
            what = f"is judged through {judge.shown_as} (llm_structured)"
            found.setdefault(judge.name, []).append(Use(name, subloop, what, (), (), judge))
    return found


def _judging_agent(fsm: FSMLoop, state: StateConfig) -> ActionKindSpec | None:
    """The agent other than Claude Code that judges *state* (`llm.backend: NAME`, or auto
    on a state whose agent can judge), or None (no LLM judge, the API, or Claude Code: its
    check is `ClaudeCode.calls`)."""
    if not fsm.llm.enabled or not judged_by_llm(state):
        return None
    from little_loops.fsm.evaluators.judge_claude import judge_backend

    backend = judge_backend(fsm.llm.for_agent(fsm.kind_for(state).name))
    spec = AGENTS.get(backend)
    return None if spec is None or spec is _claude_spec() else spec


def _problem(name: str, uses: Sequence[Use], machine: Machine) -> str | None:
    """What stops agent *name* making *uses* here, naming the first use."""
    if name == CHECKS[0].program:
        from little_loops.fsm.actions import claude_code

        problem = CHECKS[0].problem(uses, machine)
        if problem is not None or claude_code.SPEC.ready is None:
            return problem
        ready = claude_code.SPEC.ready(machine)
        return None if ready is None else f"{uses[0].where}, but {ready}"
    kind = uses[0].kind
    # The arguments every one of its calls is given (`--skip-trust` ...) count.
    common = set(uses[0].args).intersection(*(use.args for use in uses[1:]))
    given = replace(machine, args=tuple(arg for arg in uses[0].args if arg in common))
    problem = None if kind is None else agent_problem(kind, given)
    return None if problem is None else f"{uses[0].where}, but {problem}"


@dataclass
class Readiness:
    """What the agents of a run lack here: `errors` stop it (by agent name), `warnings` name
    an agent of a fallback list that is skipped (another of the list is ready)."""

    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # The agents of fallback lists that are skipped, by name, with the reason of the
    # switch (`not_installed`, `not_ready`): the run never starts them (ExecutorConfig.unready).
    skipped: dict[str, str] = field(default_factory=dict)


def sandbox_problem(fsm: FSMLoop, start: str | None = None) -> str | None:
    """Why the sandbox a reachable state runs in cannot start here (bubblewrap missing or
    refused by the kernel, a wrapper not on PATH), naming the state; None: all can."""
    checked: dict[object, str | None] = {}
    for name, loop, state in reachable_states(fsm, start):
        confined = loop.sandbox_for(state) if state.action else None
        if confined is None:
            continue
        key = confined.command
        if key not in checked:
            checked[key] = bwrap_problem() if key is None else wrapper_problem(confined)
        problem = checked[key]
        if problem is not None:
            inside = "" if loop is fsm else f" of sub-loop '{loop.name}'"
            return f"state '{name}'{inside} runs in a sandbox, but {problem}"
    return None


def forge_problem(fsm: FSMLoop, machine: Machine, start: str | None = None) -> str | None:
    """Why a reachable `pr:` state cannot reach its forge from here (its CLI missing, not
    logged in, a remote it does not host), naming the state; None: each can."""
    checked: dict[tuple[str, str], str | None] = {}
    for name, loop, state in reachable_states(fsm, start):
        if state.pr is None:
            continue
        key = (state.pr.forge, state.pr.remote)
        if key not in checked:
            from little_loops.fsm.forges.forge import Place  # only a `pr:` state's run

            place = Place(Path.cwd(), state.pr.remote, dict(machine.env))
            checked[key] = forges.get(state.pr.forge).problem(place)
        problem = checked[key]
        if problem is not None:
            inside = "" if loop is fsm else f" of sub-loop '{loop.name}'"
            return f"state '{name}'{inside} opens a pull request, but {problem}"
    return None


def readiness(fsm: FSMLoop, start: str | None = None, machine: Machine | None = None) -> Readiness:
    """Check every agent a run of *fsm* can call (see the module's docstring), and the
    sandbox its steps run in."""
    machine = Machine.here() if machine is None else machine
    uses = needs(fsm, start)
    unready = {name: _problem(name, calls, machine) for name, calls in uses.items()}
    out = Readiness()
    confined = sandbox_problem(fsm, start)
    if confined is not None:
        out.errors[SANDBOX_KEY] = confined
    forge = forge_problem(fsm, machine, start)
    if forge is not None:
        out.errors[PR_KEY] = forge
    for name, problem in unready.items():
        if problem is None:
            continue
        # A call is covered when another agent of its state's list is ready.
        blocking = [
            use
            for use in uses[name]
            if not any(other != name and unready.get(other) is None for other in use.fallback)
        ]
        if not blocking:
            out.warnings.append(f"{problem} ({name} is skipped: the next agent of the list runs)")
            program = AGENTS[name].program[0] if name in AGENTS else name
            out.skipped[name] = NOT_INSTALLED if machine.which(program) is None else NOT_READY
        elif blocking[0] is uses[name][0]:
            out.errors[name] = problem
        else:
            out.errors[name] = _problem(name, blocking, machine) or problem
    return out


def problems(
    fsm: FSMLoop, start: str | None = None, machine: Machine | None = None
) -> dict[str, str]:
    """What stops each agent the run needs, by agent name (empty: ready to run)."""
    return readiness(fsm, start, machine).errors


def require(fsm: FSMLoop, start: str | None = None, machine: Machine | None = None) -> Readiness:
    """Raise LoopSetupError (one line per problem, joined) when an agent the run needs is
    missing or refuses to run here (nothing has run and no run file is written yet); else
    what was found: the warnings about agents of fallback lists that will be skipped, and
    those agents (the run is given them, so that it never starts one)."""
    found = readiness(fsm, start, machine)
    if found.errors:
        raise LoopSetupError("; and ".join(found.errors.values()))
    return found


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot confine a step here: not installed, or it cannot start (no
    user namespaces for this user); one line naming the fix, None when it works."""
    from little_loops.fsm.actions.sandbox import INSTALL_BWRAP, OLD_BWRAP, USERNS_HINT

    if shutil.which(BWRAP) is None:
        return INSTALL_BWRAP
    try:
        # With each option a step's sandbox needs that an old bubblewrap lacks (`--perms`).
        probe = [BWRAP, "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent"]
        code, stderr = try_once([*probe, "--perms", "000", "--tmpfs", "/tmp", "true"], 30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot start: {exc}"
    if code == 0:
        return None
    said = stderr.decode("utf-8", "replace").strip().splitlines()
    why = said[-1] if said else f"exit code {code}"
    if "namespace" in why or "Operation not permitted" in why or "setting up uid map" in why:
        return f"bwrap cannot start ({why}); {USERNS_HINT}"
    if "Unknown option" in why:
        return f"bwrap cannot start ({why}); {OLD_BWRAP}"
    return f"bwrap cannot start ({why})"


def wrapper_problem(sandbox: Sandbox) -> str | None:
    """Why the user's wrapper cannot run here: its program is not on PATH."""
    if sandbox.command is None:
        return None
    program = sandbox.command[0]
    if os.sep in program:
        return None if os.access(program, os.X_OK) else f"sandbox command {program} cannot run"
    return None if shutil.which(program) else f"sandbox command {program} is not on PATH"
