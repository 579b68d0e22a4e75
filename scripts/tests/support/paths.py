"""Where the tests find the repository, their own folder and their data files."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parents[1]
DATA = TESTS / "data"
# The loops that ship with the package (its library), then this repository's own .loops/.
SHIPPED_LOOPS = sorted((REPO / "scripts" / "little_loops" / "loops").glob("*.yaml")) + sorted(
    (REPO / ".loops").glob("*.yaml")
)
