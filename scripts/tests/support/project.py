"""A loop project on disk for CLI tests: `.loops/` files in, `ll-loop` results out."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from little_loops.cli import main_loop


@dataclass
class RunResult:
    """What one `ll-loop ...` call returned and printed."""

    code: int
    out: str
    err: str


class LoopProject:
    """A project folder (the current directory during the test) with a `.loops/` folder."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.loops = root / ".loops"
        self._capsys = capsys

    def write(self, name: str, text: str) -> Path:
        """Write `.loops/NAME.yaml` (NAME may carry its own suffix) from dedented *text*."""
        path = self.loops / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *argv: str) -> RunResult:
        """Run `ll-loop ARGV...` in-process and capture its output."""
        self._capsys.readouterr()
        code = main_loop(list(argv))
        captured = self._capsys.readouterr()
        return RunResult(code, captured.out, captured.err)
