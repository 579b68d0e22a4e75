"""Every fenced block of the user docs is checked, or listed in UNCHECKED with the reason."""

# Loops are validated as with --strict, YAML fragments inside a loop, commands by the real
# parser; output samples are compared (test_doc_outputs.py) or matched to the code's
# messages (test_doc_messages.py).

from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.doc_blocks import (
    Block,
    all_blocks,
    command_lines,
    is_synopsis,
    kind,
    ll_loop_call,
    synopsis_flags,
)
from support.doc_checks import COMPARED, CUSTOM, MESSAGES, UNCHECKED, keyed
from support.paths import REPO
from support.reuse_docs import check_in_project, uses_reuse_keys
from support.subloop_docs import check_with_siblings, has_subloops

from little_loops.cli import (
    SUBCOMMANDS,
    _misplaced_option,
    _with_run_shorthand,
    build_parser,
    parse_command_line,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.validate.loopfile import FileReport, check_document

BLOCKS = all_blocks()
# Warnings a loop example keeps on purpose: docs/analysis.md lists them as real findings.
EXPECTED_WARNINGS = {
    ("docs/paradigms.md", "paradigm: goal"): "verdicts 'blocked' and 'partial'",
    ("docs/paradigms.md", "paradigm: invariants"): "maintain: true",
    ("docs/paradigms.md", "name: goal-no-type-errors"): "verdicts 'blocked' and 'partial'",
    ("docs/paradigms.md", "name: code-quality-guardian"): "maintain: true",
}


def of_kind(*kinds: str) -> list[Block]:
    return [b for b in BLOCKS if kind(b) in kinds]


def ids(blocks: list[Block]) -> list[str]:
    return [b.where for b in blocks]


def test_every_block_is_checked_or_listed_with_a_reason() -> None:
    unchecked = []
    for block in of_kind("output", "session", "mermaid"):
        if all(keyed(block, table) is None for table in (COMPARED, MESSAGES, CUSTOM, UNCHECKED)):
            unchecked.append(block.where)
    assert unchecked == [], f"{unchecked}: add a check for these blocks, or list them in UNCHECKED"


def test_every_listed_block_still_exists() -> None:
    for table in (COMPARED, MESSAGES, CUSTOM, UNCHECKED, EXPECTED_WARNINGS):
        for doc, prefix in table:
            assert any(b.starts(doc, prefix) for b in BLOCKS), f"no block {doc}: {prefix!r}"


def test_the_kinds_are_all_there() -> None:
    found = {kind(b) for b in BLOCKS}
    assert {"loop", "fragment", "commands", "output", "json", "python"} <= found


def check_loop_block(block: Block, folder: Path) -> FileReport:
    """Validate a loop example; one with sub-loops beside the other loop examples of its doc."""
    if uses_reuse_keys(block.text):  # import:, from:, flow: ... need the doc's other files
        return check_in_project(block, [b for b in BLOCKS if b.doc == block.doc], folder)
    if not has_subloops(block.text):
        return check_document(load_text(block.text, block.where))
    siblings = [b.text for b in of_kind("loop") if b.doc == block.doc]
    return check_with_siblings(block.text, siblings, folder)


@pytest.mark.parametrize("block", of_kind("loop"), ids=ids(of_kind("loop")))
def test_a_loop_example_passes_validate_strict(block: Block, tmp_path: Path) -> None:
    report = check_loop_block(block, tmp_path)
    assert [str(e) for e in report.errors] == []
    expected = keyed(block, EXPECTED_WARNINGS)
    warnings = [str(w) for w in report.warnings]
    if expected is None:
        assert warnings == []
    else:
        assert len(warnings) == 1, warnings
        assert expected in warnings[0]


def _drop_placeholders(value: Any) -> Any:
    """*value* without the `{ ... }` placeholders the docs use for "see below"."""
    if isinstance(value, dict):
        return {k: _drop_placeholders(v) for k, v in value.items() if v != {"...": None}}
    return value


def _targets(states: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for state in states.values():
        for key in ("on_success", "on_failure", "on_error", "on_maintain", "next"):
            if isinstance(state.get(key), str):
                found.add(state[key])
        found |= {v for v in (state.get("route") or {}).values() if isinstance(v, str)}
    return found


def embed(text: str) -> dict[str, Any]:
    """A loop holding the YAML fragment *text*: states, a state's keys, or top-level keys."""
    data = _drop_placeholders(yaml.safe_load(textwrap.dedent(text)))
    if text.startswith(" ") or "states" in data:
        states = data.get("states", data)
    elif "evaluate" in data or "route" in data:
        state = {"action": "true", **data}
        state.setdefault("route", {"_": "done", "_error": "done"})
        states = {"start": state}
    else:
        return {"name": "fragment", "initial": "start", "states": _STUB, **data}
    for target in sorted(_targets(states) - set(states)):
        states[target] = {"terminal": True}
    return {"name": "fragment", "initial": next(iter(states)), "states": states}


_STUB = {"start": {"action": "true", "next": "done"}, "done": {"terminal": True}}
FRAGMENTS = [b for b in of_kind("fragment") if not (keyed(b, UNCHECKED) or keyed(b, CUSTOM))]


@pytest.mark.parametrize("block", FRAGMENTS, ids=ids(FRAGMENTS))
def test_a_yaml_fragment_is_valid_inside_a_loop(block: Block) -> None:
    loop = yaml.safe_dump(embed(block.text), sort_keys=False)
    report = check_document(load_text(loop, block.where))
    assert [str(e) for e in report.errors] == [], loop


def test_a_wrong_fragment_fails() -> None:
    loop = yaml.safe_dump(embed("evaluate:\n  type: output_numeric\n  operatr: le\n"))
    assert check_document(load_text(loop)).errors


@pytest.mark.parametrize("block", of_kind("json"), ids=ids(of_kind("json")))
def test_a_json_sample_is_json(block: Block) -> None:
    assert isinstance(json.loads(block.text), dict)


def _subparsers() -> dict[str, Any]:
    parser = build_parser()
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def check_ll_loop(argv: list[str]) -> None:
    """Parse `ll-loop ARGV` as main_loop does; a usage error fails."""
    args = _with_run_shorthand(argv)
    assert _misplaced_option(args) is None, argv
    assert args, argv
    assert args[0] in SUBCOMMANDS, f"ll-loop {argv}: no such command"
    try:
        parse_command_line(build_parser(args[0]), args)
    except SystemExit as exc:
        raise AssertionError(f"ll-loop {' '.join(argv)}: usage error") from exc


def check_synopsis(line: str) -> None:
    """A synopsis names a real command and only options that command has."""
    words = line.split()
    assert words[0] == "ll-loop", line
    command = words[1] if words[1] in SUBCOMMANDS else "run"
    known = {f for a in _subparsers()[command]._actions for f in a.option_strings}
    unknown = [f for f in synopsis_flags(line) if f not in known]
    assert unknown == [], f"{line}: options ll-loop {command} does not have"


def dev_commands() -> set[str]:
    return set(re.findall(r"^    ([a-z-]+)\)", (REPO / "scripts" / "dev").read_text(), re.M))


def check_line(line: str) -> None:
    if line.startswith("scripts/dev "):
        assert line.split()[1] in dev_commands(), line
        return
    call = ll_loop_call(line)
    assert call is not None, line
    if is_synopsis(call):
        check_synopsis(call)
    else:
        check_ll_loop(shlex.split(call)[1:])


COMMANDS = of_kind("commands", "session")


@pytest.mark.parametrize("block", COMMANDS, ids=ids(COMMANDS))
def test_the_commands_exist(block: Block) -> None:
    lines = command_lines(block.text)
    if kind(block) == "session":
        lines = lines[:1]
    for line in lines:
        check_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "ll-loop run fix-types --dry-rn",
        "ll-loop vaildate --all x",
        "ll-loop graph NAME [--formats dot]",
        "scripts/dev tset",
        "ll-loop list --running x",
    ],
)
def test_a_wrong_command_fails(line: str) -> None:
    with pytest.raises(AssertionError):
        check_line(line)
