"""commands/create_loop.md (the /ll:create-loop Claude Code command) and its plugin manifest.

The command is text for Claude, so these tests check what makes it work: the frontmatter
Claude Code reads, loop examples that really validate, a key reference that matches the
compilers, and no text that Claude Code's own substitutions would mangle.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from support.paths import REPO

from little_loops.fsm.definition.checks.key_tables import LLM_KEYS
from little_loops.fsm.definition.model.typed import OPERATORS, StateConfig, model_keys
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES
from little_loops.fsm.paradigms.convergence import CONVERGENCE_KEYS
from little_loops.fsm.paradigms.goal import GOAL_KEYS
from little_loops.fsm.paradigms.imperative import IMPERATIVE_KEYS, UNTIL_KEYS
from little_loops.fsm.paradigms.invariants import CONSTRAINT_KEYS, INVARIANTS_KEYS
from little_loops.fsm.paradigms.registry import PARADIGMS, compile_paradigm
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS
from little_loops.fsm.validate.loopfile import check_document
from little_loops.loops import library_loop_path, library_loops

COMMAND = REPO / "commands" / "create_loop.md"
PLUGIN = REPO / ".claude-plugin" / "plugin.json"
MARKETPLACE = REPO / ".claude-plugin" / "marketplace.json"
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def split_command() -> tuple[dict[str, Any], str]:
    """The frontmatter mapping and the body, split the way Claude Code splits them."""
    text = COMMAND.read_text()
    assert text.startswith("---\n")
    head, sep, body = text[4:].partition("\n---\n")
    assert sep, "the frontmatter has no closing ---"
    meta = yaml.safe_load(head)
    assert isinstance(meta, dict)
    return meta, body


def yaml_blocks() -> list[str]:
    return YAML_BLOCK.findall(split_command()[1])


def test_frontmatter_has_the_keys_claude_code_reads() -> None:
    meta, _ = split_command()
    assert set(meta) == {"description", "argument-hint", "allowed-tools"}
    assert isinstance(meta["description"], str)
    # Claude Code's plugin guide asks for a /help description under 60 characters.
    assert len(meta["description"]) < 60
    assert isinstance(meta["argument-hint"], str)
    tools = [t.strip() for t in meta["allowed-tools"].split(",")]
    for tool in (
        "AskUserQuestion",
        "Read",
        "Write",
        "Bash(ll-loop validate:*)",
        "Bash(ll-loop compile:*)",
    ):
        assert tool in tools


def test_the_command_never_pre_approves_running_a_loop() -> None:
    meta, _ = split_command()
    assert "ll-loop run" not in meta["allowed-tools"]
    assert "Bash(ll-loop:*)" not in meta["allowed-tools"]


def test_the_body_uses_the_arguments_and_says_what_matters() -> None:
    _, body = split_command()
    for needle in (
        "$ARGUMENTS",
        "AskUserQuestion",
        "multiSelect: true",
        ".loops/",
        "ll-loop validate",
        "ll-loop run <name> --dry-run",
        "--dangerously-skip-permissions",
        "Never overwrite a file without asking",
    ):
        assert needle in body, needle


def test_nothing_in_the_body_is_mangled_by_claude_code_substitution() -> None:
    _, body = split_command()
    # `$0`, `$1`, ... are replaced by positional arguments.
    assert re.findall(r"\$\d", body) == []
    # "!`cmd`" and "```!" blocks are run as shell commands when the command loads.
    assert re.findall(r"(?:^|\s)!`", body) == []
    assert "```!" not in body


def test_there_is_an_example_for_every_paradigm() -> None:
    paradigms = [yaml.safe_load(block).get("paradigm") for block in yaml_blocks()]
    assert sorted(paradigms) == sorted(PARADIGMS)


@pytest.mark.parametrize("index", range(len(YAML_BLOCK.findall(COMMAND.read_text()))))
def test_every_yaml_example_is_a_valid_loop_without_warnings(index: int) -> None:
    block = yaml_blocks()[index]
    report = check_document(load_text(block, f"create_loop.md yaml block {index + 1}"))
    assert [str(e) for e in report.errors] == []
    assert [str(w) for w in report.warnings] == []
    assert report.fsm is not None


@pytest.mark.parametrize(
    "keys",
    [
        GOAL_KEYS,
        CONVERGENCE_KEYS,
        INVARIANTS_KEYS,
        CONSTRAINT_KEYS,
        IMPERATIVE_KEYS,
        UNTIL_KEYS,
        LOOP_SETTINGS,
        tuple(LLM_KEYS),
        tuple(model_keys(StateConfig)),
        EVALUATOR_TYPES,
    ],
    ids=[
        "goal",
        "convergence",
        "invariants",
        "constraint",
        "imperative",
        "until",
        "settings",
        "llm",
        "state",
        "evaluators",
    ],
)
def test_the_reference_names_every_key_the_compilers_accept(keys: tuple[str, ...]) -> None:
    _, body = split_command()
    missing = [key for key in keys if f"`{key}`" not in body]
    assert missing == []


def test_the_reference_lists_the_operators() -> None:
    _, body = split_command()
    assert f"`{' '.join(OPERATORS)}`" in body


def test_plugin_manifest_names_the_plugin_ll_and_maps_create_loop() -> None:
    manifest = json.loads(PLUGIN.read_text())
    assert manifest["name"] == "ll"
    # Without this mapping the command would be /ll:create_loop, after the file name.
    source = manifest["commands"]["create-loop"]["source"]
    assert (REPO / source).resolve() == COMMAND.resolve()


def test_marketplace_offers_the_plugin_from_this_folder() -> None:
    market = json.loads(MARKETPLACE.read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == "ll"
    assert (REPO / entry["source"]).resolve() == REPO.resolve()
    assert entry["version"] == json.loads(PLUGIN.read_text())["version"]


def test_the_command_offers_every_library_loop_that_calls_claude() -> None:
    # Step 1 lists the library so the closest loop is offered before a new one is written.
    text = COMMAND.read_text()
    listed = set(re.findall(r"^   \| `([a-z-]+)` \|", text, re.MULTILINE))
    calls_claude = {
        name
        for name in library_loops()
        if any(
            state.is_prompt()
            for state in compile_paradigm(load_file(library_loop_path(name)).data).states.values()
        )
    }
    assert listed == calls_claude
    assert "Use library:NAME (Recommended)" in text
