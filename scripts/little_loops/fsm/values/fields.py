"""A settings dataclass written back as a mapping: the fields that differ from their defaults."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any


def non_default_items(obj: Any) -> dict[str, Any]:
    """The dataclass fields of *obj* whose value differs from the field's default."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        if value != default:
            out[f.name] = value
    return out
