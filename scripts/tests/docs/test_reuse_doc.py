"""docs/reuse.md: its files written into a project, run through the real `ll-loop`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.doc_blocks import all_blocks
from support.llproc import ll_loop
from support.reuse_docs import file_of, write_files

DOC = "docs/reuse.md"
BLOCKS = [b for b in all_blocks() if b.doc == DOC]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = write_files(BLOCKS, tmp_path)
    assert set(files) >= {".loops/lib/checks.yaml", ".loops/lint.yaml", ".loops/greet-moon.yaml"}
    return tmp_path


def walk(root: Path, *args: str) -> list[str]:
    result = ll_loop(root, "simulate", "--json", *args)
    assert result.stdout, result.stderr
    return [step["state"] for step in json.loads(result.stdout)["steps"]]


def test_every_file_of_the_doc_validates(root: Path) -> None:
    loops = [file_of(b) for b in BLOCKS if file_of(b) and "/lib/" not in str(file_of(b))]
    result = ll_loop(root, "validate", "--strict", *map(str, loops))
    assert result.returncode == 0, result.stdout


def test_the_fragments_example_counts_its_passes(root: Path) -> None:
    assert walk(
        root, "lint", "--verdicts", "ruff=failure,failure,success", "--default", "success"
    ) == [
        "ruff",
        "again",
        "ruff",
        "again",
        "ruff",
        "done",
    ]
    compiled = ll_loop(root, "compile", "lint").stdout
    assert "echo $n > .count-lint; echo $n\n" in compiled
    assert "      target: 3\n" in compiled


def test_the_base_loop_example_says_hello_moon(root: Path) -> None:
    result = ll_loop(root, "run", "greet-moon")
    assert result.returncode == 0, result.stderr
    assert 'echo "hello moon"' in result.stdout + result.stderr
    assert walk(root, "greet-moon", "--default", "failure") == ["say", "sad"]


def test_the_flow_example_walks_as_the_doc_says(root: Path) -> None:
    # the doc: simulate ship --verdicts check=failure,success walks build, check, fix, ...
    assert walk(root, "ship", "--verdicts", "check=failure,success") == [
        "build",
        "check",
        "fix",
        "check",
        "publish",
    ]


def test_the_message_about_a_fragment_names_the_library(root: Path) -> None:
    shown = next(b.text for b in BLOCKS if b.text.startswith(".loops/lib/checks.yaml:7:"))
    lib = root / ".loops" / "lib" / "checks.yaml"
    lib.write_text(lib.read_text().replace("type: exit_code", "type: exit_cod"))
    result = ll_loop(root, "validate", "-q", "lint")
    assert result.stdout == shown
