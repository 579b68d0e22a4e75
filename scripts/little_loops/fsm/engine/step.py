"""Do one state's work: run its action and evaluate it, emitting events and adding up spend."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.protocol import ActionRunner
from little_loops.fsm.actions.ratelimit import judge_limit
from little_loops.fsm.actions.registry import recorded_type
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec, filled
from little_loops.fsm.definition.model.typed import SESSION_CONTINUE, FSMLoop, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.limits import action_timeout, idle_timeout
from little_loops.fsm.engine.records import short
from little_loops.fsm.evaluators.config import LLMConfig
from little_loops.fsm.evaluators.dispatch import evaluate
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import output_file_name
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.values.interpolation import InterpolationContext

if TYPE_CHECKING:  # the sandbox's module loads for a confined step (a shell loop has none)
    from little_loops.fsm.actions.sandbox import Confinement

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


@dataclass(frozen=True)
class ActionCall:
    """One run of state *name*'s action, as `StateWork.act` is handed it: *action* is its
    text with the `${...}` filled in; *env* holds the values a shell script reads
    (shellquote) and *shown* the script with them in place, for people; *kind* is the agent
    of the state's list that runs it (its first unless told); *fill* fills in the `${...}`
    of its options and params."""

    name: str
    state: StateConfig
    action: str
    kind: ActionKindSpec | None = None
    env: dict[str, str] | None = None
    shown: str | None = None
    fill: Callable[[str], str] | None = None


@dataclass(frozen=True)
class SessionBook:
    """The sessions of a run's agent actions: each one's id by `session_name` (*ids*) and
    the agent it is of (*agents*); a `session: continue` action resumes from here."""

    ids: dict[str, str]
    agents: dict[str, str] | None = None


@dataclass(frozen=True)
class Launch:
    """How the runner starts an action: within *timeout*, its output streamed to
    *output_file*, its kind's *options*, the session it resumes, the directory it runs in."""

    timeout: float
    output_file: Path | None = None
    options: dict[str, Any] | None = None
    resume: str | None = None
    cwd: Path | None = None


def action_request(fsm: FSMLoop, call: ActionCall, launch: Launch) -> ActionRequest:
    """The request that runs *call* (its action already filled in) on its kind, started as
    *launch* says: the one place the engine builds an ActionRequest."""
    kind = fsm.kind_for(call.state) if call.kind is None else call.kind
    return ActionRequest(
        action=call.action,
        timeout=launch.timeout,
        kind=kind.name,
        idle_timeout=idle_timeout(fsm, call.state, kind),
        output_file=launch.output_file,
        options=launch.options,
        resume_session=launch.resume,
        env=call.env or None,
        spec=kind,
        cwd=launch.cwd,
    )


class StateWork:
    """Runs actions through a runner and evaluates them, for one executor."""

    def __init__(
        self, fsm: FSMLoop, runner: ActionRunner, emit: Emit, config: ExecutorConfig | None = None
    ) -> None:
        config = ExecutorConfig() if config is None else config
        self.fsm = fsm
        self.cwd = config.cwd  # where its actions run; None: the runner's directory
        self.workdir = config.workdir  # the run's working tree: a sandboxed step may write it
        self.loops_dir = config.loops_dir  # the run's `.loops/`: a sandboxed step may only read it
        self.runner = runner
        self.emit = emit
        self.output_dir = config.output_dir
        self.output_key = config.output_key or fsm.name  # output files are `<key>.<state>.out`
        self._output_files: dict[str, Path] = {}  # by state: the same path at every step
        self.llm_client = config.llm_client
        # The judge's settings by agent, made once (not at every step), with a copy of the
        # loop's settings they were made from (a library caller may change those in place).
        self._judges: dict[str | None, tuple[LLMConfig, LLMConfig]] = {}

    def act(
        self,
        call: ActionCall,
        remaining_s: float | None,
        spend: Spend,
        book: SessionBook | None = None,
    ) -> ActionResult:
        """Run *call*, within *remaining_s*, its spend added to *spend*; the caller reports
        it with `completed`. An agent's action records its session id and agent in *book*
        (by `session_name`); a `session: continue` one resumes it from there when it is the
        same agent's (another agent's session starts afresh)."""
        name, state = call.name, call.state
        kind = self.fsm.kind_for(state) if call.kind is None else call.kind
        key = state.session_name(name)
        resume, fresh = None, None
        if state.session == SESSION_CONTINUE and book is not None and key in book.ids:
            whose = (book.agents or {}).get(key, CLAUDE_SESSIONS)
            if whose != kind.name:  # another agent cannot read it: a fresh one, the prompt
                fresh = f"session '{key}' is {whose}'s: {kind.name} starts a fresh one"
            elif kind.sessions:
                resume = book.ids[key]
        timeout = action_timeout(state, kind, remaining_s, self.fsm.default_timeout)
        output_file = None
        if self.runner.streams_output and self.output_dir is not None:
            output_file = self._output_files.get(name)
            if output_file is None:
                output_file = self.output_dir / output_file_name(self.output_key, name)
                self._output_files[name] = output_file
        start = events.ActionStart(
            state=name,
            action=short(call.shown or call.action),
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
        if call.env:  # what bash really runs: the script and the values it reads
            start["script"] = short(call.action)
            start["values"] = {key: short(value) for key, value in call.env.items()}
        confinement = self._confinement(state, kind)
        if confinement is not None:
            from little_loops.fsm.actions.sandbox import as_event

            start["sandbox"] = as_event(confinement.sandbox)
        self.emit(Event.ACTION_START, start)
        options = self._options(state, kind, call.fill) if kind.options_key else None
        if kind.takes_params:  # an MCP tool's arguments
            params = state.params or {}
            options = {"params": params if call.fill is None else filled(params, call.fill)}
        launch = Launch(timeout, output_file, options, resume, self.cwd)
        made = call if call.kind is kind else dataclasses.replace(call, kind=kind)
        request = action_request(self.fsm, made, launch)
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
        if kind.sessions and result.session_id and book is not None:
            book.ids[key] = result.session_id
            if book.agents is not None:
                book.agents[key] = kind.name
        return result

    def _judge_settings(self, agent: str | None) -> LLMConfig:
        """The loop's `llm:` settings for judging a state on *agent* (`LLMConfig.for_agent`)."""
        llm = self.fsm.llm
        made = self._judges.get(agent)
        if made is None or made[0] != llm:  # (a copy kept: settings changed in place count)
            made = self._judges[agent] = (dataclasses.replace(llm), llm.for_agent(agent))
        return made[1]

    def _confinement(self, state: StateConfig, kind: ActionKindSpec) -> Confinement | None:
        """Where *state*'s action on *kind* runs confined (None: it is not): its sandbox,
        the tree it may write, the `.loops/` it may only read, its agent's home paths."""
        chosen = self.fsm.sandbox_for(state, kind)
        if chosen is None:
            return None
        from little_loops.fsm.actions import sandbox
        from little_loops.fsm.actions.sandbox import Confinement

        work = Path(self.cwd or self.workdir or Path.cwd()).absolute()
        loops = None if self.loops_dir is None else self.loops_dir.absolute()
        return Confinement(
            chosen,
            work=work,
            loops=loops,
            home=kind.home,
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
        agent: str | None = None,
    ) -> EvaluationResult:
        """The verdict on state *name*'s action (an error when the action could not run);
        *record* keeps it before its `evaluate` event is written (a resume replays it).
        *agent*: the state's first agent (`fsm.kind_for(state)`) when the caller knows it."""
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
            first = agent if agent is not None else self.fsm.kind_for(state).name
            llm = self._judge_settings(first)
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
