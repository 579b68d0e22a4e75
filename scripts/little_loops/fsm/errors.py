"""The error hierarchy: a loop file is wrong, or running a loop went wrong."""

from __future__ import annotations


class LoopError(Exception):
    """Base class of every error ll-loop reports to a user as a one-line message."""


class LoopDefinitionError(LoopError):
    """The loop file (or a paradigm spec) is wrong; the CLI exits 2."""


class LoopRuntimeError(LoopError):
    """Running a loop failed in a way the loop file could not prevent; the CLI exits 1."""


class InterpolationError(LoopRuntimeError):
    """A `${namespace.path}` reference could not be resolved."""


class CorruptStateError(LoopRuntimeError):
    """A file under `.loops/.running/` cannot be read back (truncated, not JSON, wrong shape)."""


class ScopeConflictError(LoopRuntimeError):
    """Another live loop holds a scope that overlaps the one a run asked for."""
