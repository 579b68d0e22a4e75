"""The files of a doc's reuse examples: each YAML block that opens with `# .loops/PATH`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.loopdoc import uses_reuse
from little_loops.fsm.validate.loopfile import FileReport, check_file
from support.doc_blocks import Block

FILE_LINE = re.compile(r"^# (\.loops/\S+\.yaml)\n")


def file_of(block: Block) -> str | None:
    """The project path a block stands for (`.loops/lib/checks.yaml`), if it names one."""
    found = FILE_LINE.match(block.text)
    return found.group(1) if found else None


def uses_reuse_keys(text: str) -> bool:
    return uses_reuse(load_text(text).data)


def write_files(blocks: Iterable[Block], root: Path) -> dict[str, Path]:
    """Write each block that names its file into the project *root*; their paths by name."""
    written: dict[str, Path] = {}
    for block in blocks:
        name = file_of(block)
        if name is not None:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)
            written[name] = path
    return written


def check_in_project(block: Block, blocks: Iterable[Block], root: Path) -> FileReport:
    """Validate *block* as its file, with the doc's other named files beside it."""
    written = write_files([*blocks, block], root)
    name = file_of(block)
    assert name is not None, f"{block.where}: a reuse example opens with # .loops/NAME.yaml"
    return check_file(written[name])
