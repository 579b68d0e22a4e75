"""Tests mirror the package: `little_loops/<path>/<name>.py` is tested in
`tests/<path>/test_<name>.py` (so `cli/run.py` in `tests/cli/test_run.py`)."""

from __future__ import annotations

from pathlib import Path

from support.paths import TESTS

import little_loops

PACKAGE = Path(little_loops.__file__).parent
SKIPPED = {"__init__.py", "__main__.py"}


def mirror_of(module: Path) -> Path:
    """Where the tests of *module* (a file of the package) live."""
    relative = module.relative_to(PACKAGE)
    return TESTS / relative.parent / f"test_{relative.name}"


def test_the_mirror_rule() -> None:
    assert mirror_of(PACKAGE / "cli" / "run.py") == TESTS / "cli" / "test_run.py"
    assert mirror_of(PACKAGE / "fsm" / "facts" / "events.py") == (
        TESTS / "fsm" / "facts" / "test_events.py"
    )
    assert mirror_of(PACKAGE / "version.py") == TESTS / "test_version.py"


def test_every_module_has_its_own_test_module() -> None:
    missing = [
        f"{module.relative_to(PACKAGE.parent)} -> {mirror_of(module).relative_to(TESTS.parent)}"
        for module in sorted(PACKAGE.rglob("*.py"))
        if module.name not in SKIPPED and not mirror_of(module).is_file()
    ]
    assert not missing, "modules without a test module:\n" + "\n".join(missing)
