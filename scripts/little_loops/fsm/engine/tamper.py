"""The tamper guard (`tamper_guard:`): test files a state's action changed, found and acted on."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from little_loops.fsm.definition.model.endings import ends_in_failure
from little_loops.fsm.definition.model.run_keys import TAMPER_ALLOW, TAMPER_REVERT
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.guard_policies import tamper_policy
from little_loops.fsm.engine.nofollow import write_below
from little_loops.fsm.processes.gitcmd import NO_SUBMODULE_RUN, git, git_bytes

# What counts as a test file (by name, or by a folder on its path), and the config that
# chooses which tests run: pytest.ini whole, pyproject.toml's [tool.pytest] table.
TEST_NAMES: tuple[str, ...] = ("test_*.py", "*_test.py", "conftest.py", "*.test.*", "*.spec.*")
TEST_FOLDERS: tuple[str, ...] = ("tests", "test", "__tests__")
PYTEST_CONFIG = "pytest.ini"
PYPROJECT = "pyproject.toml"
# Where a run's context lists what the guard found (little-loops reads the same name).
RECORD_KEY = "_tamper_guard"
_BATCH = 200  # paths given to one `git hash-object` (a command line has a limit)
policy_of = tamper_policy  # the tamper policy of a state (guard_policies.py)


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
    """The paths `git ARGS -z` names (as they are: no quoting of unusual names)."""
    result = git(root, *args, check=False)
    return [path for path in result.out.split("\0") if path] if result.ok else []


def _hash(root: Path, path: str) -> str | None:
    """The content hash of *path* (None: not there); a link's is its target's name: it is
    never read through (a link to a copy of the file outside is no copy of it); a FIFO's,
    socket's or device's is its kind: opening one could wait forever (or never end)."""
    file = root / path
    try:
        kind = stat.S_IFMT(file.lstat().st_mode)
        if kind == stat.S_IFLNK:
            data = b"link\0" + os.fsencode(os.readlink(file))
        elif kind != stat.S_IFREG:
            data = b"special\0" + str(kind).encode()
        else:
            data = file.read_bytes()
    except OSError:
        return None
    if path == PYPROJECT:  # only the pytest table: other edits there are not tampering
        import tomllib

        try:
            table: Any = tomllib.loads(data.decode("utf-8")).get("tool", {}).get("pytest")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            table = data.decode("utf-8", errors="replace")
        data = repr(table).encode()
    return hashlib.sha256(data).hexdigest()


@dataclass
class Snapshot:
    """The test files before an action: each one's content hash (None: it is not there),
    and how to put it back as it was: the index entry (mode, blob) of one git has as it is,
    else (the user's own uncommitted work, an untracked file) the blob its bytes were
    written to in git's object store (unreferenced: git's gc drops it in time), and its
    mode. Small, so a run saves it before the action."""

    hashes: dict[str, str | None] = field(default_factory=dict)
    index: dict[str, tuple[str, str]] = field(default_factory=dict)
    saved: dict[str, tuple[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"hashes": dict(self.hashes), "index": dict(self.index), "saved": dict(self.saved)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        saved = {p: (str(b), int(m)) for p, (b, m) in data["saved"].items()}
        index = {p: (str(k), str(b)) for p, (k, b) in data["index"].items()}
        return cls(dict(data["hashes"]), index, saved)


def _index(root: Path) -> dict[str, tuple[str, str]]:
    """The index's (mode, blob) of each path (merged entries only)."""
    entries: dict[str, tuple[str, str]] = {}
    for entry in _listed(root, "ls-files", "-s", "-z"):
        info, _, path = entry.partition("\t")
        mode, blob, stage = (info.split() + ["", "", ""])[:3]
        if stage == "0":
            entries[path] = (mode, blob)
    return entries


