"""A settings dataclass written back as the fields that differ from their defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from little_loops.fsm.values.fields import non_default_items


@dataclass
class _Settings:
    name: str = "x"
    size: int = 3
    tags: list[str] = field(default_factory=list)


def test_only_the_fields_that_differ_from_their_default() -> None:
    assert non_default_items(_Settings()) == {}
    assert non_default_items(_Settings(size=4)) == {"size": 4}
    assert non_default_items(_Settings(name="y", tags=["a"])) == {"name": "y", "tags": ["a"]}
    assert non_default_items(_Settings(size=3, tags=[])) == {}
