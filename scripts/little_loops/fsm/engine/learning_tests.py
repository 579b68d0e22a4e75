"""little-loops' learning-test registry, read by a learning state: is a target proven.

A record is `.ll/learning-tests/<slug of the target>.md` in the project, written by
little-loops' `/ll:explore-api` (and its `ll-learning-tests` tool): YAML front matter with
`target`, `date` (YYYY-MM-DD), `status` (proven, refuted or stale) and, optionally, the
`proven_package` / `proven_version` it was proven against. With `learning_tests.enabled`
in the project's `.ll/ll-config.json` (or `ll-config.json`), a proven record also goes
stale with age (`stale_after_days`, default 30) or when the installed version of its
package is no longer the proven one (then after `stale_after_days` x
`version_match_backstop_multiplier`, default 12, when it still is).
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.facts.errors import LoopError, LoopRuntimeError

REGISTRY_DIR = Path(".ll") / "learning-tests"
CONFIG_FILES = (Path(".ll") / "ll-config.json", Path("ll-config.json"))
PROVEN, REFUTED, STALE = "proven", "refuted", "stale"
_FRONT_MATTER = re.compile(r"^---\n(.*?)\n---", re.DOTALL)


def slug(target: str) -> str:
    """The file name (without `.md`) of *target*'s record, as little-loops makes it."""
    text = re.sub(r"[^\w\s-]", "", target)
    return re.sub(r"[-\s]+", "-", text).strip("-").lower()


@dataclass(frozen=True)
class Staleness:
    """The project's `learning_tests` settings that make a proven record stale."""

    enabled: bool = False
    after_days: int = 30
    version_aware: bool = True
    backstop: int = 12

    @classmethod
    def of_project(cls, root: Path) -> Staleness:
        """The settings of the first config file of *root* (none: staleness is off)."""
        for name in CONFIG_FILES:
            path = root / name
            if not path.is_file():
                continue
            try:
                block = json.loads(path.read_text(encoding="utf-8")).get("learning_tests")
            except (OSError, ValueError, AttributeError) as exc:
                raise LoopRuntimeError(f"{path}: cannot be read as JSON: {exc}") from None
            if not isinstance(block, dict):
                return cls()
            return cls(
                enabled=block.get("enabled") is True,
                after_days=int(block.get("stale_after_days", 30)),
                version_aware=block.get("version_aware_staleness", True) is not False,
                backstop=int(block.get("version_match_backstop_multiplier", 12)),
            )
        return cls()

    def stale(self, record: dict[str, Any], today: datetime.date) -> bool:
        """Whether the proven *record* has gone stale (never when staleness is off)."""
        if not self.enabled:
            return False
        threshold = max(1, self.after_days)
        proven = record.get("proven_version")
        if self.version_aware and proven:
            current = installed_version(str(record.get("proven_package") or ""))
            if current is not None:
                if current != str(proven):
                    return True
                threshold *= max(1, self.backstop)
        when = record.get("date")
        try:
            day = when if isinstance(when, datetime.date) else _day(str(when))
        except ValueError:
            return False  # an unreadable date is not stale (as in little-loops)
        return (today - day).days > threshold


def _day(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def installed_version(package: str) -> str | None:
    """The installed version of the distribution *package* (None: stdlib, not installed)."""
    words = package.split()
    if not words or words[0].lower().split(".")[0] in sys.stdlib_module_names:
        return None
    from importlib import metadata

    try:
        return metadata.version(words[0].lower())
    except (metadata.PackageNotFoundError, ValueError):
        return None


def status_of(root: Path, target: str, staleness: Staleness) -> str | None:
    """*target*'s status in the registry of the project at *root*: PROVEN, REFUTED or STALE
    (a proven record gone stale is STALE); None when it has no record."""
    path = root / REGISTRY_DIR / f"{slug(target)}.md"
    if not path.is_file():
        return None
    try:
        found = _FRONT_MATTER.match(path.read_text(encoding="utf-8"))
        record = load_text(found.group(1), str(path)).data if found else None
    except (OSError, UnicodeDecodeError, LoopError) as exc:
        raise LoopRuntimeError(f"learning-test record {path}: {exc}") from None
    if record is None:
        return None
    status = str(record.get("status", PROVEN))
    if status == PROVEN and staleness.stale(record, datetime.date.today()):
        return STALE
    return status
