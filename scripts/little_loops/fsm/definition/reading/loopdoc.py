"""Read a loop file as one plain loop: its YAML with `import:`, `from:`, `fragment:` resolved."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.reading.loader import LoadedDocument, load_file

# The top-level keys and the state key that reuse other YAML; a file with none of them is
# read as it is, and the resolver (`reuse`) is not even imported (start-up time).
REUSE_LOOP_KEYS: tuple[str, ...] = ("import", "fragments", "from", "flow", "state_defs")
REUSE_STATE_KEY = "fragment"


def uses_reuse(data: Mapping[str, Any]) -> bool:
    """Whether the loop data *data* has a key that must be resolved before it is a loop."""
    if any(key in data for key in REUSE_LOOP_KEYS):
        return True
    states = data.get("states")
    if not isinstance(states, Mapping):
        return False
    return any(isinstance(s, Mapping) and REUSE_STATE_KEY in s for s in states.values())


def resolve_document(doc: LoadedDocument) -> LoadedDocument:
    """*doc* as one plain loop (itself when it reuses nothing); LoopFileError naming the file
    and line when an import, a base loop or a fragment cannot be resolved."""
    if not uses_reuse(doc.data):
        return doc
    from little_loops.fsm.definition.reading.reuse import resolve

    return resolve(doc)


def load_loop(path: str | Path) -> LoadedDocument:
    """Read the loop file at *path* as one plain loop (see `resolve_document`)."""
    return resolve_document(load_file(path))
