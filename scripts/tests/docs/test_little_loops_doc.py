"""docs/little-loops.md: its table of the two spellings is the one `migrate` reads."""

from __future__ import annotations

import re

from support.paths import REPO

from little_loops.fsm.definition.model.spellings import ROUTE, SPELLINGS, STATE

DOC = REPO / "docs" / "little-loops.md"
WHERE = {STATE: "a state", ROUTE: "a `route:` table"}


def spelling_rows() -> list[str]:
    """The table's rows, from spellings.py: a key whose value changes, once per value."""
    rows = []
    for spelling in SPELLINGS:
        where = WHERE[spelling.level]
        if not spelling.values:
            rows.append(f"| {where} | `{spelling.theirs}:` | `{spelling.ours}:` |")
            continue
        for theirs, ours in spelling.values.items():
            shown = str(theirs).lower() if isinstance(theirs, bool) else theirs
            rows.append(f"| {where} | `{spelling.theirs}: {shown}` | `{spelling.ours}: {ours}` |")
    return rows


def test_the_table_of_spellings_is_spellings_py() -> None:
    block = re.search(r"<!-- spellings -->\n(.*?)<!-- /spellings -->", DOC.read_text(), re.S)
    assert block is not None
    rows = block.group(1).splitlines()[2:]  # after the header and its rule
    assert rows == spelling_rows()


def test_the_table_of_meanings_has_the_row_of_each_key_validate_notes() -> None:
    # The row is the key's Meaning's (validate/meanings.py): what the note, `--compat` and
    # the docs say of a key is said there once.
    from little_loops.fsm.validate.meanings import MEANINGS

    block = re.search(r"<!-- meanings -->\n(.*?)<!-- /meanings -->", DOC.read_text(), re.S)
    assert block is not None
    rows = block.group(1).splitlines()[2:]
    for meaning in MEANINGS:
        assert meaning.table_row() in rows, meaning.key
