"""Do one state's work: run its action and evaluate it, emitting events and adding up spend."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions import sandbox
from little_loops.fsm.actions.protocol import ActionRunner
from little_loops.fsm.actions.ratelimit import judge_limit
from little_loops.fsm.actions.registry import recorded_type
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.sandbox import Confinement
from little_loops.fsm.actions.spec import ActionKindSpec, filled
from little_loops.fsm.definition.model import SESSION_CONTINUE, FSMLoop, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.limits import action_timeout, idle_timeout
from little_loops.fsm.engine.records import short
from little_loops.fsm.evaluators.dispatch import evaluate
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import output_file_name
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.values.interpolation import InterpolationContext

Emit = Callable[[Event, Mapping[str, object]], None]

# Whose a session recorded without its agent is: the only agent with sessions then.
CLAUDE_SESSIONS = "claude"

# A prompt action that prints this at the start of a line hands its context over: the
# run stops with terminated_by "handoff" and can be resumed with the text.
HANDOFF_PATTERN = re.compile(r"^CONTEXT_HANDOFF:[ \t]*(.*)$", re.MULTILINE)


def handoff_note(output: str) -> str | None:
    """The note a prompt action's *output* hands over (`CONTEXT_HANDOFF: ...`), or None."""
    found = HANDOFF_PATTERN.search(output)
    return None if found is None else found.group(1).strip()


def action_request(
    fsm: FSMLoop,
    state: StateConfig,
    action: str,
    timeout: float,
    output_file: Path | None,
    options: dict[str, Any] | None,
    resume: str | None,
    env: dict[str, str] | None = None,
    kind: ActionKindSpec | None = None,
    cwd: Path | None = None,
) -> ActionRequest:
    """The request that runs *state*'s *action* (already interpolated) on *kind* (its
    first agent unless told): the one place the engine builds an ActionRequest."""
    kind = fsm.kind_for(state) if kind is None else kind
    return ActionRequest(
        action=action,
        timeout=timeout,
        kind=kind.name,
        idle_timeout=idle_timeout(fsm, state, kind),
        output_file=output_file,
        options=options,
        resume_session=resume,
        env=env or None,
        spec=kind,
        cwd=cwd,
    )


