"""The error hierarchy: a loop file is wrong, or running a loop went wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "note"]  # a note: little-loops reads it otherwise


class LoopError(Exception):
    """Base class of every error ll-loop reports to a user as a one-line message."""


class LoopDefinitionError(LoopError):
    """The loop file (or a paradigm spec) is wrong; the CLI exits 2."""


class LoopFileError(LoopDefinitionError):
    """The file cannot be read as a loop at all: missing, not YAML, empty, not a mapping.

    The message is `source[:line[:column]]: detail`; the parts are kept for reports.
    """

    def __init__(
        self, source: str, detail: str, line: int | None = None, column: int | None = None
    ) -> None:
        self.source = source
        self.detail = detail
        self.line = line
        self.column = column
        where = source
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {detail}")


@dataclass
class ValidationError:
    """One problem found in a loop definition, and exactly where it is.

    *path* is the key path in the document (`("states", "check", "on_sucess")`);
    *state* and *key* name the state and the offending key when there is one. *file* names
    the file *line* is in when that is not the loop file itself (a fragment library, a
    base loop).
    """

    message: str
    severity: Severity = "error"
    loop: str | None = None
    state: str | None = None
    key: str | None = None
    path: tuple[str | int, ...] = ()
    line: int | None = None
    column: int | None = None
    file: str | None = None
    # The stricter check it comes from (definition/model/lint_flags.py), which a `*_ok` flag
    # silences and `--compat` makes a warning; None for every other problem.
    check: str | None = None

    @classmethod
    def at(
        cls,
        loop: str | None,
        path: tuple[str | int, ...],
        message: str,
        severity: Severity = "error",
        key: str | None = None,
        check: str | None = None,
    ) -> ValidationError:
        """A problem at key *path*; the state and key are read off the path.

        *key* names a key that is not in the path, e.g. a missing required one.
        """
        state = str(path[1]) if len(path) >= 2 and path[0] == "states" else None
        if key is None and path and (path[0] != "states" or len(path) >= 3):
            key = str(path[-1])
        return cls(message, severity, loop, state, key, tuple(path), check=check)

    def location(self) -> str:
        """`loop 'fix-types' > states > check > on_sucess`: the loop, then the key path."""
        parts = [f"loop '{self.loop}'"] if self.loop else []
        parts.extend(str(p) for p in self.path)
        return " > ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message


class LoopValidationError(LoopDefinitionError):
    """A loop definition failed validation; `.errors` holds every problem found.

    The message is the first error (prefixed with `source:line:` when given) plus
    `(and N more)`.
    """

    def __init__(self, errors: Sequence[ValidationError], source: str | None = None) -> None:
        self.errors = list(errors)
        self.source = source
        first = self.errors[0] if self.errors else ValidationError("invalid loop definition")
        where = ""
        if source is not None:
            source = first.file or source
            where = f"{source}:{first.line}: " if first.line is not None else f"{source}: "
        more = len(self.errors) - 1
        super().__init__(f"{where}{first}" + (f" (and {more} more)" if more > 0 else ""))


class ParadigmSpecError(LoopDefinitionError):
    """A paradigm spec is wrong at `key_path` (e.g. `('constraints', 1, 'fix')`)."""

    def __init__(
        self,
        message: str,
        detail: str,
        key_path: tuple[str | int, ...],
        check: str | None = None,
    ) -> None:
        super().__init__(message)
        self.detail = detail
        self.key_path = key_path
        self.check = check  # the stricter check it comes from (ValidationError.check)


class LoopSetupError(LoopError):
    """This machine cannot run the loop: a tool it calls is missing or refuses to run here
    (found before the first step); the CLI exits 2."""


class LoopRuntimeError(LoopError):
    """Running a loop failed in a way the loop file could not prevent; the CLI exits 1."""


class InterpolationError(LoopRuntimeError):
    """A `${namespace.path}` reference could not be resolved."""


class RunLogError(LoopRuntimeError):
    """A run could not write its event log (a full disk, ...): it stops, and can be resumed."""


class CorruptStateError(LoopRuntimeError):
    """A file under `.loops/.running/` cannot be read back (truncated, not JSON, wrong shape)."""


class ScopeConflictError(LoopRuntimeError):
    """Another live loop holds a scope that overlaps the one a run asked for."""
