"""Adding an agent is one module in fsm/actions/ plus one registry line: nothing else names one.

No module of the package outside `fsm/actions/` (the action kinds' folder) may contain the
name of a coding agent other than Claude Code: codex, gemini, opencode (any case). Docs and
tests may; the kinds' modules and the registry are where the names live. A vendor's model
id that holds the word (`gemini-2.5-pro`, `gpt-5-codex`: joined to it by a `-`) names a
model, not an agent: the one price table (facts/pricing.py) lists them.
"""

from __future__ import annotations

import re
from pathlib import Path

import little_loops

PACKAGE = Path(little_loops.__file__).parent
KINDS_FOLDER = PACKAGE / "fsm" / "actions"
NAMES = re.compile(r"(?<!-)(?:codex|gemini|opencode)(?!-)", re.IGNORECASE)


def named_outside_the_kinds() -> list[str]:
    """`path:line: text` of each line outside fsm/actions/ naming another agent."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if KINDS_FOLDER in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if NAMES.search(line):
                found.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    return found


def test_no_module_outside_the_action_kinds_names_another_agent() -> None:
    assert named_outside_the_kinds() == []


def test_the_check_sees_a_name_in_any_case(tmp_path: Path) -> None:
    assert NAMES.search("the OpenCode CLI")
    assert NAMES.search("GEMINI_API_KEY")
    assert not NAMES.search("claude, a custom agent")
    assert NAMES.search("codex.py")
    assert NAMES.search('kind == "gemini"')


def test_a_model_id_is_not_an_agents_name() -> None:
    for model in ("gemini-2.5-pro", "models/gemini-3-flash", "gpt-5-codex", "gpt-5.1-codex-mini"):
        assert not NAMES.search(model), model
