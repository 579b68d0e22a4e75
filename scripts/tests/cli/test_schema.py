"""`ll-loop schema` (cli/schema.py): the installed JSON Schema's path, or its text."""

from __future__ import annotations

import argparse
import json

import pytest

from little_loops.cli.schema import register, schema_command
from little_loops.fsm.validate.json_schema import SCHEMA_FILE


def test_the_path_or_the_content(capsys: pytest.CaptureFixture[str]) -> None:
    assert schema_command() == 0
    assert capsys.readouterr().out == f"{SCHEMA_FILE}\n"
    assert schema_command(content=True) == 0
    text = capsys.readouterr().out
    assert text == SCHEMA_FILE.read_text(encoding="utf-8")
    assert json.loads(text)["title"] == "ll-loop loop file"


def test_the_arguments() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"), "where the schema is")
    assert parser.parse_args(["schema"]).content is False
    assert parser.parse_args(["schema", "--content"]).content is True
