"""Check a raw loop's agents: `agent:` names, custom `agents:`, options blocks, the judge."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from little_loops.fsm.actions.registry import AGENTS, ENTRIES, can_judge, is_agent_action
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.model.agents import (
    AGENT_KEY,
    AGENTS_KEY,
    filled_names,
    no_agent,
    reference_problem,
    unknown_agent,
    written_names,
)
from little_loops.fsm.definition.model.lint_flags import CLAUDE_SUBAGENT
from little_loops.fsm.definition.model.parameters import parse_parameters
from little_loops.fsm.definition.model.typed import SESSION_CONTINUE
from little_loops.fsm.evaluators.config import JUDGE_BACKENDS
from little_loops.fsm.facts.errors import InterpolationError, Severity
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import one_of

KeyPath = tuple[str | int, ...]


class Problem(NamedTuple):
    """One problem of a loop's agents: where, what, how bad, and the stricter check of
    lint_flags it comes from (None: not one)."""

    path: KeyPath
    message: str
    severity: Severity
    check: str | None = None


class _Names:
    """The agent names a loop can use, and what an `agent:` value of it stands for."""

    def __init__(self, data: Mapping[str, Any], project: Sequence[str]) -> None:
        own = data.get(AGENTS_KEY)
        custom = [str(name) for name in own] if isinstance(own, Mapping) else []
        self.known: list[str] = list(dict.fromkeys([*AGENTS, *project, *custom]))
        context = data.get("context")
        self.context = dict(context) if isinstance(context, Mapping) else {}
        try:
            self.parameters = parse_parameters(data.get("parameters"))
        except (TypeError, ValueError):  # a bad `parameters:` is reported on its own
            self.parameters = {}

    def possible(self, value: object) -> list[str] | None:
        """Every name *value* can stand for: as written, with the parameters' defaults and
        each of their choices; None when that cannot be known before a run."""
        runs = [{name: p.default for name, p in self.parameters.items()}]
        for name, spec in self.parameters.items():
            runs += [{**runs[0], name: choice} for choice in spec.choices or ()]
        out: list[str] = []
        for values in runs:
            try:
                out += filled_names(value, {**values, **self.context})
            except InterpolationError:
                return None
        return list(dict.fromkeys(out))

    def open_ended(self, value: object) -> bool:
        """True when *value* names a parameter with no `choices:`: a run may give it any
        agent (`--set agent=NAME`), so no agent's options block is unused."""
        free = [name for name, spec in self.parameters.items() if not spec.choices]
        return any(
            re.search(rf"\bcontext\.{re.escape(name)}\b", written)
            for written in written_names(value)
            for name in free
        )


def agent_problems(data: Mapping[str, Any], project: Sequence[str] = ()) -> Iterator[Problem]:
    """Every problem of *data*'s agents; *project* names the project's custom agents."""
    names = _Names(data, project)
    custom = data.get(AGENTS_KEY)
    if isinstance(custom, Mapping):
        from little_loops.fsm.actions.custom import definition_problems

        for name, entry in custom.items():
            for at, message in definition_problems(name, entry, tuple(AGENTS)):
                yield Problem((AGENTS_KEY, str(name), *at), message, "error")
    yield from _value_problems(names, data.get(AGENT_KEY), (AGENT_KEY,))
    used: set[str] = set()
    states = data.get("states")
    for state_name, state in states.items() if isinstance(states, Mapping) else ():
        if not isinstance(state, Mapping):
            continue
        path: KeyPath = ("states", str(state_name))
        for where, value in _branch_agents(state, path):  # `parallel:` prompt branches
            yield from _value_problems(names, value, where)
            possible = names.possible(value)
            used.update(AGENTS if possible is None or names.open_ended(value) else possible)
        prompt = state.get("action") and is_agent_action(
            state.get("action_type"), state.get("action")
        )
        if state.get(AGENT_KEY) is not None and not prompt:
            yield Problem(
                (*path, AGENT_KEY),
                "only a prompt or slash-command state runs on an agent",
                "error",
            )
            continue
        yield from _value_problems(names, state.get(AGENT_KEY), (*path, AGENT_KEY))
        if not prompt:
            continue
        value = state.get(AGENT_KEY) if state.get(AGENT_KEY) is not None else data.get(AGENT_KEY)
        runs_on = names.possible(value) if value is not None else ["claude"]
        if runs_on is None or names.open_ended(value):
            used.update(AGENTS)  # a reference to an unknown value: any agent may run
            continue
        used.update(runs_on)
        yield from _unused_blocks(state, path, runs_on, "this state runs on")
        yield from _sessionless(state, path, runs_on)
    yield from _unused_blocks(data, (), sorted(used), "no prompt state runs on")
    yield from _judge_problems(data, names)


