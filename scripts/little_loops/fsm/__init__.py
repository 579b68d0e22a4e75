"""The FSM loop engine: a loop file travels load -> validate -> compile -> run -> persist.

The folder tree is the pipeline (docs/architecture.md has a line for every module):

    definition/   load YAML, check keys and the graph, the typed model, analysis, the writer
    paradigms/    goal / convergence / invariants / imperative specs compiled to an FSM
    evaluators/   an action's result -> a verdict: one spec per evaluator, one registry
    engine/       interpolate, step, route, count passes, enforce limits, simulate
    actions/      run a shell command or a Claude Code prompt as a request/result pair
    runs/         a run on disk: the .running layout, state and events, locks, processes, spend

Shared: errors (the error hierarchy), suggest (did-you-mean), timefmt (durations).
The seed paths (`schema`, `executor`, `evaluators`, `persistence`, `validation`,
`interpolation`, `compilers`) stay importable. The names below load lazily at run time, so
importing this package stays cheap; type checkers see them through the imports under
TYPE_CHECKING.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from little_loops.fsm.actions.protocol import ActionRunner
    from little_loops.fsm.actions.request import ActionRequest, ActionResult
    from little_loops.fsm.actions.runners import DefaultActionRunner
    from little_loops.fsm.definition.checks.analysis import (
        analyze,
    )
    from little_loops.fsm.definition.graph.verdicts import (
        state_verdicts,
    )
    from little_loops.fsm.definition.model.parameters import (
        ParameterSpec,
    )
    from little_loops.fsm.definition.model.typed import (
        DEFAULT_LLM_MODEL,
        EvaluateConfig,
        FSMLoop,
        LLMConfig,
        RouteConfig,
        StateConfig,
    )
    from little_loops.fsm.definition.writing.diagram import (
        render_dot,
        render_mermaid,
    )
    from little_loops.fsm.definition.writing.writer import (
        dump_fsm_yaml,
    )
    from little_loops.fsm.engine.executor import (
        FSMExecutor,
    )
    from little_loops.fsm.engine.records import (
        ExecutionResult,
    )
    from little_loops.fsm.engine.simulate import (
        simulate,
    )
    from little_loops.fsm.engine.simulation import (
        SimulationResult,
    )
    from little_loops.fsm.evaluators.dispatch import (
        default_evaluation,
        evaluate,
    )
    from little_loops.fsm.evaluators.llm_structured import (
        evaluate_llm_structured,
    )
    from little_loops.fsm.evaluators.spec import (
        EvaluationResult,
    )
    from little_loops.fsm.facts.errors import (
        CorruptStateError,
        InterpolationError,
        LoopDefinitionError,
        LoopError,
        LoopFileError,
        LoopRuntimeError,
        LoopValidationError,
        ScopeConflictError,
        ValidationError,
    )
    from little_loops.fsm.facts.outcomes import (
        OUTCOMES,
        STATUSES,
        TERMINATION_EXIT_CODE,
        TERMINATION_STATUS,
    )
    from little_loops.fsm.paradigms.registry import (
        compile_paradigm,
    )
    from little_loops.fsm.processes.pids import (
        pid_alive,
    )
    from little_loops.fsm.runs.locks import (
        LockHandle,
        acquire_scope,
    )
    from little_loops.fsm.runs.persistent import (
        PersistentExecutor,
    )
    from little_loops.fsm.runs.state import (
        LoopState,
    )
    from little_loops.fsm.runs.store import (
        RunInfo,
        StatePersistence,
        get_loop_history,
        list_running_loops,
    )
    from little_loops.fsm.validate.loopfile import (
        FileReport,
        check_file,
        load_and_validate,
        validate_definition,
        validate_fsm,
    )
    from little_loops.fsm.values.interpolation import (
        InterpolationContext,
        interpolate,
        interpolate_dict,
    )

# The module that serves each public name (a test holds it equal to the imports above).
_EXPORTS: dict[str, str] = {
    "LoopError": "facts.errors",
    "LoopDefinitionError": "facts.errors",
    "LoopRuntimeError": "facts.errors",
    "InterpolationError": "facts.errors",
    "CorruptStateError": "facts.errors",
    "ScopeConflictError": "facts.errors",
    "LoopFileError": "facts.errors",
    "LoopValidationError": "facts.errors",
    "ValidationError": "facts.errors",
    "FileReport": "validate.loopfile",
    "check_file": "validate.loopfile",
    "load_and_validate": "validate.loopfile",
    "validate_definition": "validate.loopfile",
    "validate_fsm": "validate.loopfile",
    "analyze": "definition.checks.analysis",
    "state_verdicts": "definition.graph.verdicts",
    "render_mermaid": "definition.writing.diagram",
    "render_dot": "definition.writing.diagram",
    "simulate": "engine.simulate",
    "SimulationResult": "engine.simulation",
    "DEFAULT_LLM_MODEL": "definition.model.typed",
    "FSMLoop": "definition.model.typed",
    "StateConfig": "definition.model.typed",
    "EvaluateConfig": "definition.model.typed",
    "RouteConfig": "definition.model.typed",
    "LLMConfig": "definition.model.typed",
    "ParameterSpec": "definition.model.parameters",
    "compile_paradigm": "paradigms.registry",
    "dump_fsm_yaml": "definition.writing.writer",
    "InterpolationContext": "values.interpolation",
    "interpolate": "values.interpolation",
    "interpolate_dict": "values.interpolation",
    "OUTCOMES": "facts.outcomes",
    "STATUSES": "facts.outcomes",
    "TERMINATION_STATUS": "facts.outcomes",
    "TERMINATION_EXIT_CODE": "facts.outcomes",
    "LoopState": "runs.state",
    "StatePersistence": "runs.store",
    "RunInfo": "runs.store",
    "list_running_loops": "runs.store",
    "get_loop_history": "runs.store",
    "acquire_scope": "runs.locks",
    "LockHandle": "runs.locks",
    "pid_alive": "processes.pids",
    "PersistentExecutor": "runs.persistent",
    "FSMExecutor": "engine.executor",
    "ExecutionResult": "engine.records",
    "ActionResult": "actions.request",
    "ActionRunner": "actions.protocol",
    "ActionRequest": "actions.request",
    "DefaultActionRunner": "actions.runners",
    "EvaluationResult": "evaluators.spec",
    "evaluate": "evaluators.dispatch",
    "default_evaluation": "evaluators.dispatch",
    "evaluate_llm_structured": "evaluators.llm_structured",
}

__all__ = [
    "ActionRequest",
    "ActionResult",
    "ActionRunner",
    "CorruptStateError",
    "DEFAULT_LLM_MODEL",
    "DefaultActionRunner",
    "EvaluateConfig",
    "EvaluationResult",
    "ExecutionResult",
    "FSMExecutor",
    "FSMLoop",
    "FileReport",
    "InterpolationContext",
    "InterpolationError",
    "LLMConfig",
    "LockHandle",
    "LoopDefinitionError",
    "LoopError",
    "LoopFileError",
    "LoopRuntimeError",
    "LoopState",
    "LoopValidationError",
    "OUTCOMES",
    "ParameterSpec",
    "PersistentExecutor",
    "RouteConfig",
    "RunInfo",
    "STATUSES",
    "ScopeConflictError",
    "SimulationResult",
    "StateConfig",
    "StatePersistence",
    "TERMINATION_EXIT_CODE",
    "TERMINATION_STATUS",
    "ValidationError",
    "acquire_scope",
    "analyze",
    "check_file",
    "compile_paradigm",
    "default_evaluation",
    "dump_fsm_yaml",
    "evaluate",
    "evaluate_llm_structured",
    "get_loop_history",
    "interpolate",
    "interpolate_dict",
    "list_running_loops",
    "load_and_validate",
    "pid_alive",
    "render_dot",
    "render_mermaid",
    "simulate",
    "state_verdicts",
    "validate_definition",
    "validate_fsm",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'little_loops.fsm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"little_loops.fsm.{module}"), name)


def __dir__() -> list[str]:
    return list(__all__)