def snapshot(root: Path) -> Snapshot:
    """The test files git knows of or would add (tracked and untracked, not ignored), before
    the action."""
    paths = _listed(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    tests = [path for path in paths if is_test_file(path)]
    index = _index(root)
    unstaged = set(_listed(root, "diff", "--name-only", "-z", NO_SUBMODULE_RUN))
    taken = Snapshot()
    keep: list[str] = []
    for path in tests:
        taken.hashes[path] = _hash(root, path)
        if path in index and path not in unstaged:
            taken.index[path] = index[path]
        elif (root / path).is_file() and not (root / path).is_symlink():
            keep.append(path)  # a link is not put back as a file: not saved
    for path, blob in _stored(root, keep).items():
        with contextlib.suppress(OSError):
            taken.saved[path] = (blob, (root / path).stat().st_mode & 0o7777)
    return taken


STORED_KEY = "blob"  # a snapshot as a run saves it: the blob of its JSON in git's store


def stored(root: Path, taken: Snapshot) -> dict[str, Any]:
    """*taken* as a run saves it with each guarded action: its JSON written to git's object
    store, `{"blob": ID}`, so a project of thousands of test files does not copy all their
    hashes into the run's log at every step; the snapshot itself when git cannot store it."""
    data = taken.to_dict()
    if not data["hashes"]:
        return data
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(data, file)
    try:
        done = git(root, "hash-object", "-w", "--no-filters", "--", file.name, check=False)
    finally:
        os.unlink(file.name)
    blob = done.out.strip()
    return {STORED_KEY: blob} if done.ok and blob else data


def restored(root: Path, data: dict[str, Any]) -> Snapshot:
    """The snapshot `stored` saved as *data*; one with no test file when its blob is gone
    (each test file there now is then found added: a `fail` routes as a failure)."""
    if STORED_KEY not in data:
        return Snapshot.from_dict(data)
    code, raw = git_bytes(root, "cat-file", "blob", str(data[STORED_KEY]))
    try:
        return Snapshot.from_dict(json.loads(raw)) if code == 0 else Snapshot()
    except (ValueError, KeyError, TypeError):
        return Snapshot()


def _stored(root: Path, paths: list[str]) -> dict[str, str]:
    """Write the bytes of each of *paths* to git's object store as they are (no filter);
    the blob of each one written."""
    blobs: dict[str, str] = {}
    for at in range(0, len(paths), _BATCH):
        batch = paths[at : at + _BATCH]
        done = git(root, "hash-object", "-w", "--no-filters", "--", *batch, check=False)
        if done.ok:
            blobs.update(zip(batch, done.out.split(), strict=False))
            continue
        for path in batch:  # one could not be read: the others still are
            one = git(root, "hash-object", "-w", "--no-filters", "--", path, check=False)
            if one.ok and one.out.strip():
                blobs[path] = one.out.strip()
    return blobs


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        findings = [dict(f) for f in data["findings"]]
        return cls(str(data["state"]), str(data["policy"]), findings, list(data["reverted"]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "policy": self.policy,
            "passed": self.passed,
            "findings": list(self.findings),
            "reverted": list(self.reverted),
        }


def check(root: Path, before: Snapshot, state: str, policy: str) -> Report:
    """Compare the test files now with *before* (`compare`), then act on it (`revert`)."""
    report = compare(root, before, state, policy)
    revert(root, before, report)
    return report


def compare(root: Path, before: Snapshot, state: str, policy: str) -> Report:
    """What the action changed among the test files: each one not as *before* has it."""
    changed = _listed(root, "diff", "--name-only", "-z", "HEAD") + _listed(
        root, "ls-files", "-z", "--others", "--exclude-standard"
    )
    paths = sorted(set(before.hashes) | {p for p in changed if is_test_file(p)})
    report = Report(state, policy)
    for path in paths:
        old, new = before.hashes.get(path), _hash(root, path)
        if old != new:
            kind = "added" if old is None else "deleted" if new is None else "modified"
            report.findings.append({"path": path, "kind": kind})
    return report


def revert(root: Path, before: Snapshot, report: Report) -> None:
    """Under `revert`, put back each test file *report* found changed or deleted as it was
    before the action (the user's uncommitted edits included); an added file is left: it
    is no tampering with what was there. Doing it again changes nothing more."""
    if report.policy == TAMPER_REVERT:
        wanted = [f["path"] for f in report.findings if f["kind"] != "added"]
        report.reverted = _restore(root, before, wanted)


def _restore(root: Path, before: Snapshot, wanted: list[str]) -> list[str]:
    """Put each of *wanted* back as *before* has it; the paths put back. Nothing is written
    through a link: a link the action left in a test file's place is replaced, and a file
    below a folder the action made a link is not put back (git's checkout does the same)."""
    back: list[str] = []
    for path in (p for p in wanted if p in before.saved):
        blob, mode = before.saved[path]
        code, data = git_bytes(root, "cat-file", "blob", blob)
        if code != 0:
            continue
        try:
            write_below(root, path, data, mode)
        except OSError:
            continue
        back.append(path)
    from_git = [p for p in wanted if p in before.index]
    now = _index(root) if from_git else {}
    for path in from_git:  # the action may have staged its own version: the old one first
        if now.get(path) != before.index[path]:
            kind, blob = before.index[path]
            git(root, "update-index", "--add", "--cacheinfo", f"{kind},{blob},{path}", check=False)
    if from_git and git(root, "--literal-pathspecs", "checkout", "--", *from_git, check=False).ok:
        back += from_git
    return sorted(back)


def failure_target(fsm: FSMLoop, state: StateConfig) -> str | None:
    """Where a state whose action tampered goes under `fail` (as little-loops does): its
    `on_failure` when that is a failure terminal, else the loop's first failure terminal by
    name; None: none, the state routes the verdict failure."""
    failures = sorted(n for n, s in fsm.states.items() if s.terminal and ends_in_failure(n, s))
    if state.on_failure in failures:
        return state.on_failure
    return failures[0] if failures else None
