"""The loops shipped with ll-loop (its library): their names, their files, what each one does.

Each is a `NAME.yaml` in this folder, installed with the package. A file opens with the
editor modeline, then a comment whose first line says in one sentence what the loop does.
"""

from __future__ import annotations

from pathlib import Path

LIBRARY_DIR = Path(__file__).parent
LIBRARY_SUFFIX = ".yaml"
# `ll-loop run library:NAME` (and validate, compile, graph ...) uses a shipped loop in place.
LIBRARY_PREFIX = "library:"
# The first line of a loop file that editors read to find the JSON Schema of loop files.
MODELINE_PREFIX = "# yaml-language-server: $schema="


def library_loops() -> list[str]:
    """The names of the shipped loops, sorted."""
    return sorted(
        path.name[: -len(LIBRARY_SUFFIX)]
        for path in LIBRARY_DIR.iterdir()
        if path.name.endswith(LIBRARY_SUFFIX) and path.is_file()
    )


def library_loop_path(name: str) -> Path:
    """The file of the shipped loop *name*; LoopDefinitionError naming the others if none."""
    if name in library_loops():
        return LIBRARY_DIR / f"{name}{LIBRARY_SUFFIX}"
    from little_loops.fsm.facts.errors import LoopDefinitionError
    from little_loops.fsm.facts.suggest import did_you_mean

    names = library_loops()
    raise LoopDefinitionError(
        f"no shipped loop named '{name}'{did_you_mean(name, names)}; "
        f"shipped: {', '.join(names)} (ll-loop new --list)"
    )


def library_summary(name: str) -> str:
    """What the shipped loop *name* does: the first comment line after its modeline."""
    for line in library_loop_path(name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and not line.startswith(MODELINE_PREFIX):
            return line[2:].strip()
    return ""
