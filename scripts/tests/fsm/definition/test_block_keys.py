"""The keys of the settings blocks (`stall:`, `llm:`, `archive:`, `notify:`, `retry:`,
`rate_limit:`) are rows (key_row.Key) whose place is the block: each the field of its
dataclass, with that field's default; the key tables, key docs and schema read them, and the
user docs' table of each block lists them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.paths import REPO

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import retry_keys as retry_keys
from little_loops.fsm.definition.model.blocks import (
    ArchiveConfig,
    RateLimitConfig,
    model_keys,
)
from little_loops.fsm.definition.model.key_row import Key
from little_loops.fsm.definition.model.policy_blocks import NotifyConfig, RetryConfig, StallConfig
from little_loops.fsm.evaluators.config import LLMConfig
from little_loops.fsm.validate import json_schema, key_docs

# Each block: its rows, the dataclass it is read into, its key docs and its schema's name.
BLOCKS: list[tuple[str, tuple[Key, ...], type, dict[str, str], str]] = [
    ("stall", key_tables.STALL_ROWS, StallConfig, key_docs.STALL_KEYS, "stallConfig"),
    ("llm", key_tables.LLM_ROWS, LLMConfig, key_docs.LLM_KEYS, "llmConfig"),
    ("archive", key_tables.ARCHIVE_ROWS, ArchiveConfig, key_docs.ARCHIVE_KEYS, "archiveConfig"),
    ("notify", key_tables.NOTIFY_ROWS, NotifyConfig, key_docs.NOTIFY_KEYS, "notifyConfig"),
    ("retry", retry_keys.RETRY_ROWS, RetryConfig, key_docs.RETRY_KEYS, "retryConfig"),
    (
        "rate_limit",
        retry_keys.RATE_LIMIT_ROWS,
        RateLimitConfig,
        key_docs.RATE_LIMIT_KEYS,
        "rateLimitConfig",
    ),
]
IDS = [block for block, *_ in BLOCKS]


@pytest.mark.parametrize(("block", "rows", "cls", "docs", "schema"), BLOCKS, ids=IDS)
def test_each_key_is_a_row_of_its_block_with_its_dataclass_field_s_default(
    block: str, rows: tuple[Key, ...], cls: type, docs: dict[str, str], schema: str
) -> None:
    assert [row.name for row in rows] == model_keys(cls)
    assert all(row.where == (block,) for row in rows)
    assert not any(row.required for row in rows)  # a key of a block may be left out
    defaults: Any = cls()
    assert {row.name: row.default for row in rows} == {
        row.name: getattr(defaults, row.name) for row in rows
    }


@pytest.mark.parametrize(("block", "rows", "cls", "docs", "schema"), BLOCKS, ids=IDS)
def test_the_key_checks_docs_and_schema_of_a_block_are_its_rows(
    block: str, rows: tuple[Key, ...], cls: type, docs: dict[str, str], schema: str
) -> None:
    settings = dict(key_tables._SETTINGS)
    assert settings[block] is not None
    assert list(settings[block].items()) == [(row.name, row.check) for row in rows]
    assert list(docs.items()) == [(row.name, row.doc) for row in rows]
    described = json_schema.build()["$defs"][schema]["properties"]
    assert {key: value["description"] for key, value in described.items()} == docs
    for row in rows:
        assert {k: v for k, v in described[row.name].items() if k != "description"} == dict(
            row.check.json
        )


def test_a_key_of_the_loop_s_stall_alone_is_a_stall_row() -> None:
    names = [row.name for row in key_tables.STALL_ROWS]
    assert key_tables.LOOP_ONLY_STALL_KEYS == ("no_change_passes",)
    assert set(key_tables.LOOP_ONLY_STALL_KEYS) <= set(names)


# Where docs/loop-files.md's table of each block's keys follows.
DOC_TABLES = {
    "llm": "`llm`:\n",
    "archive": "`archive` (see",
    "notify": "`notify` (details",
    "stall": "### Stall breakers\n",
    "retry": "A state with `retry:`",
    "rate_limit": "### Claude's limits: `rate_limit`\n",
}


def _doc_table(after: str) -> list[list[str]]:
    """The cells of each row of the first table after *after* in docs/loop-files.md."""
    text = (REPO / "docs" / "loop-files.md").read_text()
    start = text.index(after)
    found = re.search(r"^\| key \|.*\n\| --- .*\n((?:\|.*\n)+)", text[start:], re.M)
    assert found is not None, after
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in found.group(1).splitlines()
    ]


def _shown(value: object) -> set[str]:
    """How the docs may write a default: as Python or YAML writes it."""
    if isinstance(value, bool):
        return {str(value).lower()}
    if isinstance(value, list):
        return {f"[{', '.join(f'{v:g}' if isinstance(v, float | int) else str(v) for v in value)}]"}
    if isinstance(value, float):
        return {f"{value:g}", str(value)}
    return {str(value)}


@pytest.mark.parametrize(("block", "rows", "cls", "docs", "schema"), BLOCKS, ids=IDS)
def test_the_user_docs_table_of_a_block_lists_its_rows_with_their_defaults(
    block: str, rows: tuple[Key, ...], cls: type, docs: dict[str, str], schema: str
) -> None:
    table = _doc_table(DOC_TABLES[block])
    assert [cells[0] for cells in table] == [f"`{row.name}`" for row in rows]
    if len(table[0]) < 4:  # the stall table has no default column: none has one
        assert all(row.default is None for row in rows)
        return
    for cells, row in zip(table, rows, strict=True):
        if row.default is not None:
            assert any(f"`{shown}`" in cells[2] for shown in _shown(row.default)), (row, cells)
