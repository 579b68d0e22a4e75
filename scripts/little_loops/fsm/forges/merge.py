"""How a green pull request is merged: the words of a `pr` state's `merge:` (no forge loaded)."""

from __future__ import annotations

from enum import StrEnum


class MergeMethod(StrEnum):
    """How a green pull request is merged (`none`: it is left open)."""

    SQUASH = "squash"
    MERGE = "merge"
    REBASE = "rebase"
    NONE = "none"
