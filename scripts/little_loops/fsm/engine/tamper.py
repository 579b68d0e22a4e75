"""The tamper guard (`tamper_guard:`): test files a state's action changed, found and acted on."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from little_loops.fsm.definition.endings import ends_in_failure
from little_loops.fsm.definition.model import FSMLoop, StateConfig
from little_loops.fsm.definition.run_keys import TAMPER_ALLOW, TAMPER_REVERT
from little_loops.fsm.processes.gitcmd import git

# What counts as a test file (by name, or by a folder on its path), and the config that
# chooses which tests run: pytest.ini whole, pyproject.toml's [tool.pytest] table.
TEST_NAMES: tuple[str, ...] = ("test_*.py", "*_test.py", "conftest.py", "*.test.*", "*.spec.*")
TEST_FOLDERS: tuple[str, ...] = ("tests", "test", "__tests__")
PYTEST_CONFIG = "pytest.ini"
PYPROJECT = "pyproject.toml"
# Where a run's context lists what the guard found (little-loops reads the same name).
RECORD_KEY = "_tamper_guard"

Snapshot = dict[str, str | None]  # a path's content hash; None: it is not there


def policy_of(fsm: FSMLoop, state: StateConfig) -> str | None:
    """The tamper policy of *state*: its own `tamper_guard:`, else the loop's (None: none).
    Only a state with an action is guarded."""
    if not state.action:
        return None
    return state.tamper_guard if state.tamper_guard is not None else fsm.tamper_guard


def is_test_file(path: str) -> bool:
    """True for a test file or the config that chooses which tests run."""
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    name = parts[-1]
    if path in (PYTEST_CONFIG, PYPROJECT):
        return True
    return any(fnmatch(name, p) for p in TEST_NAMES) or any(p in TEST_FOLDERS for p in parts[:-1])


def _listed(root: Path, *args: str) -> list[str]:
    result = git(root, *args, check=False)
    return [line for line in result.out.splitlines() if line] if result.ok else []


def _hash(root: Path, path: str) -> str | None:
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None
    if path == PYPROJECT:  # only the pytest table: other edits there are not tampering
        try:
            table: Any = tomllib.loads(data.decode("utf-8")).get("tool", {}).get("pytest")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            table = data.decode("utf-8", errors="replace")
        data = repr(table).encode()
    return hashlib.sha256(data).hexdigest()


def snapshot(root: Path) -> Snapshot:
    """The hash of every test file git knows of or would add (tracked and untracked, not
    ignored), before the action."""
    paths = _listed(root, "ls-files", "--cached", "--others", "--exclude-standard")
    return {path: _hash(root, path) for path in paths if is_test_file(path)}


@dataclass
class Report:
    """What the guard found after a state's action, and what it did."""

    state: str
    policy: str
    findings: list[dict[str, str]] = field(default_factory=list)  # path, kind
    reverted: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether the state routes on as it would have: nothing found, `allow`, or all
        reverted."""
        if not self.findings or self.policy == TAMPER_ALLOW:
            return True
        fixable = [f for f in self.findings if f["kind"] != "added"]
        return self.policy == TAMPER_REVERT and len(self.reverted) == len(fixable)

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "policy": self.policy,
            "passed": self.passed,
            "findings": list(self.findings),
            "reverted": list(self.reverted),
        }


def check(root: Path, before: Snapshot, state: str, policy: str) -> Report:
    """Compare the test files now with *before*; under `revert`, restore the tracked ones
    that were changed or deleted from git (an added file is left: it is no tampering with
    what was there)."""
    changed = _listed(root, "diff", "--name-only", "HEAD") + _listed(
        root, "ls-files", "--others", "--exclude-standard"
    )
    paths = sorted(set(before) | {p for p in changed if is_test_file(p)})
    report = Report(state, policy)
    for path in paths:
        old, new = before.get(path), _hash(root, path)
        if old != new:
            kind = "added" if old is None else "deleted" if new is None else "modified"
            report.findings.append({"path": path, "kind": kind})
    if policy == TAMPER_REVERT:
        wanted = [f["path"] for f in report.findings if f["kind"] != "added"]
        tracked = set(_listed(root, "ls-files", "--", *wanted)) if wanted else set()
        back = [p for p in wanted if p in tracked]
        if back and git(root, "checkout", "--", *back, check=False).ok:
            report.reverted = back
    return report


def failure_target(fsm: FSMLoop, state: StateConfig) -> str | None:
    """Where a state whose action tampered goes under `fail` (as little-loops does): its
    `on_failure` when that is a failure terminal, else the loop's first failure terminal by
    name; None: none, the state routes the verdict failure."""
    failures = sorted(n for n, s in fsm.states.items() if s.terminal and ends_in_failure(n, s))
    if state.on_failure in failures:
        return state.on_failure
    return failures[0] if failures else None
