"""Validate loop definitions, raw and as a model; every problem names loop > state > key.

Layers of checks, in this order (a paradigm file is first compiled to an FSM through
`paradigms.registry`, which needs nothing from this module):

* `key_checks` looks at the raw YAML data: unknown keys (with did-you-mean),
  required keys, the type and range of every field, enums, evaluator-specific fields.
* `graph_checks` looks at the FSMLoop model: the initial state and every transition
  target exist, there is a terminal state, no non-terminal dead ends, reachability,
  route keys the state's evaluator can give, `${...}` references that can resolve.
* `analysis` then looks for what would go wrong at run time: verdicts with no route,
  `${captured.X}` read before it is set, command output pasted into bash commands.
* `name_checks` measures the loop's and the states' names against the file names a run
  makes of them (at most 255 bytes each).

The graph is only checked once the fields are well-formed, so one typo does not
produce a cascade of follow-on messages. Past that point every check runs, whatever the
others found: a file with an error still gets its warnings, all in one pass (only the
analysis needs an initial state that exists, to walk the graph from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.definition.checks.analysis import analyze
from little_loops.fsm.definition.checks.features import FANOUT_CHILDREN, SUBLOOP_CHILDREN
from little_loops.fsm.definition.checks.graph_checks import check_graph
from little_loops.fsm.definition.checks.key_checks import check_definition
from little_loops.fsm.definition.checks.key_tables import FSM_PARADIGM
from little_loops.fsm.definition.checks.name_checks import name_length_problems, run_names
from little_loops.fsm.definition.graph.edges import loop_graph
from little_loops.fsm.definition.model.agents import project_agents_file, read_project_agents
from little_loops.fsm.definition.model.lint_flags import as_written
from little_loops.fsm.definition.model.parameters import ParameterSpec
from little_loops.fsm.definition.model.typed import (
    EvaluateConfig,
    FSMLoop,
    LLMConfig,
    RouteConfig,
    StateConfig,
)
from little_loops.fsm.definition.reading.loader import LoadedDocument, no_cycle_collection
from little_loops.fsm.definition.reading.loop_files import FolderNames, folder_problems
from little_loops.fsm.definition.reading.loopdoc import load_loop, resolve_document
from little_loops.fsm.facts.errors import (
    LoopDefinitionError,
    LoopFileError,
    LoopValidationError,
    ParadigmSpecError,
    ValidationError,
)
from little_loops.fsm.validate.compat import as_claude_subagents, flags_of, relaxed
from little_loops.fsm.validate.meanings import as_theirs, notes
from little_loops.fsm.values.value_checks import describe

if TYPE_CHECKING:
    from little_loops.fsm.actions.custom import AgentDefinition

__all__ = [
    "FileReport",
    "ValidationError",
    "check_document",
    "check_file",
    "load_and_validate",
    "located",
    "validate_definition",
    "validate_fsm",
]


@dataclass
class FileReport:
    """Everything `ll-loop validate` learns about one file."""

    path: str
    fsm: FSMLoop | None = None
    errors: list[ValidationError] = field(default_factory=list)
    warnings: list[ValidationError] = field(default_factory=list)
    # Where little-loops reads the file otherwise (validate/meanings.py): not problems.
    notes: list[ValidationError] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def problems(self) -> list[ValidationError]:
        """Errors and warnings together, in the order of their lines in the file."""
        return sorted([*self.errors, *self.warnings], key=lambda p: p.line or 0)


def _has_errors(problems: list[ValidationError]) -> bool:
    return any(p.severity == "error" for p in problems)


def validate_definition(
    data: Mapping[str, Any], project_agents: Sequence[str] = ()
) -> list[ValidationError]:
    """Problems in a raw loop definition (the parsed YAML mapping), before it becomes a model;
    *project_agents* names the custom agents of its project."""
    if not isinstance(data, Mapping):
        return [ValidationError("the top level must be a mapping of loop settings")]
    return check_definition(data, project_agents)


def _model_shape(fsm: FSMLoop) -> list[ValidationError]:
    """Problems a hand-built FSMLoop can have that a loaded one cannot: wrong object types."""
    if not isinstance(fsm, FSMLoop):
        return [ValidationError(f"expected a loop definition, got {describe(fsm)}")]
    loop = fsm.name if isinstance(fsm.name, str) and fsm.name else None
    if not isinstance(fsm.states, dict):
        problem = f"expected a mapping of states, got {describe(fsm.states)}"
        return [ValidationError.at(loop, ("states",), problem)]
    problems: list[ValidationError] = []
    specs = fsm.parameters
    values = specs.values() if isinstance(specs, dict) else [specs]
    wrong = [value for value in values if not isinstance(value, ParameterSpec)]
    if wrong:
        problem = f"expected a ParameterSpec by name, got {describe(wrong[0])}"
        problems.append(ValidationError.at(loop, ("parameters",), problem))
    if not isinstance(fsm.llm, LLMConfig):
        problem = f"expected the llm settings, got {describe(fsm.llm)}"
        problems.append(ValidationError.at(loop, ("llm",), problem))
    for name, state in fsm.states.items():
        path: tuple[str | int, ...] = ("states", str(name))
        if not isinstance(state, StateConfig):
            problem = f"expected a state's settings, got {describe(state)}"
            problems.append(ValidationError.at(loop, path, problem))
            continue
        if state.evaluate is not None and not isinstance(state.evaluate, EvaluateConfig):
            problem = f"expected evaluator settings, got {describe(state.evaluate)}"
            problems.append(ValidationError.at(loop, (*path, "evaluate"), problem))
        if state.route is not None and not (
            isinstance(state.route, RouteConfig) and isinstance(state.route.routes, dict)
        ):
            problem = f"expected verdict routes, got {describe(state.route)}"
            problems.append(ValidationError.at(loop, (*path, "route"), problem))
    return problems


def validate_fsm(fsm: FSMLoop) -> list[ValidationError]:
    """Problems in a loop model: the type of every field, then the state machine itself.

    Useful for models built in Python or by a paradigm compiler; a model built from a
    file that passed `validate_definition` only needs the state-machine checks.
    """
    problems = _model_shape(fsm)
    if problems:
        return problems
    problems = check_definition(fsm.to_dict(), tuple(fsm.project_agents))
    if _has_errors(problems):
        return problems
    return problems + _check_machine(fsm)


def _check_machine(fsm: FSMLoop) -> list[ValidationError]:
    """The state-machine checks, then the static analysis (which walks the graph from the
    initial state: it is skipped when that is not a state, an error said already)."""
    graph = loop_graph(fsm)
    problems = check_graph(fsm, graph)
    if fsm.initial not in fsm.states:
        return problems
    return problems + analyze(fsm, graph)


def _compile(
    data: Mapping[str, Any], paradigm: str, project: Mapping[str, AgentDefinition]
) -> tuple[FSMLoop | None, list[ValidationError]]:
    """Compile a paradigm spec (goal, convergence, ...) and validate the result."""
    name = data.get("name")
    loop = name if isinstance(name, str) and name else None
    # Imported here, not at the top, so validating plain FSM files never loads the
    # compilers (start-up time); the registry imports nothing from this module.
    from little_loops.fsm.paradigms import registry

    try:
        fsm = registry.compile_paradigm(dict(data))
    except LoopValidationError as exc:
        return None, exc.errors
    except ParadigmSpecError as exc:
        said = f"{exc.detail} (paradigm {paradigm})"
        return None, [ValidationError.at(loop, exc.key_path, said, check=exc.check)]
    except LoopDefinitionError as exc:
        return None, [ValidationError.at(loop, ("paradigm",), str(exc))]
    fsm.project_agents = dict(project)
    return fsm, validate_fsm(fsm)


def check_document(doc: LoadedDocument, compat: bool = False) -> FileReport:
    """Validate a parsed loop file; every problem gets the line of the key it is about.
    With *compat* our stricter checks are warnings (compat.py)."""
    data = doc.data
    flags = flags_of(data)
    paradigm = data.get("paradigm")
    fsm: FSMLoop | None = None
    # The project's custom agents (`.loops/agents.yaml`): a broken file is one error each.
    project, broken = read_project_agents(project_agents_file(Path(doc.source)))
    if compat and isinstance(data, Mapping):  # an agent that is no agent of ours: Claude Code's
        own = data.get("agents")
        names = {*AGENTS, *project, *(own if isinstance(own, Mapping) else ())}
        data = as_claude_subagents(data, names)
        if paradigm is None or paradigm == FSM_PARADIGM:
            data = as_theirs(data)
    agent_errors = [ValidationError(message) for message in broken]
    if paradigm is not None and paradigm != FSM_PARADIGM:
        if isinstance(paradigm, str):
            fsm, problems = _compile(data, paradigm, project)
            problems = relaxed(problems, flags, compat)
        else:
            problems = validate_definition(data, tuple(project))
    else:
        problems = relaxed(validate_definition(data, tuple(project)), flags, compat)
        if not _has_errors(problems):
            fsm = FSMLoop.from_dict(dict(data))
            fsm.read_as_theirs(compat)  # its checks read routes as the run will
            fsm.project_agents = project
            problems += relaxed(_check_machine(fsm), flags, compat)
            fsm.source = doc.source  # where a `loop: ${...}` finds its child at run time
            check = partial(check_file, compat=compat)
            problems += SUBLOOP_CHILDREN.at_model(fsm, doc.source, check)
            problems += FANOUT_CHILDREN.at_model(fsm, doc.source)
    if fsm is not None:  # names that would make file names too long for any file system
        fsm.read_as_theirs(compat)
        problems += name_length_problems(fsm, run_names(fsm, doc.source))
    for problem in problems:
        if problem.line is None:
            _place(problem, doc)
    problems.sort(key=lambda p: p.line or 0)
    problems = agent_errors + problems
    report = FileReport(doc.source)
    report.errors = [p for p in problems if p.severity == "error"]
    report.warnings = [p for p in problems if p.severity == "warning"]
    report.fsm = None if report.errors else fsm
    if not compat and isinstance(data, Mapping):
        report.notes = notes(data, data.get("name") if isinstance(data.get("name"), str) else None)
        for note in report.notes:
            _place(note, doc)
    return report


def _place(problem: ValidationError, doc: LoadedDocument) -> None:
    """Give *problem* the line of its key, and its file when the key came from another
    file (a fragment library or a base loop)."""
    file, problem.line = doc.where_of(problem.path)
    if file != doc.source:
        problem.file = file


def located(errors: Sequence[ValidationError], doc: LoadedDocument) -> LoopValidationError:
    """The error to raise for *errors* found in *doc*, each placed at its file and line."""
    for problem in errors:
        if problem.line is None:
            _place(problem, doc)
    return LoopValidationError(sorted(errors, key=lambda p: p.line or 0), source=doc.source)


def file_problem(exc: LoopFileError, path: str | Path) -> ValidationError:
    """A file that cannot be read as a loop (or one it imports): one problem, in its file."""
    file = exc.source if exc.source != str(path) else None
    return ValidationError(exc.detail, line=exc.line, column=exc.column, file=file)


def check_file(
    path: str | Path,
    folder: FolderNames | None = None,
    compat: bool = False,
    loaded: LoadedDocument | None = None,
) -> FileReport:
    """Validate the loop file at *path*, collecting every problem instead of raising; with
    *folder*, also among the other loop files of its `.loops/` (`loop_files`); with
    *compat*, our stricter checks are warnings; *loaded*: the file, already read."""
    with no_cycle_collection():
        try:
            doc = load_loop(path) if loaded is None else resolve_document(loaded)
        except LoopFileError as exc:
            return FileReport(str(path), errors=[file_problem(exc, path)])
        report = check_document(doc, compat)
        if folder is not None:
            for problem in folder_problems(Path(path), doc.data, folder):
                _place(problem, doc)
                (report.errors if problem.severity == "error" else report.warnings).append(problem)
            report.errors.sort(key=lambda p: p.line or 0)
            report.warnings.sort(key=lambda p: p.line or 0)
            report.fsm = None if report.errors else report.fsm
        return report


def load_and_validate(path: str | Path, *, compat: bool = False) -> FSMLoop:
    """Load the loop file at *path* and return its model, or raise.

    Raises LoopFileError when the file cannot be read as YAML, and LoopValidationError
    (both LoopDefinitionError) carrying every error when it is not a valid loop.
    Warnings do not stop a load; with *compat* our stricter checks are warnings.
    """
    with no_cycle_collection():
        report = check_document(load_loop(path), compat)
    if report.errors or report.fsm is None:
        raise LoopValidationError(report.errors, source=report.path)
    if compat:
        report.fsm.lint_ok = as_written(report.fsm.lint_ok)
    return report.fsm
