"""Which tests a patch added or changed: the candidates of the pre-patch check, from git."""

from __future__ import annotations

import ast
import difflib
import hashlib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from little_loops.fsm.engine.tamper import is_test_file
from little_loops.fsm.processes.gitcmd import git

# The branches whose fork point with HEAD is "before the patch", tried in order (as
# little-loops, whose default base branch is `main`); with neither, HEAD itself.
BASE_BRANCHES: tuple[str, ...] = ("main", "master")
BASE_MERGE = "merge-base"  # how the base was found: the fork point with a base branch
BASE_HEAD = "head"  # no base branch: HEAD (the patch is what is not committed)
PYTEST_FILES: tuple[str, ...] = ("test_*.py", "*_test.py")  # the files pytest collects
CONFTEST = "conftest.py"


@dataclass(frozen=True)
class Candidate:
    """A test to run before the patch: one function (`path::name`), or a whole file (`path`)
    when the patch changed more of it than test functions."""

    nodeid: str
    path: str
    added: bool  # new with the patch (a whole file: the file is new)


def base_of(top: Path) -> tuple[str, str]:
    """The commit the patch is measured from in the repository *top*, and how it was found
    (BASE_MERGE, BASE_HEAD)."""
    for branch in BASE_BRANCHES:
        found = git(top, "merge-base", "HEAD", branch, check=False)
        if found.ok and found.out.strip():
            return found.out.strip(), BASE_MERGE
    return git(top, "rev-parse", "HEAD").out.strip(), BASE_HEAD


def _lines(top: Path, *args: str) -> list[str]:
    return [line for line in git(top, *args).out.splitlines() if line]


def changed_files(top: Path, base: str) -> list[str]:
    """The files that differ from *base* now (committed or not) and the new ones git would
    add (ignored ones left out), as paths from *top*."""
    changed = _lines(top, "diff", "--name-only", "--no-renames", base)
    return sorted(set(changed) | set(_lines(top, "ls-files", "--others", "--exclude-standard")))


def patch_key(top: Path, base: str, paths: list[str]) -> str:
    """What identifies the patch: the same key, the same verdict (a check is not run twice
    on one patch)."""
    digest = hashlib.sha256(base.encode())
    digest.update(git(top, "diff", "--no-renames", base).out.encode())
    for path in paths:
        digest.update(path.encode())
        try:
            digest.update((top / path).read_bytes())
        except OSError:
            digest.update(b"\0gone")
    return digest.hexdigest()


def support_files(paths: list[str]) -> list[str]:
    """The changed Python test files (a conftest.py too) the fork gets as they are now."""
    return [p for p in paths if p.endswith(".py") and is_test_file(p)]


def candidates(top: Path, base: str, paths: list[str]) -> list[Candidate]:
    """The tests the patch (the files *paths* that differ from *base*) added or changed."""
    found: list[Candidate] = []
    for path in paths:
        name = PurePosixPath(path).name
        if name == CONFTEST or not any(fnmatch(name, p) for p in PYTEST_FILES):
            continue
        try:
            after = (top / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # deleted (or unreadable): nothing of it runs
        shown = git(top, "show", f"{base}:{path}", check=False)
        found += _of_file(path, after, shown.out if shown.ok else None)
    return found


def _of_file(path: str, after: str, before: str | None) -> list[Candidate]:
    """The candidates of one test file: each new or changed top-level `test*` function;
    the whole file when the patch changed lines outside them, or it has none."""
    whole = [Candidate(path, path, before is None)]
    new = _test_functions(after)
    old = _test_functions(before) if before is not None else ({}, after[:0])
    if new is None or old is None or not new[0]:
        return whole
    (new_funcs, new_rest), (old_funcs, old_rest) = new, old
    if _adds_lines(old_rest, new_rest):
        return whole
    return [
        Candidate(f"{path}::{name}", path, name not in old_funcs)
        for name, text in sorted(new_funcs.items())
        if old_funcs.get(name) != text
    ]


def _test_functions(source: str) -> tuple[dict[str, str], str] | None:
    """The top-level `test*` functions of *source* (name: text) and the rest of it; None
    when it is no Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = source.splitlines(keepends=True)
    funcs: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            last = node.end_lineno or node.lineno
            funcs[node.name] = "".join(lines[first:last])
            spans.append((first, last))
    rest = [line for i, line in enumerate(lines) if not any(a <= i < b for a, b in spans)]
    return funcs, "".join(rest)


def _adds_lines(before: str, after: str) -> bool:
    """Whether *after* has a non-blank line that is new or changed from *before* (removed
    lines do not count: they test nothing)."""
    old = [line.strip() for line in before.splitlines() if line.strip()]
    new = [line.strip() for line in after.splitlines() if line.strip()]
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return any(tag in ("insert", "replace") for tag, *_ in opcodes)
