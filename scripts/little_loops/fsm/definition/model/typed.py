"""The typed loop model: dataclasses built from a validated definition, and back to dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.registry import (
    BY_OPTIONS_KEY,
    KINDS,
    Entry,
    entry_of,
    is_agent_action,
    kind_of,
)
from little_loops.fsm.actions.sandbox_key import Sandbox
from little_loops.fsm.actions.sandbox_key import chosen as chosen_sandbox
from little_loops.fsm.actions.sandbox_key import read as read_sandbox
from little_loops.fsm.actions.spec import ActionKindSpec, merged
from little_loops.fsm.definition.model.agents import agent_kinds, filled_names, kinds_named
from little_loops.fsm.definition.model.blocks import (
    BLOCKS_FIELD,
    LOOP_BLOCKS,
    MOVED_FROM_TYPED,
    STATE_BLOCKS,
    block_class,
    field_name,
    loads_moved,
    option_blocks,
    plain_keys,
    yaml_key,
)
from little_loops.fsm.definition.model.blocks import DEFAULT_KEEP_RUNS as DEFAULT_KEEP_RUNS
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_NOTIFY_RETRIES as DEFAULT_NOTIFY_RETRIES,
)
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_NOTIFY_TIMEOUT as DEFAULT_NOTIFY_TIMEOUT,
)
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_RATE_LIMIT_LADDER as DEFAULT_RATE_LIMIT_LADDER,
)
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_RATE_LIMIT_MAX_WAIT as DEFAULT_RATE_LIMIT_MAX_WAIT,
)
from little_loops.fsm.definition.model.blocks import ROUTE_DEFAULT_KEY as ROUTE_DEFAULT_KEY
from little_loops.fsm.definition.model.blocks import ROUTE_ERROR_KEY as ROUTE_ERROR_KEY
from little_loops.fsm.definition.model.blocks import ArchiveConfig as ArchiveConfig
from little_loops.fsm.definition.model.blocks import RateLimitConfig as RateLimitConfig
from little_loops.fsm.definition.model.blocks import RouteConfig as RouteConfig
from little_loops.fsm.definition.model.blocks import model_keys as model_keys
from little_loops.fsm.definition.model.core_keys import ACTION_TYPES as ACTION_TYPES
from little_loops.fsm.definition.model.core_keys import APPROVAL as APPROVAL
from little_loops.fsm.definition.model.core_keys import OUTCOME_FAILURE as OUTCOME_FAILURE
from little_loops.fsm.definition.model.core_keys import OUTCOME_SUCCESS as OUTCOME_SUCCESS
from little_loops.fsm.definition.model.core_keys import SESSION_CONTINUE as SESSION_CONTINUE
from little_loops.fsm.definition.model.core_keys import SESSION_FRESH as SESSION_FRESH
from little_loops.fsm.definition.model.core_keys import SESSION_MODES as SESSION_MODES
from little_loops.fsm.definition.model.core_keys import TERMINAL_OUTCOMES as TERMINAL_OUTCOMES
from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.definition.model.key_row import STATE as STATE_PLACE
from little_loops.fsm.definition.model.key_rows import ENV_ROWS, ROWS, RUN_ROWS, SHOWN_ROWS
from little_loops.fsm.definition.model.lean_methods import add_lean_methods
from little_loops.fsm.definition.model.loop_keys import (
    DEFAULT_MAX_ITERATIONS as DEFAULT_MAX_ITERATIONS,
)
from little_loops.fsm.definition.model.metadata import (
    DEFAULT_INPUT_KEY,
    FLAGS,
    METADATA_LOOP_KEYS,
    PUBLIC,
    fields_of,
    kept,
)
from little_loops.fsm.definition.model.parameters import ParameterSpec, parse_parameters
from little_loops.fsm.definition.model.run_keys import HANDOFF_PAUSE
from little_loops.fsm.definition.model.spellings import ROUTE, STATE, in_our_spelling
from little_loops.fsm.evaluators.config import (
    DEFAULT_EVALUATOR as DEFAULT_EVALUATOR,
)
from little_loops.fsm.evaluators.config import (
    DEFAULT_LLM_MODEL as DEFAULT_LLM_MODEL,
)
from little_loops.fsm.evaluators.config import (
    DEFAULT_LLM_MODEL_TOKEN as DEFAULT_LLM_MODEL_TOKEN,
)
from little_loops.fsm.evaluators.config import (
    DIRECTIONS as DIRECTIONS,
)
from little_loops.fsm.evaluators.config import (
    JUDGE_BACKENDS as JUDGE_BACKENDS,
)
from little_loops.fsm.evaluators.config import (
    OPERATORS as OPERATORS,
)
from little_loops.fsm.evaluators.config import EvaluateConfig as EvaluateConfig
from little_loops.fsm.evaluators.config import LLMConfig as LLMConfig
from little_loops.fsm.values.fields import non_default_items as _non_default_items

if TYPE_CHECKING:
    from little_loops.fsm.actions.custom import AgentDefinition
    from little_loops.fsm.definition.model.circuit import CircuitConfig
    from little_loops.fsm.definition.model.fanout import MapConfig, ParallelConfig
    from little_loops.fsm.definition.model.learning import LearningConfig
    from little_loops.fsm.definition.model.policy_blocks import NotifyConfig as NotifyConfig
    from little_loops.fsm.definition.model.policy_blocks import RetryConfig as RetryConfig
    from little_loops.fsm.definition.model.policy_blocks import StallConfig as StallConfig
    from little_loops.fsm.definition.model.pr_block import PullRequestConfig
    from little_loops.fsm.definition.model.state_guards import PruningProfileConfig, ThrottleConfig

# A route target that means "run this state again".
CURRENT_STATE_TOKEN = "$current"

# The loop's `commit:`: each state's action commits as a `commit: true` state's does.
COMMIT_EACH_PASS = "each_pass"


@dataclass(eq=False, repr=False)  # the two: lean_methods.py, below
class StateConfig:
    """One state: an optional action, how to evaluate it, and where to go next."""

    action: str | None = None
    action_type: str | None = None  # one of ACTION_TYPES
    capture: str | None = None
    timeout: float | None = None
    idle_timeout: float | None = None
    evaluate: EvaluateConfig | None = None
    route: RouteConfig | None = None
    on_success: str | None = None
    on_failure: str | None = None
    on_error: str | None = None
    next: str | None = None
    terminal: bool = False
    on_maintain: str | None = None
    stall: StallConfig | None = None
    on_timeout: str | None = None  # an approval state's route when its timeout passes
    # Each action kind's options block by its key, laid over the loop's (kinds with none:
    # absent; `{}`: given empty).
    options: dict[str, dict[str, Any]] = field(default_factory=dict, metadata=BLOCKS_FIELD)
    agent: str | list[str] | None = None  # its agent (a fallback list): the loop's when None
    session: str = SESSION_FRESH  # or SESSION_CONTINUE: resume the previous session of session_key
    session_key: str | None = None  # whose session to record and resume (default: the state)
    retry: RetryConfig | None = None
    on_retry_exhausted: str | None = None
    # Its own rate-limit waits over the loop's (definition/model/ratelimit_routing.py), and after:
    max_rate_limit_retries: int | None = None
    rate_limit_backoff_base_seconds: float | None = None
    rate_limit_max_wait_seconds: float | None = None
    rate_limit_long_wait_ladder: list[float] | None = None
    on_rate_limit_exhausted: str | None = None
    pruning_profile: PruningProfileConfig | None = None  # definition/model/state_guards.py
    throttle: ThrottleConfig | None = None
    on_throttle_hard: str | None = None
    loop: str | None = None  # a sub-loop: run this loop (a name in .loops/ or a path)
    with_: dict[str, Any] | None = None  # `with:`, the sub-loop's parameter values
    outcome: str | None = None  # a terminal state's: OUTCOME_SUCCESS or OUTCOME_FAILURE
    commit: bool | None = None  # commit the worktree after the action (None: as the loop says)
    rollback: bool = False  # reset the worktree to its last commit before the action
    # The verdicts partial/blocked's routes; caps on re-entry (definition/model/route_keys.py).
    on_partial: str | None = None
    on_blocked: str | None = None
    on_cannot_judge: str | None = None  # little-loops' judge's verdict (--compat only gives it)
    max_retries: int | None = None
    retryable_exit_codes: list[int] | None = None
    context_passthrough: bool = False  # a sub-loop's: the child shares context and captures
    worktree: str | None = None  # a sub-loop's: its child runs in a worktree of this branch
    session_mode: str | None = None  # a prompt's: SESSION_MODE_CONTINUE (None: the loop's)
    tamper_guard: str | None = None  # one of TAMPER_POLICIES (None: the loop's)
    prepatch_check: str | None = None  # one of PREPATCH_POLICIES (None: the loop's)
    params: dict[str, Any] | None = None  # an mcp_tool action's arguments
    sandbox: Any = None  # `sandbox:` as written (actions/sandbox.py reads it); None: the loop's
    description: str | None = None  # for people (graph --info, the report)
    type: str | None = None  # LEARNING_TYPE; with `learning:` a learning state (learning.py)
    learning: LearningConfig | None = None
    parallel: ParallelConfig | None = None  # a fan-out state (definition/model/fanout.py)
    map: MapConfig | None = None
    pr: PullRequestConfig | None = None  # a pull-request state (definition/model/pr_keys.py)
    # The keys whose rows name no field above, by key (key_row.Key: `value` reads one).
    more: dict[str, Any] = field(
        default_factory=dict, metadata={"rows": lambda: _unfielded(STATE_PLACE)}
    )
    # Routed as little-loops routes (`--compat`): a table's `_` takes an `error` verdict too.
    theirs: bool = field(default=False, repr=False, compare=False, metadata={"derived": True})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StateConfig:
        data = in_our_spelling(STATE, data)  # on_yes is on_success ... (spellings.py)
        known = plain_keys(cls)
        kwargs = {field_name(k): v for k, v in data.items() if k in known}
        kwargs["options"] = option_blocks(data)
        blocks = () if _STATE_BLOCKS.keys().isdisjoint(data) else _STATE_BLOCKS.items()
        for key, block in blocks:  # (most states have no block: passed over at once)
            if isinstance(data.get(key), dict):  # a block's class is loaded when a file has it
                raw = data[key] if key != "route" else in_our_spelling(ROUTE, data[key])
                kwargs[key] = block_class(block).from_dict(raw)
        kwargs["more"] = _more_of(data, STATE_PLACE)
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in _non_default_items(self).items():
            if name == "options":
                out.update((key, dict(block)) for key, block in self.options.items())
            elif name == "more":
                out.update((key, _plain(item)) for key, item in value.items())
            else:
                out[yaml_key(name)] = value
        for key in _STATE_BLOCKS:
            block = getattr(self, key)
            if block is not None:
                out[key] = block.to_dict()
        return out

    def env_of(self, agent: bool) -> dict[str, str]:
        """What the keys of this state whose rows add to an action's environment add (those
        for agents only when *agent*), in row order."""
        out: dict[str, str] = {}
        for row in ENV_ROWS:
            value = self.value(row)
            if value is not None and row.env is not None and (agent or not row.agents_only):
                out.update(row.env(value))
        return out

    def shown(self) -> list[tuple[str, str]]:
        """How `--dry-run` shows the keys of this state whose rows say how, in row order."""
        return [
            (row.name, row.shown(self.value(row)))
            for row in SHOWN_ROWS
            if row.shown is not None and self.value(row) is not None
        ]

    def value(self, row: Key) -> Any:
        """The value the state's file gave *row*'s key, as the model holds it (a block read
        into its dataclass); its row's default when the file left it out."""
        found = getattr(self, row.field_name) if row.field_name in _STATE_FIELDS else None
        found = self.more.get(row.name) if found is None else found
        return row.default_at(STATE_PLACE) if found is None else found

    def options_of(self, kind: ActionKindSpec) -> dict[str, Any] | None:
        """The state's own options block of *kind* (its `options_key`); None: it has none."""
        return self.options.get(kind.options_key) if kind.options_key else None

    @property
    def claude(self) -> dict[str, Any] | None:
        """The state's `claude:` block, as scripts written before `options` read it."""
        return self.options.get("claude")

    @claude.setter
    def claude(self, value: dict[str, Any] | None) -> None:
        if value is None:
            self.options.pop("claude", None)
        else:
            self.options["claude"] = value

    def is_approval(self) -> bool:
        """True when the state asks a person (`action_type: approval`) instead of acting."""
        return self.action_type == APPROVAL

    def action_kind(self) -> ActionKindSpec:
        """The kind of the state's action (actions/registry.py decides, from `action_type:`
        and the action's text)."""
        return kind_of(self.action_type, self.action)

    def kind_entry(self) -> Entry:
        """What the registry knows of `action_kind()` without importing its module."""
        return entry_of(self.action_type, self.action)

    def is_prompt(self) -> bool:
        """True when the action goes to a coding agent (a prompt or slash command: the
        loop's `agents_for` says which), not a command."""
        return is_agent_action(self.action_type, self.action)

    def session_name(self, state_name: str) -> str:
        """Whose Claude session this state records and resumes: session_key, else its name."""
        return self.session_key or state_name

    def effective_evaluate(self) -> EvaluateConfig:
        """The evaluator this state uses: its `evaluate:`, else its action kind's default
        (`llm_structured` for a prompt or slash command), else `exit_code`."""
        if self.evaluate is not None:
            return self.evaluate
        if self.action:
            return EvaluateConfig(type=self.kind_entry().default_evaluator)  # same for agents
        return EvaluateConfig(type=DEFAULT_EVALUATOR)


