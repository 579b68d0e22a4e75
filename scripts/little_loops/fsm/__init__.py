"""The FSM loop engine, one module per step of the pipeline a loop file travels:

    loader         read YAML (the only place that does) with line marks
    validation     check the raw definition and the model; errors name loop > state > key
    analysis       what would go wrong at run time: unrouted verdicts, reads before set, injection
    compilers      turn goal / convergence / invariants / imperative specs into an FSM
    schema         the typed model: FSMLoop, StateConfig, EvaluateConfig, RouteConfig, LLMConfig
    interpolation  resolve ${namespace.path} references at run time
    runners        run an action (bash or claude) as a request/result pair
    evaluators     turn an action result into a verdict
    executor       enter states, run, evaluate, route, enforce limits, emit events
    persistence    state and event files under .loops/.running/, resume, stop, scope locks
    graph          draw the state machine as Mermaid or Graphviz
    simulate       walk the state machine with scripted verdicts, running nothing

Public names are re-exported here lazily, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "LoopError": "errors",
    "LoopDefinitionError": "errors",
    "LoopRuntimeError": "errors",
    "InterpolationError": "errors",
    "CorruptStateError": "errors",
    "ScopeConflictError": "errors",
    "LoopFileError": "errors",
    "LoopValidationError": "errors",
    "ValidationError": "errors",
    "FileReport": "validation",
    "check_file": "validation",
    "load_and_validate": "validation",
    "validate_definition": "validation",
    "validate_fsm": "validation",
    "analyze": "analysis",
    "state_verdicts": "verdicts",
    "render_mermaid": "graph",
    "render_dot": "graph",
    "simulate": "simulate",
    "SimulationResult": "simulate",
    "DEFAULT_LLM_MODEL": "schema",
    "FSMLoop": "schema",
    "StateConfig": "schema",
    "EvaluateConfig": "schema",
    "RouteConfig": "schema",
    "LLMConfig": "schema",
    "compile_paradigm": "compilers",
    "dump_fsm_yaml": "writer",
    "InterpolationContext": "interpolation",
    "interpolate": "interpolation",
    "interpolate_dict": "interpolation",
    "OUTCOMES": "outcomes",
    "STATUSES": "outcomes",
    "TERMINATION_STATUS": "outcomes",
    "TERMINATION_EXIT_CODE": "outcomes",
    "LoopState": "loopstate",
    "StatePersistence": "persistence",
    "RunInfo": "persistence",
    "list_running_loops": "persistence",
    "get_loop_history": "persistence",
    "acquire_scope": "locks",
    "LockHandle": "locks",
    "pid_alive": "pids",
    "PersistentExecutor": "persistent_executor",
    "FSMExecutor": "executor",
    "ExecutionResult": "executor",
    "ActionResult": "runners",
    "ActionRunner": "runners",
    "ActionRequest": "runners",
    "DefaultActionRunner": "runners",
    "EvaluationResult": "evaluators",
    "evaluate": "evaluators",
    "default_evaluation": "evaluators",
    "evaluate_llm_structured": "llm_judge",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'little_loops.fsm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"little_loops.fsm.{module}"), name)


def __dir__() -> list[str]:
    return sorted(_EXPORTS)
