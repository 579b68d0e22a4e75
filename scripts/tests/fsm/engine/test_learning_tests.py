"""The learning-test registry as a learning state reads it (engine/learning_tests.py)."""

from __future__ import annotations

import datetime
import json
from importlib import metadata
from pathlib import Path

import pytest

from little_loops.fsm.engine.learning_tests import (
    PROVEN,
    REFUTED,
    STALE,
    Staleness,
    installed_version,
    slug,
    status_of,
)
from little_loops.fsm.facts.errors import LoopRuntimeError

TODAY = datetime.date(2026, 3, 1)


def _record(root: Path, target: str, **fields: str) -> None:
    folder = root / ".ll/learning-tests"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {value}\n" for key, value in {"target": target, **fields}.items())
    (folder / f"{slug(target)}.md").write_text(f"---\n{lines}---\n\nnotes\n")


def test_slug_is_little_loops_file_name() -> None:
    assert slug("Anthropic SDK streaming") == "anthropic-sdk-streaming"
    assert slug("  Python pathlib (3.12)! ") == "python-pathlib-312"
    assert slug("a -- b_c") == "a-b_c"


def test_status_is_read_from_the_record(tmp_path: Path) -> None:
    off = Staleness()
    assert status_of(tmp_path, "Acme", off) is None
    _record(tmp_path, "Acme", date='"2020-01-01"', status=REFUTED)
    assert status_of(tmp_path, "Acme", off) == REFUTED
    _record(tmp_path, "Beta API", date="2020-01-01")  # no status: proven
    assert status_of(tmp_path, "Beta API", off) == PROVEN
    (tmp_path / ".ll/learning-tests/gamma.md").write_text("no front matter\n")
    assert status_of(tmp_path, "Gamma", off) is None


def test_a_broken_record_is_a_one_line_error(tmp_path: Path) -> None:
    _record(tmp_path, "Acme", date="[unclosed")
    with pytest.raises(LoopRuntimeError, match="learning-test record .*acme.md"):
        status_of(tmp_path, "Acme", Staleness())


def test_staleness_by_age_only_when_enabled(tmp_path: Path) -> None:
    record = {"date": "2026-01-01", "status": PROVEN}
    assert not Staleness().stale(record, TODAY)
    assert Staleness(enabled=True).stale(record, TODAY)  # 59 days > 30
    assert not Staleness(enabled=True, after_days=60).stale(record, TODAY)
    assert not Staleness(enabled=True).stale({"date": "someday"}, TODAY)
    assert Staleness(enabled=True).stale({"date": datetime.date(2025, 1, 1)}, TODAY)


def test_staleness_by_version_drift() -> None:
    pyyaml = metadata.version("pyyaml")
    matching = {"date": "2026-01-01", "proven_package": "pyyaml", "proven_version": pyyaml}
    drifted = {**matching, "date": "2026-02-28", "proven_version": "0.0.1"}
    on = Staleness(enabled=True)
    assert on.stale(drifted, TODAY)  # a day old, but another version is installed
    assert not on.stale(matching, TODAY)  # same version: 30 x 12 days
    assert Staleness(enabled=True, version_aware=False).stale(matching, TODAY)
    assert installed_version("pathlib") is None  # stdlib
    assert installed_version("no-such-dist-xyz") is None


def test_the_project_config_turns_staleness_on(tmp_path: Path) -> None:
    assert Staleness.of_project(tmp_path) == Staleness()
    (tmp_path / ".ll").mkdir()
    settings = {"learning_tests": {"enabled": True, "stale_after_days": 7}}
    (tmp_path / ".ll/ll-config.json").write_text(json.dumps(settings))
    assert Staleness.of_project(tmp_path) == Staleness(enabled=True, after_days=7)
    _record(tmp_path, "Acme", date='"2020-01-01"', status=PROVEN)
    assert status_of(tmp_path, "Acme", Staleness.of_project(tmp_path)) == STALE
    (tmp_path / ".ll/ll-config.json").write_text("{")
    with pytest.raises(LoopRuntimeError, match="ll-config.json"):
        Staleness.of_project(tmp_path)
