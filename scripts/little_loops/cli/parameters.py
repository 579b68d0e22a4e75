"""A run's parameter values from its command line: VALUE..., --set KEY=VALUE, --context-file."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.arguments import (
    Arguments,
    bind,
    free_input,
    missing_inputs,
    unpacked_value,
)
from little_loops.fsm.definition.model.metadata import DEFAULT_INPUT_KEY, reads_context
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError, LoopRuntimeError
from little_loops.fsm.values.interpolation import literal


def add_parameter_flags(parser: argparse.ArgumentParser) -> None:
    """`VALUE...` after the loop, `--set KEY=VALUE` and `--context-file FILE` (run only)."""
    parser.add_argument(
        "values",
        nargs="*",
        default=[],  # else argparse counts the optional VALUEs among the required arguments
        metavar="VALUE",
        help="values of the loop's parameters, in the order it declares them",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        dest="sets",
        metavar="KEY=VALUE",
        help="give a parameter (or override a context value) by name; repeatable; "
        "a list is written a,b,c",
    )
    parser.add_argument(
        "--context",
        action="append",
        dest="sets",
        metavar="KEY=VALUE",
        help="little-loops' spelling of --set (with --compat, a key the loop does not "
        "declare is added, as there)",
    )
    parser.add_argument(
        "--context-file",
        metavar="FILE",
        help="a JSON or YAML mapping of parameter and context values (below VALUE and --set)",
    )


def add_help_flag(parser: argparse.ArgumentParser) -> None:
    """`-h/--help` that, after a loop NAME, also lists that loop's parameters."""
    parser.add_argument(
        "-h",
        "--help",
        action=_LoopHelp,
        help="show this help (after NAME: with the loop's parameters) and exit",
    )


