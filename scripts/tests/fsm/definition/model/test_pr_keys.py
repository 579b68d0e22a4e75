"""The keys of `pr:` are rows (key_row.Key), declared once: their checks, defaults and docs;
the key tables, key docs, schema and model read the rows; the docs' table is made of them, and
a bad `pr:` block is refused with the key it names."""

from __future__ import annotations

import re

import pytest
from support.paths import REPO

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import key_rows
from little_loops.fsm.definition.model.pr_block import PullRequestConfig
from little_loops.fsm.definition.model.pr_keys import (
    BLOCK_KEYS,
    KEYS,
    PR_DOCS,
    PR_KEY,
    REQUIRED_PR_KEYS,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.validate import json_schema, key_docs
from little_loops.fsm.validate.loopfile import check_document

LOOP = """\
name: ship
initial: open
states:
  open:
{state}
    on_success: done
  done:
    terminal: true
"""


def _errors(state: str) -> list[str]:
    report = check_document(load_text(LOOP.format(state=state), "ship.yaml"), "ship.yaml")
    return [e.message for e in report.errors]


def _table_rows() -> list[str]:
    text = (REPO / "docs" / "loop-files.md").read_text()
    found = re.search(r"<!-- pr-keys -->\n(?:.*\n){2}((?:\|.*\n)+)", text)
    assert found is not None, "docs/loop-files.md has no <!-- pr-keys --> table"
    return found.group(1).splitlines()


def test_the_state_key_is_a_row_the_tables_docs_and_schema_read() -> None:
    (row,) = KEYS
    assert row in key_rows.ROWS
    assert row.name == PR_KEY
    assert row.where == ("state",)
    assert key_tables.STATE_KEYS[PR_KEY] is row.check
    assert key_docs.STATE_KEYS[PR_KEY] == row.doc
    schema = json_schema.build()["$defs"]
    assert schema["stateConfig"]["properties"][PR_KEY]["description"] == row.doc
    block = schema["pullRequestConfig"]
    assert block["description"] == row.doc
    assert block["required"] == ["title"]
    assert {key: value["description"] for key, value in block["properties"].items()} == {
        r.name: r.doc for r in BLOCK_KEYS
    }


def test_the_docs_table_is_the_keys_with_their_defaults_and_docs() -> None:
    defaults = PullRequestConfig()
    expected = []
    for key, doc in PR_DOCS.items():
        value = getattr(defaults, key)
        if key in REQUIRED_PR_KEYS:
            shown = "required"
        elif value is None:
            shown = "none"
        else:
            shown = f"`{value:g}`" if isinstance(value, float) else f"`{value}`"
        expected.append(f"| `{key}` | {shown} | {doc} |")
    assert _table_rows() == expected


def test_a_good_block_is_read_into_its_dataclass() -> None:
    assert _errors("    pr:\n      title: Fix\n      merge: rebase\n      checks: required") == []
    config = PullRequestConfig.from_dict({"title": "Fix", "merge": "rebase"})
    assert (config.title, config.merge, config.forge, config.remote) == (
        "Fix",
        "rebase",
        "gh",
        "origin",
    )


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("    pr: {merge: squash}", "missing required key 'title'"),
        ("    pr: {title: t, merge: fast}", "expected one of squash, merge, rebase, none"),
        ("    pr: {title: t, forge: glab}", "expected one of gh, got 'glab'"),
        ("    pr: {title: t, checks: some}", "expected one of all, required"),
        ("    pr: {title: t, max_wait: 0}", "expected a number > 0, got 0"),
        ("    pr: {title: t, colour: red}", "unknown key (allowed: title, body,"),
        ("    pr: {title: t}\n    action: echo hi", "runs no action: no `action` with it"),
        ("    pr: {title: t}\n    next: done", "runs no action: no `next` with it"),
    ],
)
def test_a_bad_block_is_refused_naming_the_problem(state: str, message: str) -> None:
    errors = _errors(state)
    assert any(message in error for error in errors), errors
