"""Every ```python example in README.md and docs/ runs, in a copy of this project's .loops/
with the shipped loops added (as `ll-loop new NAME --from NAME` writes them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO, TESTS
from support.slowdown import scaled

from little_loops.cli.new import loop_text
from little_loops.loops import library_loops

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCKS = [
    (f"{doc.name}#{index}", code)
    for doc in DOCS
    for index, code in enumerate(
        re.findall(r"^```python\n(.*?)^```$", doc.read_text(), re.M | re.S)
    )
]


def test_there_are_python_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[w for w, _ in BLOCKS])
def test_the_example_runs(where: str, code: str, tmp_path: Path) -> None:
    shutil.copytree(REPO / ".loops", tmp_path / ".loops", ignore=shutil.ignore_patterns(".running"))
    for name in library_loops():
        (tmp_path / ".loops" / f"{name}.yaml").write_text(loop_text(name, name))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, f"{where}:\n{done.stderr}"
