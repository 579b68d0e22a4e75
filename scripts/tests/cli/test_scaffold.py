"""`ll-loop init` (cli/scaffold.py): `.loops/` with its `.gitignore` and an example, never
overwriting."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.cli.scaffold import (
    EXAMPLE_NAME,
    create_loops_dir,
    init_command,
    init_files,
    write_new,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.facts.layout import GITIGNORE, LOOPS_GITIGNORE
from little_loops.fsm.validate.loopfile import check_document


def test_write_new_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    assert write_new(path, "one") is True
    assert write_new(path, "two") is False
    assert path.read_text() == "one"


def test_the_example_is_a_valid_loop(tmp_path: Path) -> None:
    files = init_files(tmp_path)
    assert files[tmp_path / GITIGNORE] == LOOPS_GITIGNORE
    example = files[tmp_path / f"{EXAMPLE_NAME}.yaml"]
    report = check_document(load_text(example, "example.yaml"))
    assert report.fsm is not None
    assert report.fsm.name == EXAMPLE_NAME


def test_create_loops_dir_says_what_it_wrote(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    assert create_loops_dir(loops) == [loops, loops / GITIGNORE]
    assert create_loops_dir(loops) == []


def test_init_writes_what_is_missing_then_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init_command(tmp_path) == 0
    out = capsys.readouterr().out
    assert f"created {tmp_path / '.loops' / GITIGNORE}\n" in out
    assert "\nNext:\n  ll-loop validate example" in out
    (tmp_path / ".loops" / GITIGNORE).unlink()
    assert init_command(tmp_path) == 0
    assert f"kept {tmp_path / '.loops' / 'example.yaml'} as it was" in capsys.readouterr().out
    assert init_command(tmp_path) == 1
    assert "init overwrites nothing" in capsys.readouterr().err
