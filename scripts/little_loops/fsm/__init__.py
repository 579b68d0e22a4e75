"""The FSM loop engine, one module per step of the pipeline a loop file travels:

    load       loader            read YAML (the only place that does) with the line of every key
    validate   validation        check a file; collects problems from:
                 definition_checks   keys, types and required fields of the raw definition
                 graph_checks        targets, terminal states, ways out, reachability
                 analysis            unrouted verdicts, reads before set, output in bash
                 verdicts            the verdicts each state's evaluator can give
    compile    compilers         goal / convergence / invariants / imperative specs -> FSM
                 paradigm_spec       reading and type-checking a paradigm spec's fields
                 writer              the FSM back to readable YAML (`ll-loop compile`)
    model      schema            FSMLoop, StateConfig, EvaluateConfig, RouteConfig, LLMConfig
    interpolate interpolation    ${namespace.path} references, resolved at run time
    run        runners           an action (bash or claude) as a request/result pair
                 claude_output       Claude Code's JSON report: answer, cost and tokens
    evaluate   evaluators        an action's result -> a verdict (Tier 1, and the registry)
                 llm_judge           the llm_structured evaluator (the one LLM call)
                 jsonpath            jq-style paths for output_json
    route      routing           a verdict -> the next state, in the documented order
    execute    executor          enter states, run, evaluate, route, enforce limits, emit events
                 records             ExecutionResult, ExecutorSnapshot, event text limits
                 spend / pricing     dollars and tokens spent, the max_cost_usd budget
    persist    persistence       state and event files under .loops/.running/
                 persistent_executor  a run that saves itself and can be resumed
                 loopstate           the state file's model
                 outcomes            status and exit code of each way a run ends
                 locks / pids        scope locks between concurrent runs, process checks
    inspect    graph             the state machine as Mermaid or Graphviz (`ll-loop graph`)
               simulate          a walk with scripted verdicts, running nothing

Shared: errors (the error hierarchy), suggest (did-you-mean), timefmt (durations).
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