class StateWork:
    """Runs actions through a runner and evaluates them, for one executor."""

    def __init__(
        self,
        fsm: FSMLoop,
        runner: ActionRunner,
        emit: Emit,
        *,
        output_dir: Path | None = None,
        output_key: str | None = None,
        llm_client: Any = None,
        cwd: Path | None = None,
        workdir: Path | None = None,
        loops_dir: Path | None = None,
    ) -> None:
        self.fsm = fsm
        self.cwd = cwd  # where its actions run; None: the runner's directory
        self.workdir = workdir  # the run's working tree: a sandboxed step may write it
        self.loops_dir = loops_dir  # the run's `.loops/`: a sandboxed step may only read it
        self.runner = runner
        self.emit = emit
        self.output_dir = output_dir
        self.output_key = output_key or fsm.name  # output files are `<key>.<state>.out`
        self.llm_client = llm_client

    def act(
        self,
        name: str,
        state: StateConfig,
        action: str,
        remaining_s: float | None,
        spend: Spend,
        sessions: dict[str, str] | None = None,
        fill: Callable[[str], str] | None = None,
        env: dict[str, str] | None = None,
        shown: str | None = None,
        kind: ActionKindSpec | None = None,
        session_agents: dict[str, str] | None = None,
    ) -> ActionResult:
        """Run *action* (already interpolated) of state *name*, within *remaining_s*; the
        caller reports it with `completed`; *env* holds the values a shell script reads
        (shellquote), *shown* the script with them in place, for people. A Claude action
        records its session id in *sessions* (by `session_name`) and its agent in
        *session_agents*; a `session: continue` one resumes it from there when it is the
        same agent's (another agent's session starts afresh). *kind*: the agent of the
        state's list that runs it (its first unless told)."""
        kind = self.fsm.kind_for(state) if kind is None else kind
        key = state.session_name(name)
        resume, fresh = None, None
        if state.session == SESSION_CONTINUE and sessions and key in sessions:
            whose = (session_agents or {}).get(key, CLAUDE_SESSIONS)
            if whose != kind.name:  # another agent cannot read it: a fresh one, the prompt
                fresh = f"session '{key}' is {whose}'s: {kind.name} starts a fresh one"
            elif kind.sessions:
                resume = sessions[key]
        timeout = action_timeout(state, kind, remaining_s, self.fsm.default_timeout)
        output_file = None
        if self.runner.streams_output and self.output_dir is not None:
            output_file = self.output_dir / output_file_name(self.output_key, name)
        start = events.ActionStart(
            state=name,
            action=short(shown or action),
            action_type=recorded_type(kind),
            timeout=timeout,
        )
        if kind.agent is not None:
            start["agent"] = kind.name  # which agent: `prompt` is any agent's action type
        if output_file is not None:
            start["output_path"] = str(output_file)  # where its output streams, live
        if resume is not None:
            start["resume_session"] = resume
        if fresh is not None:
            start["fresh_session"] = fresh
        if env:  # what bash really runs: the script and the values it reads
            start["script"] = short(action)
            start["values"] = {key: short(value) for key, value in env.items()}
        confinement = self._confinement(state, kind)
        if confinement is not None:
            start["sandbox"] = sandbox.as_event(confinement.sandbox)
        self.emit(Event.ACTION_START, start)
        options = self._options(state, kind, fill) if kind.options_key else None
        if kind.takes_params:  # an MCP tool's arguments
            params = state.params or {}
            options = {"params": params if fill is None else filled(params, fill)}
        request = action_request(
            self.fsm, state, action, timeout, output_file, options, resume, env, kind, self.cwd
        )
        request.confinement = confinement
        result = self.runner.execute(request)
        if resume is not None and kind.lost_session(result):
            spend.add(result.cost_usd, result.usage, f"{kind.name}_")
            note = f"{kind.name} cannot resume session {resume}: state '{name}' starts a fresh one"
            self.emit(
                Event.SESSION_LOST, events.SessionLost(state=name, session_id=resume, note=note)
            )
            result = self.runner.execute(dataclasses.replace(request, resume_session=None))
        spend.add(result.cost_usd, result.usage, f"{kind.name}_")  # claude_input_tokens ...
        if kind.sessions and result.session_id and sessions is not None:
            sessions[key] = result.session_id
            if session_agents is not None:
                session_agents[key] = kind.name
        return result

    def _confinement(self, state: StateConfig, kind: ActionKindSpec) -> Confinement | None:
        """Where *state*'s action on *kind* runs confined (None: it is not): its sandbox,
        the tree it may write, the `.loops/` it may only read, its agent's home paths."""
        chosen = self.fsm.sandbox_for(state, kind)
        if chosen is None:
            return None
        work = Path(self.cwd or self.workdir or Path.cwd()).absolute()
        loops = None if self.loops_dir is None else self.loops_dir.absolute()
        return Confinement(
            chosen,
            work=work,
            loops=loops,
            home_paths=kind.home_paths,
            home_writes=kind.home_writes,
            home_code=kind.home_code,
            git_dir=sandbox.repository_of(loops),
        )

    def _options(
        self, state: StateConfig, kind: ActionKindSpec, fill: Callable[[str], str] | None
    ) -> dict[str, Any]:
        """The state's options over the loop's (of *kind*, the agent that runs it), `${...}`
        in them filled in by *fill*."""
        options = self.fsm.options_for(state, kind)
        return options if fill is None else filled(options, fill)

    def completed(self, name: str, result: ActionResult, spend: Spend) -> None:
        """Emit `action_complete` for *result* of state *name* (once the run has taken it in)."""
        self.emit(Event.ACTION_COMPLETE, events.action_complete(name, result, spend.cost_usd))

    def judge(
        self,
        name: str,
        state: StateConfig,
        action_result: ActionResult | None,
        ctx: InterpolationContext,
        spend: Spend,
        record: Callable[[EvaluationResult], None] | None = None,
    ) -> EvaluationResult:
        """The verdict on state *name*'s action (an error when the action could not run);
        *record* keeps it before its `evaluate` event is written (a resume replays it)."""
        output = action_result.output if action_result else ""
        exit_code = action_result.exit_code if action_result else 0
        runner_error = action_result.error if action_result else None
        config = state.effective_evaluate()
        if self.fsm.theirs:  # --compat: the evaluators read the result as little-loops does
            config = dataclasses.replace(config, theirs=True)
        if runner_error:
            # The action could not run properly (timeout, missing executable, ...): no
            # evaluator can judge it, and an LLM call would be paid for nothing.
            result = EvaluationResult(
                ERROR_VERDICT, {"error": runner_error, "exit_code": exit_code}
            )
        else:
            # `llm.backend: auto` may judge through the state's own agent.
            llm = self.fsm.llm.for_agent(self.fsm.kind_for(state).name)
            result = evaluate(config, output, exit_code, ctx, llm=llm, client=self.llm_client)
        cost = None
        usage = result.details.get("usage")
        reported = result.details.get("cost_usd")  # the judge via Claude Code reports its cost
        if isinstance(reported, float):
            cost = spend.add_judge_cost(reported, usage)
        elif isinstance(usage, dict) and usage:
            model = str(result.details.get("model") or self.fsm.llm.model)
            cost = spend.add_judge(model, usage)
        if result.verdict == ERROR_VERDICT and judge_limit(result.details) is not None:
            return result  # not a verdict: the executor waits and asks the judge again
        if record is not None:
            record(result)
        self.emit(
            Event.EVALUATE,
            events.evaluation(name, config.type, result.verdict, result.details, cost),
        )
        return result
