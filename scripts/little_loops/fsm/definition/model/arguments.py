"""The values a run gives a loop's parameters and context: defaults < file < VALUE < --set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY
from little_loops.fsm.definition.model.parameters import ParameterSpec, check_value
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.suggest import did_you_mean


@dataclass(frozen=True)
class Arguments:
    """What a command line gives a run: values in the declared order, KEY=VALUE pairs
    (`--set`), and the keys of a context file, lowest precedence first."""

    positional: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    file_values: Mapping[str, Any] = field(default_factory=dict)
    file_name: str | None = None  # as the user wrote it, for messages
    file_path: str | None = None  # absolute, for a detached run's command line
    file_source: str = "context file"  # what the file values are, in messages

    @property
    def source(self) -> str:
        return f"{self.file_source} {self.file_name}" if self.file_name else self.file_source


def bind(
    loop: str,
    parameters: Mapping[str, ParameterSpec],
    context: Mapping[str, Any],
    args: Arguments,
    *,
    missing_ok: bool = False,
    input_key: str | None = None,
    theirs: bool = False,
) -> dict[str, Any]:
    """The context a run starts with: the loop's `context:` and every parameter's value.

    With *missing_ok* (a dry run), a required parameter not given is left out. A loop that
    declares no parameters takes one free-form VALUE into context key *input_key* (see
    `free_input`). Raises LoopDefinitionError with one line naming the key for a missing
    required value, an unknown key, a value of the wrong type or not among the choices, or
    too many values. With *theirs* (`--compat`) the values are read as little-loops reads
    them: one VALUE that is a JSON object naming parameters or context keys gives those, a
    key the loop does not declare is added, and a required `run_dir` parameter not given is
    left to the run (the run's folder, `runs/scratch.py`).
    """
    names = list(parameters)
    # key -> (value, where it came from, whether it is text typed on the command line)
    given: dict[str, tuple[object, str, bool]] = {}
    args = _take_whole_values(loop, names, parameters, context, args, given, input_key, theirs)
    source = args.source
    # A loop without parameters also knows its input key (`--set input=...`).
    known = context if names or input_key is None else {input_key: None, **context}
    if theirs:  # little-loops adds a key the loop does not declare
        known = {**known, **dict.fromkeys(map(str, args.file_values))}
        known.update(dict.fromkeys(pair.partition("=")[0] for pair in args.sets))
    for key, value in args.file_values.items():
        given[_known(loop, str(key), parameters, known, source)] = (value, source, False)
    for name, value in zip(names, args.positional, strict=False):
        given[name] = (value, "the command line", True)
    for pair in args.sets:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LoopDefinitionError(f"--set {pair}: expected KEY=VALUE")
        given[_known(loop, key, parameters, known, "--set")] = (value, "--set", True)
    out = dict(context)
    for key, (value, _, _) in given.items():
        if key not in parameters:
            out[key] = value  # a plain context value: untyped, as the file's
    for name, spec in parameters.items():
        if name not in given:
            if spec.required and (missing_ok or (theirs and name == RUN_DIR_KEY)):
                continue
            if spec.required:
                raise LoopDefinitionError(_missing(loop, name, names))
            if spec.default is not None:  # (an optional one without: left out)
                out[name] = spec.run_default()
            continue
        value, where, text = given[name]
        try:
            out[name] = check_value(spec, value, text=text)
        except ValueError as exc:
            raise LoopDefinitionError(
                f"loop '{loop}': parameter '{name}' ({where}): {exc}"
            ) from None
    return out


def _take_whole_values(
    loop: str,
    names: list[str],
    parameters: Mapping[str, ParameterSpec],
    context: Mapping[str, Any],
    args: Arguments,
    given: dict[str, tuple[object, str, bool]],
    input_key: str | None,
    theirs: bool,
) -> Arguments:
    """Put into *given* what a VALUE that stands for several keys gives (a JSON object under
    *theirs*, the free-form input of a loop without parameters) and return *args* without
    it; LoopDefinitionError for more VALUEs than the loop takes."""
    unpacked = unpacked_value(args.positional, parameters, context) if theirs else None
    if unpacked is not None:
        for key, value in unpacked.items():
            given[key] = (value, "the command line", False)
        args = Arguments((), args.sets, args.file_values, args.file_name, args.file_path)
    if not names and input_key is not None and args.positional:
        if len(args.positional) > 1:
            raise LoopDefinitionError(
                f"loop '{loop}' takes one free-form value (context '{input_key}'), got "
                f"{len(args.positional)}: quote it as one word"
            )
        for key, value in free_input(args.positional[0], context, input_key).items():
            given[key] = (value, "the command line", False)
        args = Arguments((), args.sets, args.file_values, args.file_name, args.file_path)
    if len(args.positional) > len(names):
        takes = (
            f"takes {len(names)} value{'s' if len(names) != 1 else ''} ({', '.join(names)})"
            if names
            else "takes no values (it declares no parameters)"
        )
        extra = " ".join(args.positional[len(names) :])
        raise LoopDefinitionError(
            f"loop '{loop}' {takes}, got {len(args.positional)}: extra {extra}"
        )
    return args


def free_input(raw: str, context: Mapping[str, Any], input_key: str) -> dict[str, Any]:
    """The context values one free-form VALUE gives: a JSON object whose keys are keys of
    the loop's context gives those (as little-loops reads it); anything else is the value
    of *input_key*, as written."""
    if raw.lstrip().startswith("{"):
        import json

        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            parsed = None
        if isinstance(parsed, dict):
            matched = {key: value for key, value in parsed.items() if key in context}
            if matched:
                return matched
    return {input_key: raw}


def unpacked_value(
    positional: Sequence[str], parameters: Mapping[str, Any], context: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The values little-loops reads from one VALUE of a loop with parameters: a JSON object
    naming some of them (or context keys) gives those; None when it is no such object."""
    if not parameters or len(positional) != 1:
        return None
    free = free_input(positional[0], {**parameters, **context}, "")
    return None if "" in free else free


def missing_inputs(
    loop: str, context: Mapping[str, Any], required: Sequence[str], input_key: str
) -> None:
    """Raise LoopDefinitionError (one line, the way out) for the first `required_inputs`
    key whose context value is missing or empty."""
    for key in required:
        if context.get(key) in (None, "", [], {}):
            how = f"ll-loop run {loop} VALUE" if key == input_key else f"--set {key}=VALUE"
            raise LoopDefinitionError(
                f"loop '{loop}' requires input '{key}' but none was provided (give it: {how})"
            )


def _known(
    loop: str,
    key: str,
    parameters: Mapping[str, ParameterSpec],
    context: Mapping[str, Any],
    where: str,
) -> str:
    if key in parameters or key in context:
        return key
    keys = [*parameters, *context]
    hint = did_you_mean(key, keys) or (
        f" (it has: {', '.join(keys)})" if keys else " (it declares no parameters or context)"
    )
    raise LoopDefinitionError(f"loop '{loop}': unknown key '{key}' in {where}{hint}")


def _missing(loop: str, name: str, names: Sequence[str]) -> str:
    position = names.index(name) + 1
    return (
        f"loop '{loop}': missing required parameter '{name}' (give it as value {position} "
        f"after the loop name, or --set {name}=VALUE)"
    )
