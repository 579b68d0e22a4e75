"""docs/cli.md is checked against the real parser: a flag or subcommand missing from the
reference, or documented but gone from the parser, fails here."""

from __future__ import annotations

import argparse
import re

import pytest
from support.paths import REPO

from little_loops.cli import SUBCOMMANDS, build_parser

DOC = REPO / "docs" / "cli.md"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("ll-loop has no subcommands")


def _section(text: str, command: str) -> str:
    """The `## ll-loop COMMAND ...` section of the reference."""
    match = re.search(rf"^## `ll-loop {command}\b.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"docs/cli.md has no section '## `ll-loop {command} ...`'"
    return match.group(0)


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_flag_of_every_subcommand_is_documented(command: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = _section(text, command)
    parser = _subparsers()[command]
    for action in parser._actions:
        for flag in action.option_strings:
            if flag in ("-h", "--help"):
                continue
            assert f"`{flag}" in section or f"{flag}`" in section or f" {flag} " in section, (
                f"docs/cli.md, section ll-loop {command}: flag {flag} is not documented"
            )


def test_documented_flags_exist() -> None:
    text = DOC.read_text(encoding="utf-8")
    parsers = _subparsers()
    known = {flag for p in parsers.values() for a in p._actions for flag in a.option_strings}
    known |= {"--version", "--help"}
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", text))
    assert documented - known == set(), "docs/cli.md documents flags the parser does not have"


def test_every_subcommand_has_a_section() -> None:
    text = DOC.read_text(encoding="utf-8")
    for command in SUBCOMMANDS:
        _section(text, command)
