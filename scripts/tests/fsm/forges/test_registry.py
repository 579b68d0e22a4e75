"""The forge kinds by name: each name gives its module's FORGE, imported on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from little_loops.fsm.forges import gh, registry
from little_loops.fsm.forges.forge import Forge


def test_each_name_is_its_modules_forge_and_speaks_the_protocol() -> None:
    assert registry.NAMES == ("gh",)
    assert registry.DEFAULT in registry.NAMES
    assert registry.get("gh") is gh.FORGE
    for name in registry.NAMES:
        forge = registry.get(name)
        assert isinstance(forge, Forge)
        assert forge.name == name


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        registry.get("glab")


def test_the_registry_imports_no_kind_until_one_is_used() -> None:
    code = (
        "import sys, little_loops.fsm.forges.registry as r;"
        "print('little_loops.fsm.forges.gh' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
