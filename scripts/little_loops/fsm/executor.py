"""The seed path of the executor: it lives in `little_loops.fsm.engine`, its runner in `actions`."""

from little_loops.fsm.actions.protocol import ActionRunner
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.engine.records import ExecutionResult

__all__ = ["ActionResult", "ActionRunner", "DefaultActionRunner", "ExecutionResult", "FSMExecutor"]