def _branch_agents(state: Mapping[Any, Any], path: KeyPath) -> Iterator[tuple[KeyPath, object]]:
    """The `agent:` of each prompt branch of *state*'s `parallel:`, with its key path."""
    block = state.get("parallel")
    branches = block.get("branches") if isinstance(block, Mapping) else None
    for index, branch in enumerate(branches if isinstance(branches, list) else [], 1):
        if isinstance(branch, Mapping) and branch.get(AGENT_KEY) is not None:
            yield (*path, "parallel", f"branch {index}", AGENT_KEY), branch[AGENT_KEY]


def _value_problems(names: _Names, value: object, path: KeyPath) -> Iterator[Problem]:
    if value is None:
        return
    for name in written_names(value):
        problem = reference_problem(name)
        if problem is not None:
            yield Problem(path, problem, "error")
            return
    possible = names.possible(value)
    if possible == []:
        yield Problem(path, no_agent(value), "error")
    for name in possible or ():
        if name not in names.known:
            known = dict.fromkeys(names.known)
            # At a state, a name close to none of ours is little-loops' Claude subagent.
            subagent = path[0] == "states" and len(path) == 3 and not did_you_mean(name, known)
            yield Problem(
                path, unknown_agent(name, known), "error", CLAUDE_SUBAGENT if subagent else None
            )


def _sessionless(data: Mapping[str, Any], path: KeyPath, runs_on: list[str]) -> Iterator[Problem]:
    """A warning for `session: continue` on a state none of whose agents keeps a session
    (a custom agent is a command: each visit starts afresh)."""
    if data.get("session") != SESSION_CONTINUE:
        return
    if any(name in AGENTS and AGENTS[name].sessions for name in runs_on):
        return
    shown = ", ".join(runs_on)
    message = f"no session to continue: {shown} keeps none (each visit starts afresh)"
    yield Problem((*path, "session"), message, "warning")


def _unused_blocks(
    data: Mapping[str, Any], path: KeyPath, runs_on: list[str], why: str
) -> Iterator[Problem]:
    """A warning for the options block of an agent the state (or no state) runs on."""
    for name in AGENTS:
        key = ENTRIES[name].options_key  # its spec only when its block is there
        if not key or data.get(key) is None or name in runs_on:
            continue
        if path:
            shown = ", ".join(runs_on)
            message = f"not used: {why} {shown} (add {name} to its agent: to use it)"
        else:
            message = f"not used: {why} {name}"
        yield Problem((*path, key), message, "warning")


def _judge_problems(data: Mapping[str, Any], names: _Names) -> Iterator[Problem]:
    """`llm.backend:` is auto, api or an agent that can judge (answers schema-checked JSON)."""
    llm = data.get("llm")
    backend = llm.get("backend") if isinstance(llm, Mapping) else None
    if not isinstance(backend, str) or backend in JUDGE_BACKENDS:
        return
    spec: ActionKindSpec | None = AGENTS.get(backend)
    if spec is None and backend in names.known:
        yield Problem(
            ("llm", "backend"),
            f"the custom agent {backend} cannot judge: it answers with no schema-checked JSON",
            "error",
        )
        return
    if spec is None:
        problem = one_of(tuple(dict.fromkeys([*JUDGE_BACKENDS, *AGENTS])))(backend)
        yield Problem(("llm", "backend"), str(problem), "error")
    elif not can_judge(spec):
        yield Problem(("llm", "backend"), f"{backend} cannot judge: {spec.no_judge}", "error")