@dataclass(eq=False, repr=False)  # the two: lean_methods.py, below
class FSMLoop:
    """A whole loop: named states, where to start, and loop-level limits and settings."""

    name: str
    initial: str
    states: dict[str, StateConfig]
    paradigm: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, ParameterSpec] = field(default_factory=dict)
    scope: list[str] = field(default_factory=list)
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    backoff: float | None = None
    timeout: float | None = None
    idle_timeout: float | None = None
    max_cost_usd: float | None = None
    maintain: bool = False
    worktree: bool = False  # every run in a new git worktree (`ll-loop run --worktree`)
    llm: LLMConfig = field(default_factory=LLMConfig)
    archive: ArchiveConfig = field(default_factory=ArchiveConfig)
    stall: StallConfig | None = None
    # Each action kind's options block by its key, for every state of that kind; each kind
    # with one has it (`{}`: none given).
    options: dict[str, dict[str, Any]] = field(default_factory=dict, metadata=BLOCKS_FIELD)
    agent: str | list[str] | None = None  # the agent (fallback list) of its prompt states
    agents: dict[str, AgentDefinition] = field(default_factory=dict)  # its custom agents
    # The project's custom agents (`.loops/agents.yaml`), set when the file is loaded; the
    # loop's own `agents:` entry of the same name wins.
    project_agents: dict[str, AgentDefinition] = field(
        default_factory=dict, repr=False, compare=False, metadata={"derived": True}
    )
    notify: NotifyConfig | None = None
    retry: RetryConfig | None = None  # the default of states without their own
    rate_limit: RateLimitConfig = field(default_factory=RateLimitConfig)
    circuit: CircuitConfig | None = None  # little-loops' repeated-failure breaker
    artifact_versioning: bool = False  # a declaration only (docs/loop-files.md says so)
    commit: str | bool = False  # COMMIT_EACH_PASS: every state's action commits (a worktree run)
    sandbox: Any = None  # `sandbox:` of every step without its own (actions/sandbox.py)
    # A cap on steps (None: none); where a cap's run goes, once (definition/model/route_keys.py).
    max_steps: int | None = None
    on_max_steps: str | None = None
    on_max_iterations: str | None = None
    on_handoff: str = HANDOFF_PAUSE  # one of HANDOFF_MODES: at a prompt's CONTEXT_HANDOFF
    singleton: bool = False  # one run of this loop at a time, whatever its scope
    default_timeout: float | None = None  # a state's action timeout when it sets none
    session_mode: str | None = None  # every prompt state's default (definition/model/run_keys.py)
    tamper_guard: str | None = None  # every state's default, as prepatch_check's
    prepatch_check: str | None = None
    # Metadata and inputs (model/metadata.py), then the `*_ok` flags given (one key each).
    description: str | None = None
    category: str | None = None
    labels: list[str] = field(default_factory=list)
    visibility: str = PUBLIC
    commands: list[dict[str, str]] = field(default_factory=list)
    input_key: str = DEFAULT_INPUT_KEY  # where a run's free-form VALUE goes (no parameters)
    required_inputs: list[str] = field(default_factory=list)  # context keys not to be empty
    lint_ok: dict[str, bool] = field(default_factory=dict, metadata={"keys": FLAGS})
    # The keys whose rows name no field above, by key (key_row.Key: `value` reads one).
    more: dict[str, Any] = field(default_factory=dict, metadata={"rows": lambda: _unfielded(LOOP)})
    # The loaded child loop of each sub-loop state (`loop:`), by state name; set when the
    # file is validated (definition/checks/subloop_checks.py), never written back to a file; and
    # `source`, the file it was read from (where a `loop: ${...}` finds its child).
    children: dict[str, FSMLoop] = field(
        default_factory=dict, repr=False, compare=False, metadata={"derived": True}
    )
    source: str | None = field(default=None, repr=False, compare=False, metadata={"derived": True})
    # Read with little-loops' meaning where the two differ (`--compat`; validate/meanings.py).
    theirs: bool = field(default=False, repr=False, compare=False, metadata={"derived": True})

    def __post_init__(self) -> None:
        for key in BY_OPTIONS_KEY:
            self.options.setdefault(key, {})

    def read_as_theirs(self, theirs: bool) -> None:
        """Read the loop (and how each state routes) with little-loops' meaning or ours."""
        self.theirs = theirs
        for state in self.states.values():
            state.theirs = theirs

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FSMLoop:
        known = plain_keys(cls) - METADATA_LOOP_KEYS.keys()  # those: fields_of, below
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["options"] = option_blocks(data)
        kwargs["states"] = {
            str(name): StateConfig.from_dict(state if isinstance(state, dict) else {})
            for name, state in (data.get("states") or {}).items()
        }
        if isinstance(data.get("llm"), dict):
            kwargs["llm"] = LLMConfig.from_dict(data["llm"])
        if isinstance(data.get("archive"), dict):
            kwargs["archive"] = ArchiveConfig.from_dict(data["archive"])
        kwargs["notify"] = None  # each block's class is loaded when the file has the block
        for key in ("stall", "notify", "retry"):
            if isinstance(data.get(key), dict):
                kwargs[key] = block_class(LOOP_BLOCKS[key]).from_dict(data[key])
        rate_limit = data.get("rate_limit")  # null (validate's "left out") reads as no block
        kwargs["rate_limit"] = RateLimitConfig.from_dict(
            rate_limit if isinstance(rate_limit, dict) else {}
        )
        circuit = data.get("circuit")
        is_block = isinstance(circuit, Mapping)
        kwargs["circuit"] = block_class(LOOP_BLOCKS["circuit"]).read(circuit) if is_block else None
        if kwargs.get("context") is None:
            kwargs.pop("context", None)
        kwargs["parameters"] = parse_parameters(data.get("parameters"), data.get("context"))
        agents = data.get("agents")
        if agents:  # a loop without custom agents loads none of their machinery
            from little_loops.fsm.actions.custom import AgentDefinition
        kwargs["agents"] = {
            str(name): AgentDefinition.from_dict(entry, "loop")
            for name, entry in (agents.items() if isinstance(agents, dict) else ())
        }
        if kwargs.get("scope") is None:
            kwargs.pop("scope", None)
        kwargs.update(fields_of(data))  # metadata, inputs and flags; null ones left out
        kwargs["more"] = _more_of(data, LOOP)
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """The loop as plain data, keys in reading order: name, initial, context, states,
        then settings; fields left at their defaults are dropped."""
        rest = _non_default_items(self)
        out: dict[str, Any] = {"name": self.name}
        if self.paradigm is not None:
            out["paradigm"] = self.paradigm
        out["initial"] = self.initial
        if self.context:
            out["context"] = self.context
        if self.parameters:
            out["parameters"] = {name: p.to_dict() for name, p in self.parameters.items()}
        out["states"] = {name: state.to_dict() for name, state in self.states.items()}
        out.update((key, rest[key]) for key in _WRITTEN_SETTINGS if key in rest)
        out.update((row.name, rest[row.name]) for row in _RUN_LOOP_ROWS if row.name in rest)
        for key, block in (("llm", self.llm), ("archive", self.archive)):
            if block.to_dict():
                out[key] = block.to_dict()
        if self.stall is not None:
            out["stall"] = self.stall.to_dict()
        out.update((key, dict(block)) for key, block in self.options.items() if block)
        if self.agents:
            out["agents"] = {name: agent.to_dict() for name, agent in self.agents.items()}
        if self.notify is not None:
            out["notify"] = self.notify.to_dict()
        if self.retry is not None:
            out["retry"] = self.retry.to_dict()
        if self.circuit is not None:
            out["circuit"] = self.circuit.to_dict()
        if self.rate_limit.to_dict():
            out["rate_limit"] = self.rate_limit.to_dict()
        out.update(kept(rest), **self.lint_ok)
        out.update((key, _plain(item)) for key, item in self.more.items())
        return out

    def value(self, row: Key) -> Any:
        """The value the file gave *row*'s key at the loop, as the model holds it; its row's
        default when the file left it out."""
        found = getattr(self, row.field_name) if row.field_name in _LOOP_FIELDS else None
        found = self.more.get(row.name) if found is None else found
        return row.default_at(LOOP) if found is None else found

    def options_of(self, kind: ActionKindSpec) -> dict[str, Any]:
        """The loop's options block of *kind* (its `options_key`; `{}`: none)."""
        return self.options.get(kind.options_key, {}) if kind.options_key else {}

    def options_for(self, state: StateConfig, kind: ActionKindSpec | None = None) -> dict[str, Any]:
        """The options *state*'s action runs with on *kind* (default: `kind_for(state)`): its
        own block laid over the loop's, key by key (null unsets); `{}` for a kind without."""
        kind = self.kind_for(state) if kind is None else kind
        return merged(self.options_of(kind), state.options_of(kind))

    @property
    def custom_kinds(self) -> dict[str, ActionKindSpec]:
        """The kinds of the custom agents this loop can name: the project's, then its own."""
        agents = {**self.project_agents, **self.agents}
        if not agents:
            return {}
        from little_loops.fsm.actions.custom import custom_kind

        return {name: custom_kind(name, agent) for name, agent in agents.items()}

    def agents_for(self, state: StateConfig) -> list[ActionKindSpec]:
        """The agents *state*'s prompt runs on, in fallback order: its `agent:`, else the
        loop's, else Claude Code; [] for a state that is no prompt. References are filled in
        from the context (parameters' defaults under it); LoopDefinitionError for a name
        no agent has."""
        if not state.action or not state.is_prompt():
            return []
        value = state.agent if state.agent is not None else self.agent
        defaults = {name: p.run_default() for name, p in self.parameters.items()}
        names = filled_names(value, {**defaults, **self.context})
        kinds = agent_kinds(self.custom_kinds) if names else {}
        where = f"loop '{self.name}' > agent"
        if state.agent is not None:
            named = next((key for key, each in self.states.items() if each is state), "?")
            where = f"loop '{self.name}' > states > {named} > agent"
        return kinds_named(names, kinds, where, value)

    def kind_for(self, state: StateConfig) -> ActionKindSpec:
        """The kind *state*'s action runs as: its first agent, or its command's kind."""
        agents = self.agents_for(state)
        return agents[0] if agents else state.action_kind()

    @property
    def claude(self) -> dict[str, Any]:
        """The loop's `claude:` block, as scripts written before `options` read it."""
        return self.options.setdefault("claude", {})

    @claude.setter
    def claude(self, value: dict[str, Any]) -> None:
        self.options["claude"] = value

    def sandbox_for(self, state: StateConfig, kind: ActionKindSpec | None = None) -> Sandbox | None:
        """The sandbox *state*'s action runs in on *kind* (default: `kind_for(state)`): its
        own `sandbox:`, else its custom agent's, else the loop's; None: none (or no action)."""
        if not state.action or state.is_approval():
            return None
        kind = self.kind_for(state) if kind is None else kind
        agents = {**self.project_agents, **self.agents}
        agent = agents.get(kind.name) if kind.name not in KINDS else None
        return read_sandbox(
            chosen_sandbox(state.sandbox, None if agent is None else agent.sandbox, self.sandbox)
        )

    def retry_of(self, state: StateConfig) -> RetryConfig | None:
        """The retry policy of *state*: its own `retry:`, else the loop's (None: no retries)."""
        return state.retry if state.retry is not None else self.retry

    def commits_after(self, state: StateConfig) -> bool:
        """Whether *state*'s action is followed by a commit: its `commit:`, else the loop's."""
        return state.commit if state.commit is not None else self.commit == COMMIT_EACH_PASS

    def terminal_states(self) -> list[str]:
        return [name for name, state in self.states.items() if state.terminal]

    def effective_scope(self) -> list[str]:
        """The paths this loop claims; no `scope:` means the whole project."""
        return list(self.scope) if self.scope else ["."]


