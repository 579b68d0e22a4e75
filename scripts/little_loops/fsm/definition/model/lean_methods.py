"""The loop model's `==` and `repr`, read from its fields when called, not compiled at import."""

from __future__ import annotations

from dataclasses import fields
from reprlib import recursive_repr
from typing import Any


def add_lean_methods(cls: type) -> None:
    """Give the dataclass *cls* (made with `eq=False, repr=False`) the `__eq__`, `__repr__`
    and `__hash__` that `@dataclass` would have: the same results, but no source for each of
    its fields compiled when the module is imported (the two models' ~100 fields cost every
    `validate` ~10 M instructions that way)."""
    compared = tuple(f.name for f in fields(cls) if f.compare)
    shown = tuple(f.name for f in fields(cls) if f.repr)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, n) for n in compared) == tuple(
                getattr(other, n) for n in compared
            )
        return NotImplemented

    @recursive_repr()
    def __repr__(self: Any) -> str:
        shown_fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{self.__class__.__qualname__}({shown_fields})"

    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    cls.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    cls.__repr__ = __repr__  # type: ignore[method-assign,assignment]
    cls.__hash__ = None  # type: ignore[assignment]  # as @dataclass's eq=True: unhashable
