"""The `${...}` references in a loop's fields, followed through `${context.X}`, and their trust."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from little_loops.fsm.definition.checks.graph_checks import KeyPath
from little_loops.fsm.values.interpolation import MAX_CONTEXT_DEPTH
from little_loops.fsm.values.references import OPEN, RAW, raw_references, references

# Fields of the untrusted namespaces that hold numbers or names the loop itself chose.
_SAFE_CAPTURED_FIELDS = ("exit_code", "duration_ms")
_SAFE_PREV_FIELDS = ("exit_code", "state")


@dataclass(frozen=True)
class Use:
    """One `${namespace.path}` reference in a field the executor interpolates."""

    path: KeyPath  # where it is written, from the loop's top level
    namespace: str
    ref_path: str
    via: str | None = None  # the `${context.X}` it was reached through, if any
    raw: bool = False  # written `${raw:...}`, or reached through a `${raw:context.X}`

    @property
    def text(self) -> str:
        return f"${{{self.namespace}.{self.ref_path}}}"

    @property
    def written(self) -> str:
        """How the reference (or the context reference it was reached through) is written."""
        if self.via is not None:
            return self.via
        return f"${{{RAW if self.raw else ''}{self.namespace}.{self.ref_path}}}"

    @property
    def first(self) -> str:
        return _first(self.ref_path)


def expand(
    path: KeyPath,
    text: str,
    context: Mapping[str, object],
    reached: dict[str, list[tuple[str, str]]] | None = None,
) -> Iterator[Use]:
    """The references in *text*, and those reached through `${context.X}` values.

    What a context reference reaches is worked out once (each value it leads to is read
    once, however often it is repeated) and kept in *reached* for the next field.
    """
    reached = {} if reached is None else reached
    written = [Use(path, ns, ref_path, raw=raw) for ns, ref_path, raw in raw_references(text)]
    yield from written
    for use in written:
        if use.namespace == "context":
            found = reached.get(use.text)
            if found is None:
                found = reached[use.text] = _through(use.first, context)
            for namespace, ref_path in found:
                yield Use(path, namespace, ref_path, use.written, use.raw)


def _through(key: str, context: Mapping[str, object]) -> list[tuple[str, str]]:
    """The references reached through the context value *key*, breadth first, each context
    value read once and no deeper than the interpolation limit."""
    value = context.get(key)
    found: list[tuple[str, str]] = []
    if not (isinstance(value, str) and OPEN in value):
        return found
    pending = [(value, 1)]
    seen = {value}
    for chunk, depth in pending:  # grows while it is read
        for namespace, ref_path in references(chunk):
            found.append((namespace, ref_path))
            inner = context.get(_first(ref_path)) if namespace == "context" else None
            if not isinstance(inner, str) or OPEN not in inner or inner in seen:
                continue
            if depth < MAX_CONTEXT_DEPTH:
                seen.add(inner)
                pending.append((inner, depth + 1))
    return found


def _first(ref_path: str) -> str:
    return ref_path.split(".", 1)[0].split("[", 1)[0]


def untrusted(use: Use, verdicts_are_text: bool) -> bool:
    """Whether *use* stands for text the loop does not control (command output, model text,
    the environment)."""
    parts = use.ref_path.replace("[", ".").split(".")
    if use.namespace == "captured":
        return not (len(parts) > 1 and parts[1] in _SAFE_CAPTURED_FIELDS)
    if use.namespace == "prev":
        return parts[0] not in _SAFE_PREV_FIELDS and (parts[0] != "verdict" or verdicts_are_text)
    if use.namespace == "result":
        return parts[0] != "verdict" or verdicts_are_text
    return use.namespace == "env"


def injection_message(use: Use) -> str:
    """The warning for a `${raw:...}` (shell action) that pastes text the loop does not control."""
    via = f" (through {use.via})" if use.via else ""
    quoted = use.written.replace(RAW, "", 1)
    return (
        f"{use.text}{via} pastes text this loop does not control into a bash command as it "
        "is (raw: turns quoting off): a quote in it breaks the command, and $(...) or ; in "
        f"it runs as code; write {quoted} to have it quoted"
    )