class _LoopHelp(argparse._HelpAction):
    """argparse's help, then the parameters of the loop named before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        parser.print_help()
        name = getattr(namespace, "loop", None)
        if isinstance(name, str):
            from little_loops.cli.resolve import project_loops_dir, resolve_loop_path
            from little_loops.cli.runref import named_as_run
            from little_loops.fsm.facts.safetext import one_line
            from little_loops.fsm.validate.loopfile import load_and_validate

            try:
                path = resolve_loop_path(name, project_loops_dir())
                fsm = named_as_run(load_and_validate(path), path)  # as `run NAME` names it
            except LoopDefinitionError as exc:
                sys.stdout.flush()
                print(f"ll-loop: error: {one_line(exc)}", file=sys.stderr)
                parser.exit(2)
            print("\n" + parameters_help(fsm), end="")
        parser.exit()


def parameters_help(fsm: FSMLoop) -> str:
    """The `parameters of NAME:` section of `ll-loop run NAME --help`."""
    if not fsm.parameters:
        return f"loop '{fsm.name}' declares no parameters\n"
    names = " ".join(name.upper() for name in fsm.parameters)
    lines = [f"parameters of {fsm.name} (ll-loop run {fsm.name} {names}):"]
    for name, spec in fsm.parameters.items():
        lines.append(f"  {name}  ({spec.summary()})")
        if spec.description:
            lines.append(f"      {spec.description}")
    return "\n".join(lines) + "\n"


def arguments_from(
    values: Sequence[str],
    sets: Sequence[str],
    context_file: str | None,
    *,
    background: bool = False,
) -> Arguments:
    """The Arguments of a command line; the context file is read here (it must be a mapping).

    A pipe (`--context-file <(...)`) is read in a run in the foreground; a `--background`
    run is refused one: the detached run reads the file again, and a pipe is read once."""
    if context_file is None:
        return Arguments(tuple(values), tuple(sets))
    file_values = read_context_file(context_file, pipe_ok=not background)
    path = str(Path(context_file).resolve())
    return Arguments(tuple(values), tuple(sets), file_values, context_file, path)


def read_context_file(name: str, *, pipe_ok: bool = True) -> dict[str, Any]:
    """The mapping in a JSON or YAML file, or in a pipe when *pipe_ok* (read by the deadline
    of `pipe.read_deadline`, made only for a pipe); LoopDefinitionError when it is not one.

    A `.json` file, or text that parses as a JSON object, is read as JSON (the `\\ud83d\\ude00`
    escapes `json.dumps` writes are one character there, an error in YAML); YAML otherwise."""
    from little_loops.fsm.definition.reading.loader import load_text, read_file

    if not pipe_ok and _is_pipe(name):
        raise LoopDefinitionError(
            f"context file {name}: is a pipe, which --background cannot read (the detached "
            "run reads the file again): use a regular file"
        )
    try:
        text = read_file(name, pipe_ok=pipe_ok)
        data = _json_mapping(name, text)
        if data is None:
            data = load_text(text, source=name).data
    except LoopFileError as exc:
        if exc.line is None and exc.detail.startswith(("the file is empty", "the top level")):
            raise LoopDefinitionError(
                f"context file {name}: expected a mapping of KEY: VALUE"
            ) from None
        message = str(exc).replace(", not a loop file", "")
        raise LoopDefinitionError(f"context file {message}") from None
    where = _nul_at(data)
    if where is not None:  # refused now, not when the first action that reads it runs
        raise LoopDefinitionError(
            f"context file {name}: {where} has a NUL byte, which bash cannot hold"
        )
    return dict(data)


def _is_pipe(name: str) -> bool:
    """Whether *name* is a FIFO or a pipe (bash's `<(...)`), without opening it."""
    import os
    import stat

    try:
        return stat.S_ISFIFO(os.stat(name).st_mode)
    except OSError:
        return False  # read_file says what is wrong with it


def _nul_at(data: Any) -> str | None:
    """Where the first key or string value of *data* with a NUL byte is (`key 'a.b'`,
    `the value of 'a.b'`), or None."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and "\0" in item:
            return f"the value of {path!r}"
        children = (
            item.items()
            if isinstance(item, dict)
            else enumerate(item)
            if isinstance(item, list)
            else ()
        )
        for key, child in children:
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\0" in key:
                return f"the key {inner!r}"
            stack.append((inner, child))
    return None


def _json_mapping(name: str, text: str) -> dict[str, Any] | None:
    """The JSON object *text* holds when the file *name* ends in `.json` or *text* parses as
    one; None to read it as YAML. LoopFileError for a `.json` file that is not such JSON."""
    import json

    from little_loops.fsm.definition.reading.loader import MAX_NESTING

    is_json = name.lower().endswith(".json")
    if not is_json and not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
        if _depth(data) > MAX_NESTING:
            raise ValueError(f"nested more than {MAX_NESTING} deep")
    except (ValueError, RecursionError) as exc:
        if not is_json:
            return None  # `{a: 1}` is YAML, not JSON
        why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise LoopFileError(name, f"not valid JSON: {why}") from None
    if not isinstance(data, dict):
        raise LoopFileError(name, "the top level must be a mapping")
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) < len(pairs):
        twice = next(key for n, (key, _) in enumerate(pairs) if key in dict(pairs[:n]))
        raise ValueError(f"the key {twice!r} is given twice")
    return data


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


def _depth(value: Any) -> int:
    """How deep *value* nests lists and mappings (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            stack.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def input_key(fsm: FSMLoop) -> str | None:
    """The context key a free-form VALUE goes to, or None when the loop takes none: one
    without parameters that names its `input_key:`, requires it, or reads it; under
    `--compat` any loop without parameters (little-loops keeps the value for it)."""
    if fsm.parameters:
        return None
    key = fsm.input_key
    if key != DEFAULT_INPUT_KEY or key in fsm.required_inputs or fsm.theirs:
        return key
    return key if reads_context(fsm.to_dict(), key) else None


def with_arguments(fsm: FSMLoop, arguments: Arguments, *, missing_ok: bool = False) -> FSMLoop:
    """The loop whose context holds this run's values (checked; LoopDefinitionError if not)."""
    context = bind(
        fsm.name,
        fsm.parameters,
        fsm.context,
        arguments,
        missing_ok=missing_ok,
        input_key=input_key(fsm),
        theirs=fsm.theirs,
    )
    if not missing_ok:
        missing_inputs(fsm.name, context, fsm.required_inputs, fsm.input_key)
    # A value given at run time is data, taken as written: it may come from someone else
    # (an issue title in CI), so a `${env.TOKEN}` in it must not be filled in.

    for key in given_keys(fsm, arguments):
        if key in context:
            context[key] = literal(context[key])
    if arguments != Arguments():
        # The file's own context values that use the given ones must still fill in: one
        # that cannot (a cycle, past the limits) is refused now, not when a state reads it.
        from little_loops.fsm.values.interpolation import context_problems

        for key, message in context_problems(context):
            raise LoopDefinitionError(f"loop '{fsm.name}': context '{key}': {message}")
    return dataclasses.replace(fsm, context=context)


def given_keys(fsm: FSMLoop, arguments: Arguments) -> set[str]:
    """The context keys this run's values give (positional, --set, a context file)."""
    keys = {str(key) for key in arguments.file_values}
    unpacked = _theirs_unpacked(fsm, arguments)
    if unpacked is not None:
        keys |= set(unpacked)
    else:
        keys |= set(list(fsm.parameters)[: len(arguments.positional)])
    key = input_key(fsm)
    if key is not None and arguments.positional:
        keys |= set(free_input(arguments.positional[0], fsm.context, key))
    keys |= {pair.partition("=")[0] for pair in arguments.sets}
    return keys


def for_background(fsm: FSMLoop, arguments: Arguments) -> Arguments:
    """The same values for a detached run: positional ones as `--set NAME=VALUE`."""
    named = tuple(
        f"{name}={value}" for name, value in zip(fsm.parameters, arguments.positional, strict=False)
    )
    unpacked = _theirs_unpacked(fsm, arguments)
    if unpacked is not None:  # the one VALUE goes as it is: the detached run unpacks it
        return arguments
    key = input_key(fsm)
    if key is not None and arguments.positional:
        free = free_input(arguments.positional[0], fsm.context, key)
        named = tuple(f"{key}={value}" for key, value in free.items())
    return dataclasses.replace(arguments, positional=(), sets=(*named, *arguments.sets))


def _theirs_unpacked(fsm: FSMLoop, arguments: Arguments) -> dict[str, Any] | None:
    """The values one JSON-object VALUE gives under `--compat` (`unpacked_value`), or None."""
    if not fsm.theirs:
        return None
    return unpacked_value(arguments.positional, fsm.parameters, fsm.context)


def argv(arguments: Arguments) -> list[str]:
    """The flags that give these values again (a detached run's command line)."""
    out: list[str] = []
    for pair in arguments.sets:
        out += ["--set", pair]
    if arguments.file_path is not None:
        out += ["--context-file", arguments.file_path]
    return out


def resumed_context(fsm: FSMLoop, saved: Mapping[str, Any]) -> dict[str, Any]:
    """The context a resumed run goes on with: the saved values over the file's, its
    parameters' values checked again (the file may have changed since)."""
    for name, spec in fsm.parameters.items():
        if spec.required and name not in saved:
            raise LoopRuntimeError(
                f"cannot resume: the saved run of loop '{fsm.name}' has no value for its "
                f"parameter '{name}' (the loop file changed?); start it again with "
                f"'ll-loop run {fsm.name}'"
            )
    values = {key: value for key, value in saved.items() if key in fsm.parameters}
    rest = {key: value for key, value in saved.items() if key not in fsm.parameters}
    arguments = Arguments(file_values=values, file_source="the saved run")
    return {**bind(fsm.name, fsm.parameters, fsm.context, arguments), **rest}


def loop_now(loop_file: Path | None) -> FSMLoop | None:
    """A saved run's loop as its file reads now, for `ll-loop status` (None when the file
    is gone or invalid)."""
    if loop_file is None:
        return None
    from little_loops.fsm.validate.loopfile import load_and_validate

    try:
        return load_and_validate(loop_file)
    except (LoopDefinitionError, OSError):
        return None


def saved_values(saved_context: Mapping[str, Any], fsm: FSMLoop | None) -> str | None:
    """`issue=123, labels=a,b`: a saved run's parameter values, for `ll-loop status` (None
    when its loop (loop_now) is gone, invalid or declares no parameters)."""
    if fsm is None:
        return None
    from little_loops.fsm.definition.model.parameters import show

    shown = [
        f"{name}={show(saved_context[name])}" for name in fsm.parameters if name in saved_context
    ]
    return ", ".join(shown) or None