add_lean_methods(StateConfig)
add_lean_methods(FSMLoop)
# The settings FSMLoop.to_dict writes as they are, after the states (then the rows').
_WRITTEN_SETTINGS = (
    "scope",
    "max_iterations",
    "backoff",
    "timeout",
    "idle_timeout",
    "max_cost_usd",
    "maintain",
    "worktree",
    "commit",
    "agent",
    "max_steps",
    "on_max_steps",
    "on_max_iterations",
    "artifact_versioning",
)
_RUN_LOOP_ROWS = tuple(row for row in RUN_ROWS if LOOP in row.where)
_STATE_FIELDS = frozenset(f.name for f in fields(StateConfig))
_LOOP_FIELDS = frozenset(f.name for f in fields(FSMLoop))
# A state's settings blocks: each model's own, then those a key's row names ("MODULE:CLASS").
_STATE_BLOCKS: dict[str, str] = {
    **STATE_BLOCKS,
    **{
        row.name: row.block
        for row in ROWS
        if STATE_PLACE in row.where and row.block is not None and row.name in _STATE_FIELDS
    },
}


# The rows at each place that name no field of its model (their values are kept in `more`),
# worked out once (every state of every loop read asks).
_UNFIELDED: dict[str, tuple[Key, ...]] = {
    place: tuple(row for row in ROWS if place in row.where and row.field_name not in named)
    for place, named in ((LOOP, _LOOP_FIELDS), (STATE_PLACE, _STATE_FIELDS))
}


def _unfielded(place: str) -> list[str]:
    """The keys at *place* whose rows name no field of its model (kept in its `more`)."""
    return [row.name for row in _UNFIELDED[place]]


def _more_of(data: dict[str, Any], place: str) -> dict[str, Any]:
    """The values *data* gives the keys at *place* whose rows name no model field (a
    mapping read into its row's block)."""
    out: dict[str, Any] = {}
    for row in _UNFIELDED[place]:
        if data.get(row.name) is not None:
            value = data[row.name]
            out[row.name] = (
                block_class(row.block).from_dict(value)
                if row.block is not None and isinstance(value, dict)
                else value
            )
    return out


def _plain(value: Any) -> Any:
    """A value of `more` as plain data (a block written back as its mapping)."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


if not TYPE_CHECKING:  # the blocks it named before they moved (blocks.MOVED_FROM_TYPED)
    __getattr__ = loads_moved(__name__, MOVED_FROM_TYPED)
