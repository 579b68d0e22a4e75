"""The loop-file keys as users see them are what they were before the key-table rebuild."""

from __future__ import annotations

import json

from fsm.definition.user_surface import RECORD, differences, surface


def test_validate_migrate_and_the_schema_say_what_they_said_on_every_loop_of_the_repository() -> (
    None
):
    before = json.loads(RECORD.read_text(encoding="utf-8"))
    now = surface()
    compared = now["loops"].keys() & before["loops"].keys()  # type: ignore[attr-defined]
    assert len(compared) >= 350
    assert differences(before, now) == []
