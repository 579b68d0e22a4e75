"""Sub-loop states (`loop:`, `with:`): their keys, and loading and checking each child loop."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from little_loops.fsm.definition.model.fanout_keys import NOT_WITH_CHILD, fan_out_of
from little_loops.fsm.definition.model.parameters import check_value
from little_loops.fsm.definition.model.run_keys import SUBLOOP_STATE_KEYS
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loop_files import LOOP_SUFFIXES as LOOP_SUFFIXES
from little_loops.fsm.definition.reading.loop_files import LOOPS_FOLDER, SOURCE_SUFFIXES
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError, ValidationError
from little_loops.fsm.facts.suggest import did_you_mean

# The state keys a sub-loop state cannot have (the child is its action and its verdict).
NOT_WITH_LOOP = NOT_WITH_CHILD
INTERPOLATION_START = "${"
# What validate says of a `loop: ${...}`: its child is known only when the state runs.
DYNAMIC_NOTE = (
    "the child loop is named at run time: it is found, loaded and checked when the state runs"
    " (a name that is no valid loop is then the verdict error)"
)
# How deep sub-loops may nest: each level runs inside the one above it (one process), and
# a chain a few times this deep ran out of Python's stack mid-run (an internal error).
MAX_DEPTH = 32

KeyPath = tuple[str | int, ...]
# The loop files being checked, outermost first: a child found among them is recursion.
_OPEN: ContextVar[tuple[Path, ...]] = ContextVar("subloop_open", default=())


class Report(Protocol):
    """What checking a child file gives (validate/loopfile.FileReport)."""

    fsm: FSMLoop | None
    errors: list[ValidationError]


def key_problems(state: Mapping[Any, object]) -> Iterator[tuple[KeyPath, str]]:
    """Keys that do not go together with `loop:` / `with:` / `outcome:` in one raw state."""
    if state.get("loop") is not None:
        for key in NOT_WITH_LOOP:
            if state.get(key) is not None:
                yield (key,), "a sub-loop state (loop:) runs the child loop: it cannot have " + key
        if state.get("terminal") is True:
            yield ("loop",), "a terminal state cannot run a sub-loop"
        if state.get("with") is not None and state.get("context_passthrough") is True:
            yield (
                ("context_passthrough",),
                "give the child its values with `with:` or share "
                "the context (context_passthrough), not both",
            )
    else:
        if state.get("with") is not None:
            yield ("with",), "only a sub-loop state (loop:) takes parameter values"
        for key in SUBLOOP_STATE_KEYS:
            if state.get(key) not in (None, False):
                yield (key,), f"only a sub-loop state (loop:) has {key}"
    if state.get("outcome") is not None and state.get("terminal") is not True:
        yield ("outcome",), "only a terminal state has an outcome"


def is_dynamic(loop: str) -> bool:
    """True when a `loop:` names its child with a `${...}`, filled in when the state runs."""
    return INTERPOLATION_START in loop


def child_path(name: str, parent_file: Path) -> Path:
    """The file of the child loop *name*: `library:NAME`; a path ending in `.yaml`/`.yml`
    (from the parent's folder); else NAME.fsm.yaml / NAME.yaml / NAME.yml, NAME a file name
    or a folder path such as `oracles/x`, in the parent's folder, then in the project's
    `.loops/` (a child in `.loops/oracles/` names its siblings from the project)."""
    from little_loops.loops import LIBRARY_PREFIX, library_loop_path

    if name.startswith(LIBRARY_PREFIX):
        return library_loop_path(name[len(LIBRARY_PREFIX) :])
    folder = parent_file.parent
    if name.endswith(SOURCE_SUFFIXES):
        given = folder / name
        if given.is_file():
            return given
        raise LoopFileError(str(given), "no such file")
    project = next((p for p in (folder, *folder.parents) if p.name == LOOPS_FOLDER), folder)
    for where in dict.fromkeys((folder, project)):
        for suffix in LOOP_SUFFIXES:
            candidate = where / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
    raise LoopDefinitionError(f"no loop named '{name}' in {folder}/")


def attach_children(
    fsm: FSMLoop, source: str, check: Callable[[Path], Report]
) -> list[ValidationError]:
    """Load and check the child loop of each sub-loop state of *fsm* (read from *source*)
    with *check*, and keep it in `fsm.children`; the problems, at the state's `loop:` key."""
    fsm.source = source
    subloops = {n: s for n, s in fsm.states.items() if s.loop is not None}
    dynamic = [n for n, s in subloops.items() if s.loop is not None and is_dynamic(s.loop)]
    problems: list[ValidationError] = [
        ValidationError.at(fsm.name, ("states", n, "loop"), DYNAMIC_NOTE, "warning")
        for n in dynamic
    ]
    subloops = {n: s for n, s in subloops.items() if n not in dynamic}
    if not subloops:
        return problems
    here = Path(source).resolve()
    opened = _OPEN.get()
    token = _OPEN.set((*opened, here))
    try:
        for name, state in subloops.items():
            assert state.loop is not None
            path: KeyPath = ("states", name, "loop")
            try:
                file = child_path(state.loop, here).resolve()
            except (LoopDefinitionError, LoopFileError) as exc:
                problems.append(ValidationError.at(fsm.name, path, str(exc)))
                continue
            if len(opened) + 1 > MAX_DEPTH:
                problem = f"sub-loops nest more than {MAX_DEPTH} deep (at {file.name})"
                problems.append(ValidationError.at(fsm.name, path, problem))
                continue
            if file in (*opened, here):
                chain = " > ".join(p.name for p in (*opened, here)[(*opened, here).index(file) :])
                problem = f"recursion: {chain} > {file.name} runs itself"
                problems.append(ValidationError.at(fsm.name, path, problem))
                continue
            report = check(file)
            if report.errors or report.fsm is None:
                first = report.errors[0] if report.errors else "it is not a valid loop"
                problem = f"child loop {file.name} is not valid: {first}"
                problems.append(ValidationError.at(fsm.name, path, problem))
                continue
            asks = [n for n, s in report.fsm.states.items() if s.is_approval()]
            if asks:  # `ll-loop approve` answers the run's own question, not a child's
                problem = f"child loop {file.name} has an approval state ({asks[0]}): not supported"
                problems.append(ValidationError.at(fsm.name, path, problem))
                continue
            fsm.children[name] = report.fsm
            for where, problem in with_problems(report.fsm, state.with_ or {}):
                problems.append(ValidationError.at(fsm.name, ("states", name, *where), problem))
    finally:
        _OPEN.reset(token)
    return problems


def fanout_child_problems(fsm: FSMLoop, source: str) -> list[ValidationError]:
    """Each fan-out state's child loop named as written (not `${...}`, not `library:`): a
    loop of the project that is not *fsm*'s own file (each child is a process of its own,
    so a loop that fans out to itself would start runs without end)."""
    from little_loops.loops import LIBRARY_PREFIX

    here = Path(source).resolve()
    problems: list[ValidationError] = []
    if not here.is_file():
        return problems  # text checked on its own: it has no project to look in
    for name, state in fsm.states.items():
        config = fan_out_of(state)
        if config is None:
            continue
        written = getattr(config, "loop", "") or ""
        where: list[tuple[KeyPath, str]] = [(("map", "loop"), written)] if written else []
        for i, branch in enumerate(getattr(config, "branches", [])):
            if isinstance(branch.get("loop"), str):
                where.append((("parallel", "branches", i, "loop"), branch["loop"]))
        for path, loop in where:
            if is_dynamic(loop) or loop.startswith(LIBRARY_PREFIX):
                continue
            at: KeyPath = ("states", name, *path)
            try:
                file = child_path(loop, here).resolve()
            except (LoopDefinitionError, LoopFileError) as exc:
                problems.append(ValidationError.at(fsm.name, at, str(exc)))
                continue
            if file == here:
                problem = f"recursion: {file.name} fans out to itself (state {name})"
                problems.append(ValidationError.at(fsm.name, at, problem))
    return problems


def with_problems(child: FSMLoop, given: Mapping[str, Any]) -> Iterator[tuple[KeyPath, str]]:
    """`with:` against the child's parameters: known keys, literal values of the right
    type (an interpolated value is checked when the state runs), every required one given."""
    # ... and the child's free-form input (its `input_key`) and required inputs, which
    # little-loops' parents bind by name as well.
    inputs = [child.input_key, *child.required_inputs]
    known = [*child.parameters, *child.context, *(k for k in inputs if k not in child.context)]
    for key, value in given.items():
        if key not in known:
            hint = did_you_mean(str(key), known) or (
                f" ({child.name} has: {', '.join(known)})"
                if known
                else f" ({child.name} declares no parameters)"
            )
            yield ("with", str(key)), f"unknown parameter of loop '{child.name}'{hint}"
            continue
        spec = child.parameters.get(key)
        if spec is None or (isinstance(value, str) and INTERPOLATION_START in value):
            continue
        try:
            check_value(spec, value)
        except ValueError as exc:
            yield ("with", str(key)), f"parameter of loop '{child.name}': {exc}"
    for name, spec in child.parameters.items():
        if spec.required and name not in given:
            yield ("with",), f"missing required parameter '{name}' of loop '{child.name}'"
