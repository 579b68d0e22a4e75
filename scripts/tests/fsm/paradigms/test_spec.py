"""The spec reader: typed fields, and errors that name paradigm > path > field."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.errors import ParadigmSpecError
from little_loops.fsm.paradigms.spec import SpecReader


def test_an_error_inside_a_list_item_carries_its_key_path() -> None:
    reader = SpecReader("paradigm 'x'", {"items": [{"fix": 1}]})
    item = reader.item("items", 0, reader.items("items")[0])
    with pytest.raises(ParadigmSpecError) as exc:
        item.string("fix")
    detail = "expected a string, got integer (quote it as written)"
    assert str(exc.value) == f"paradigm 'x' > items[0] > fix: {detail}"
    assert exc.value.key_path == ("items", 0, "fix")
    assert exc.value.detail == detail


def test_strings_rejects_a_blank_item() -> None:
    reader = SpecReader("paradigm 'x'", {"steps": ["a", "  "]})
    with pytest.raises(ParadigmSpecError, match=r"^paradigm 'x' > steps\[1\]: must not be empty$"):
        reader.strings("steps")
