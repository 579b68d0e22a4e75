"""Validate a doc's loop example that runs sub-loops: its sibling examples, by name, beside it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from little_loops.fsm.validate.loopfile import FileReport, check_file

SUBLOOP_LINE = re.compile(r"^\s+loop: ", re.MULTILINE)
NAME_LINE = re.compile(r"^name: (\S+)$", re.MULTILINE)


def has_subloops(text: str) -> bool:
    """Whether the loop example *text* has a state with `loop:`."""
    return SUBLOOP_LINE.search(text) is not None


def loop_name(text: str) -> str:
    found = NAME_LINE.search(text)
    return found.group(1) if found else "unnamed"


def check_with_siblings(text: str, siblings: Iterable[str], folder: Path) -> FileReport:
    """Validate *text* as `.loops/NAME.yaml` in *folder*, with each of *siblings* (the
    doc's other loop examples) written there by its name, as a project would hold them."""
    loops = folder / ".loops"
    loops.mkdir(exist_ok=True)
    for other in siblings:
        (loops / f"{loop_name(other)}.yaml").write_text(other)
    path = loops / f"{loop_name(text)}.yaml"
    path.write_text(text)
    return check_file(path)
