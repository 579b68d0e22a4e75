"""The values a run gives a loop's parameters and context: defaults < file < VALUE < --set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.definition.parameters import ParameterSpec, check_value
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
) -> dict[str, Any]:
    """The context a run starts with: the loop's `context:` and every parameter's value.

    With *missing_ok* (a dry run), a required parameter not given is left out. Raises
    LoopDefinitionError with one line naming the key for a missing required value, an
    unknown key, a value of the wrong type or not among the choices, or too many values.
    """
    names = list(parameters)
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
    # key -> (value, where it came from, whether it is text typed on the command line)
    given: dict[str, tuple[object, str, bool]] = {}
    source = args.source
    for key, value in args.file_values.items():
        given[_known(loop, str(key), parameters, context, source)] = (value, source, False)
    for name, value in zip(names, args.positional, strict=False):
        given[name] = (value, "the command line", True)
    for pair in args.sets:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LoopDefinitionError(f"--set {pair}: expected KEY=VALUE")
        given[_known(loop, key, parameters, context, "--set")] = (value, "--set", True)
    out = dict(context)
    for key, (value, _, _) in given.items():
        if key not in parameters:
            out[key] = value  # a plain context value: untyped, as the file's
    for name, spec in parameters.items():
        if name not in given:
            if spec.required and missing_ok:
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
