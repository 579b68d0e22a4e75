"""docs/agents/gemini.md says what the Gemini kind does: its options table is GEMINI_OPTIONS,
its loops pass `validate --strict`, its commands and settings are the ones the code uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.fake_gemini import gemini_home
from support.paths import REPO

from little_loops.fsm.actions.gemini import (
    APPROVAL_MODES,
    GEMINI_OPTIONS,
    MIN_VERSION,
    SPEC,
    UNTRUSTED_ERROR,
    argv,
    gemini_flags,
)
from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.validate.loopfile import check_document

DOC = REPO / "docs" / "agents" / "gemini.md"
TEXT = DOC.read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
BLOCKS = [(m.group(1), m.group(2)) for m in FENCE.finditer(TEXT)]


def blocks(kind: str) -> list[str]:
    return [text for found, text in BLOCKS if found == kind]


def rows() -> dict[str, list[str]]:
    match = re.search(r"<!-- gemini-options -->\n(.*?)\n<!-- /gemini-options -->", TEXT, re.S)
    assert match is not None, "no <!-- gemini-options --> table"
    out = {}
    for line in match.group(1).splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        out[cells[0].strip("`")] = cells[1:]
    return out


def test_every_block_is_one_of_the_checked_kinds() -> None:
    assert sorted({kind for kind, _ in BLOCKS}) == ["bash", "json", "text", "yaml"]


def test_the_options_table_is_the_kinds_table_with_its_flags_and_choices() -> None:
    table = rows()
    assert list(table) == list(GEMINI_OPTIONS)
    for name, option in GEMINI_OPTIONS.items():
        if name != "sandbox":  # a flag without a value: gemini_flags writes it itself
            assert table[name][0] == (f"`{option.flag}`" if option.flag else "(as written)")
    assert gemini_flags({"sandbox": True})[-1] == table["sandbox"][0].strip("`")
    assert table["approval_mode"][1] == ", ".join(f"`{mode}`" for mode in APPROVAL_MODES)


@pytest.mark.parametrize("loop", blocks("yaml"))
def test_each_loop_passes_validate_strict(loop: str) -> None:
    report = check_document(load_text(loop, str(DOC)))
    assert [str(e) for e in report.errors] == []
    assert [str(w) for w in report.warnings] == []


def test_the_loops_states_run_gemini_with_their_options() -> None:
    from little_loops.fsm.definition.model.typed import FSMLoop

    loop = FSMLoop.from_dict(load_text(blocks("yaml")[1], str(DOC)).data)
    assert loop.kind_for(loop.states["review"]) is SPEC


def test_the_command_line_shown_is_the_one_run() -> None:
    (shown,) = blocks("text")
    plain = shown.strip().replace(" [options]", "").replace(" [--resume ID]", "")
    assert plain.split(" ") == argv(ActionRequest("PROMPT", 1, "gemini"), ["gemini"])


def test_the_install_command_is_the_hint_and_the_version_is_the_minimum() -> None:
    (install,) = blocks("bash")
    assert SPEC.install_hint.endswith(install.strip())
    assert "ll-loop needs " + ".".join(map(str, MIN_VERSION)) + " or newer" in TEXT


def test_the_settings_shown_are_those_the_tests_give_the_cli(tmp_path: Path) -> None:
    (shown,) = blocks("json")
    written = json.loads((gemini_home(tmp_path) / ".gemini" / "settings.json").read_text())
    assert json.loads(shown)["security"] == written["security"]


def test_the_untrusted_folder_error_is_the_one_given() -> None:
    assert UNTRUSTED_ERROR.startswith("gemini does not trust the loop's folder: ")
    assert "`gemini does not trust the loop's folder: ...`" in TEXT
    assert "--skip-trust" in UNTRUSTED_ERROR
    assert "--skip-trust" not in argv(ActionRequest("x", 1, "gemini"), ["gemini"])


def test_a_gemini_judge_is_refused_as_the_doc_says() -> None:
    loop = blocks("yaml")[0].replace("agent: gemini\n", "agent: gemini\nllm: {backend: gemini}\n")
    errors = [str(e) for e in check_document(load_text(loop, str(DOC))).errors]
    assert errors == [f"loop 'fix-calc' > llm > backend: gemini cannot judge: {SPEC.no_judge}"]
    assert "`gemini cannot judge: ...`" in TEXT
