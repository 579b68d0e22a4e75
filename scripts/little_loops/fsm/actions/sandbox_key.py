"""The `sandbox:` key of a loop, a state or a custom agent: its check, its doc, what it stands for.

Validation reads only this; `sandbox.py` builds the confined command line from the `Sandbox`
it reads (so checking a loop file loads none of the confinement).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.values.value_checks import Check, UnknownKey, describe, string

SANDBOX_KEY = "sandbox"  # of a loop, a state and a custom agent
BWRAP = "bwrap"  # the built-in backend, and its program
NO_SANDBOX = "none"  # `sandbox: none` (or false): this state runs unconfined
NETWORK_WORDS: dict[object, bool] = {"on": True, "off": False, True: True, False: False}


def _paths(value: object) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of paths, got {describe(value)}"
    for item in value:
        if string(item) is not None:
            return f"expected a list of paths, got {describe(item)} in it"
        if "\0" in item:
            return "a path cannot hold a NUL byte"
    return None


def _network(value: object) -> str | None:
    if isinstance(value, bool) or value in ("on", "off"):
        return None
    return f"expected on or off, got {describe(value)}"


def _command(value: object) -> str | None:
    problem = _paths(value)
    if problem is not None:
        return problem.replace("paths", "words of a command line")
    if not value:
        return "expected the wrapper's command line, got an empty list"
    return None


_PATHS = Check(_paths, {"type": "array", "items": {"type": "string", "minLength": 1}})
# The keys of a `sandbox:` mapping, each with its check and what it means.
SANDBOX_KEYS: dict[str, tuple[Check, str]] = {
    "backend": (
        Check(
            lambda v: None if v == BWRAP else f"expected {BWRAP}, got {describe(v)}",
            {"const": BWRAP},
        ),
        "The built-in backend: bwrap (bubblewrap), the default when no command: is given.",
    ),
    "command": (
        Check(
            _command,
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        ),
        "A wrapper of your own (podman, docker, firejail): its command line; the step's exact "
        "command line is added after it as separate arguments.",
    ),
    "network": (
        Check(_network, {"enum": ["on", "off", True, False]}),
        "on (the default; agents need their API) or off: the step has no network at all, "
        "not even 127.0.0.1.",
    ),
    "allow": (
        _PATHS,
        "Secret places to show anyway (read-only), e.g. ~/.ssh for a step that pushes.",
    ),
    "writable": (_PATHS, "More paths the step may write (~ is $HOME)."),
    "readable": (_PATHS, "More paths the step may read under the hidden $HOME (~ is $HOME)."),
}


def _sandbox_value(value: object) -> str | None:
    if isinstance(value, bool) or value in (NO_SANDBOX, BWRAP):
        return None
    if not isinstance(value, Mapping):
        what = f"expected {BWRAP}, {NO_SANDBOX} or a mapping of sandbox settings"
        return f"{what}, got {describe(value)}"
    for key, item in value.items():
        if key not in SANDBOX_KEYS:
            return UnknownKey(f"unknown key {key!r} in sandbox: (keys: {', '.join(SANDBOX_KEYS)})")
        problem = SANDBOX_KEYS[key][0](item)
        if problem is not None:
            return f"{key}: {problem}"
    if "command" in value and "backend" in value:
        return "give either backend: or command:, not both"
    return None


SANDBOX_CHECK = Check(
    _sandbox_value,
    {
        "anyOf": [
            {"enum": [BWRAP, NO_SANDBOX, True, False]},
            {
                "type": "object",
                "properties": {key: dict(check.json) for key, (check, _) in SANDBOX_KEYS.items()},
                "additionalProperties": False,
            },
        ]
    },
)
SANDBOX_DOC = (
    "Confine each step: bwrap (bubblewrap: the working tree writable, .loops/ and the rest "
    "read-only, $HOME hidden but for the agent's own files, secrets masked), none, or a "
    "mapping of backend/command, network, allow, writable, readable (docs/sandbox.md)."
)


@dataclass(frozen=True)
class Sandbox:
    """A step's sandbox as written: the user's wrapper (None: bubblewrap), network, paths."""

    command: tuple[str, ...] | None = None
    network: bool = True
    allow: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()

    @property
    def backend(self) -> str:
        """How it is shown: `bwrap`, or the wrapper's program."""
        return BWRAP if self.command is None else Path(self.command[0]).name

    def describe(self) -> str:
        """One line for the plan and status: `bwrap, network off, writable ~/cache`."""
        parts = [self.backend if self.command is None else f"command {' '.join(self.command)}"]
        if not self.network:
            parts.append("network off")
        for name in ("allow", "writable", "readable"):
            paths = getattr(self, name)
            if paths:
                parts.append(f"{name} {' '.join(paths)}")
        return ", ".join(parts)


def read(value: object) -> Sandbox | None:
    """The sandbox a checked `sandbox:` value stands for; None: no sandbox (none/false/null)."""
    if value is None or value is False or value == NO_SANDBOX:
        return None
    if not isinstance(value, Mapping):
        return Sandbox()
    command = value.get("command")

    def paths(key: str) -> tuple[str, ...]:
        return tuple(str(p) for p in value.get(key) or ())

    return Sandbox(
        command=tuple(str(word) for word in command) if command else None,
        network=NETWORK_WORDS.get(value.get("network", True), True),
        allow=paths("allow"),
        writable=paths("writable"),
        readable=paths("readable"),
    )


def chosen(*values: object) -> object:
    """The `sandbox:` that applies: the first of *values* given (a state's, a custom
    agent's, the loop's); None when none is."""
    return next((value for value in values if value is not None), None)
