"""The forge kinds by name: the one list the `pr` state's checks, the preflight and the run read."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from little_loops.fsm.forges.forge import Forge

# To add a forge kind: write its module in this folder (its `FORGE`) and add a line here.
MODULES: dict[str, str] = {"gh": "gh"}
NAMES: tuple[str, ...] = tuple(MODULES)
DEFAULT = "gh"


def get(name: str) -> Forge:
    """The forge kind called *name*, its module imported on first use; KeyError when none is."""
    module = import_module(f"little_loops.fsm.forges.{MODULES[name]}")
    forge: Forge = module.FORGE
    return forge
