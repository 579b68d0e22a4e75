"""Which kind of `.loops/` file a file is, and which files a whole project holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.definition.reading.loop_files import FolderNames
from little_loops.fsm.validate.project_files import (
    FILE_KINDS,
    check_project_file,
    kind_of_file,
    project_files,
)


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("agents.yaml", "agents: {}\n", "agents"),
        ("lib/agents.yaml", "name: agents\n", "loop"),  # only .loops/agents.yaml is the file
        ("lib/checks.yaml", "fragments: {a: {action: x}}\n", "fragment library"),
        ("lib/more.yaml", "import: [lib/checks.yaml]\n", "fragment library"),
        ("lib/typo.yaml", "fragmnts: {}\n", "fragment library"),
        ("base.yaml", "name: base\nimport: [lib/checks.yaml]\nstates: {}\n", "loop"),
        ("child.yaml", "from: base\nfragments: {}\n", "loop"),
        ("broken.yaml", "not: [yaml\n", "loop"),
        ("plain.yaml", "initial: a\n", "loop"),
    ],
)
def test_the_kind_of_a_file(tmp_path: Path, name: str, text: str, kind: str) -> None:
    path = tmp_path / ".loops" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert kind_of_file(path) is FILE_KINDS[kind]


def test_a_library_with_a_fragment_that_is_fine_is_valid(tmp_path: Path) -> None:
    path = tmp_path / ".loops" / "lib" / "checks.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("fragments:\n  a:\n    description: x\n    parameters: {}\n    action: x\n")
    report = check_project_file(path, FolderNames())
    assert report.valid, report.errors


def test_project_files_leave_out_run_files_dot_files_and_other_suffixes(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    for name in ("a.yaml", "b.yml", "c.fsm.yaml", "sub/d.yaml", ".e.yaml", "f.json"):
        (loops / name).parent.mkdir(parents=True, exist_ok=True)
        (loops / name).write_text("x: 1\n")
    for name in (".running/g.yaml", ".history/h/i.yaml", ".worktrees/w/.loops/j.yaml"):
        (loops / name).parent.mkdir(parents=True, exist_ok=True)
        (loops / name).write_text("x: 1\n")
    found = [str(p.relative_to(loops)) for p in project_files(loops)]
    assert found == ["a.yaml", "b.yml", "c.fsm.yaml", "sub/d.yaml"]
