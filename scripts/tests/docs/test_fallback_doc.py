"""docs/agents/fallback.md: every row of its tables names a test that exists, in the file
the row (or the paragraph after the table) names."""

from __future__ import annotations

import re

from support.paths import REPO

DOC = REPO / "docs" / "agents" / "fallback.md"
TESTS = REPO / "scripts" / "tests"
# The file a table's tests are in when a row names none: the sentence after the table.
_DEFAULT = re.compile(r"tests named without a file are in (scripts/tests/\S+?\.py)")
_NAMED_FILE = re.compile(r"\(((?:scripts/tests/)?[\w/]+\.py)\)")
_TEST = re.compile(r"`(test_\w+)`")


def _tables() -> list[tuple[list[str], str]]:
    """Each table's rows, with the file its rows' tests are in by default."""
    text = DOC.read_text(encoding="utf-8")
    tables: list[tuple[list[str], str]] = []
    for block in re.split(r"\n\n", text):
        rows = [line for line in block.splitlines() if line.startswith("| ")]
        if rows and "proven by" in rows[0]:
            tables.append((rows[2:], ""))
        found = _DEFAULT.search(block.replace("\n", " "))
        if found and tables and not tables[-1][1]:
            tables[-1] = (tables[-1][0], found.group(1))
    return tables


def _defined(name: str, path: str) -> bool:
    file = REPO / path if path.startswith("scripts/") else TESTS / "e2e" / path
    if not file.is_file():
        file = next(TESTS.rglob(path), file)
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    return re.search(rf"^def {name}\(", text, re.M) is not None


def test_every_row_of_every_table_names_tests_that_exist() -> None:
    tables = _tables()
    assert len(tables) == 2, "the 'cannot run' table and the agents' own retries table"
    for rows, default in tables:
        assert default, "each table says where its tests are"
        for row in rows:
            names = _TEST.findall(row.split("|")[-2])
            assert names, f"a row that names no test: {row}"
            where = _NAMED_FILE.findall(row)
            for name in names:
                assert any(_defined(name, path) for path in [*where, default]), (name, row)
