"""The `${...}` references in a loop's fields, followed through `${context.X}`, and their trust."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from little_loops.fsm.definition.graph_checks import KeyPath
from little_loops.fsm.engine.interpolation import OPEN, references

# Fields of the untrusted namespaces that hold numbers or names the loop itself chose.
_SAFE_CAPTURED_FIELDS = ("exit_code", "duration_ms")
_SAFE_PREV_FIELDS = ("exit_code", "state")
_MAX_CONTEXT_DEPTH = 10


@dataclass(frozen=True)
class Use:
    """One `${namespace.path}` reference in a field the executor interpolates."""

    path: KeyPath  # where it is written, from the loop's top level
    namespace: str
    ref_path: str
    via: str | None = None  # the `${context.X}` it was reached through, if any

    @property
    def text(self) -> str:
        return f"${{{self.namespace}.{self.ref_path}}}"

    @property
    def first(self) -> str:
        return self.ref_path.split(".", 1)[0].split("[", 1)[0]


def expand(path: KeyPath, text: str, context: Mapping[str, object]) -> Iterator[Use]:
    """The references in *text*, and those reached through `${context.X}` values."""
    pending: list[tuple[str, str | None, int]] = [(text, None, 0)]
    while pending:
        chunk, via, depth = pending.pop(0)
        for namespace, ref_path in references(chunk):
            use = Use(path, namespace, ref_path, via)
            yield use
            value = context.get(use.first) if namespace == "context" else None
            if isinstance(value, str) and OPEN in value and depth < _MAX_CONTEXT_DEPTH:
                pending.append((value, via or use.text, depth + 1))


def untrusted(use: Use, verdicts_are_text: bool) -> bool:
    """Whether *use* pastes text the loop does not control (command output, model text)."""
    parts = use.ref_path.replace("[", ".").split(".")
    if use.namespace == "captured":
        return not (len(parts) > 1 and parts[1] in _SAFE_CAPTURED_FIELDS)
    if use.namespace == "prev":
        return parts[0] not in _SAFE_PREV_FIELDS and (parts[0] != "verdict" or verdicts_are_text)
    if use.namespace == "result":
        return parts[0] != "verdict" or verdicts_are_text
    return False


def injection_message(use: Use) -> str:
    via = f" (through {use.via})" if use.via else ""
    head = (
        f"{use.text}{via} pastes text this loop does not control into a bash command before "
        "bash reads it, so quotes do not protect it: a quote in it breaks the command, and "
        "$(...) or ; in it runs as code; "
    )
    if use.namespace == "result":
        return head + (
            "there is no safe way to hand evaluation details to bash: use them in a prompt "
            "action (passed to claude as one argument) or leave them out"
        )
    return head + (
        "instead have the command that prints it save it too (cmd | tee FILE) and read it "
        'here as "$(cat FILE)", or branch on it with evaluate: source:, which no shell sees'
    )
