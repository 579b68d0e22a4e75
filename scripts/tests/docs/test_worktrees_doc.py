"""docs/worktrees.md: its samples are what `ll-loop worktree` prints on a real git repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks, normalise
from support.gitrepo import commit_all, make_repo
from support.paths import REPO

from little_loops.fsm.facts.layout import LOOPS_GITIGNORE, run_key
from little_loops.fsm.runs.locks import acquire_scope
from little_loops.fsm.runs.worktrees import create_worktree, keep_or_remove

DOC = "docs/worktrees.md"
# A commit's short sha differs with the time it was made; a blob's does not, but alike.
SHA = re.compile(r"\b[0-9a-f]{7}\b")


def block(prefix: str) -> str:
    (found,) = [b for b in all_blocks() if b.starts(DOC, prefix)]
    return found.text


def same(text: str) -> str:
    return SHA.sub("<SHA>", normalise(text))


def session(root: Path, prefix: str, code: int = 0) -> None:
    """The `$ ll-loop ...` block starting with *prefix*: its command run, its output compared
    (stdout, then stderr)."""
    command, _, shown = block(prefix).partition("\n")
    done = llproc.console(root, *command.split()[2:])
    assert done.returncode == code, done.stderr
    assert same(shown) == same(done.stdout + done.stderr)


def test_the_samples_are_what_ll_loop_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    make_repo(
        root,
        {".loops/.gitignore": LOOPS_GITIGNORE, "app.py": "one\ntwo\nthree\n", "README.md": "# a\n"},
    )
    monkeypatch.chdir(root)
    loops = root / ".loops"
    fixed = create_worktree(loops, "fix", "ab12", None)
    (fixed.path / "app.py").write_text("one\nTWO\nthree\n")
    commit_all(fixed.path, "ll-loop fix: fix (pass 1)")
    (fixed.path / "tests").mkdir()
    (fixed.path / "tests" / "test_app.py").write_text("def test_two():\n    assert True\n")
    (fixed.path / "NOTES.md").write_text("two is now TWO\n")
    commit_all(fixed.path, "ll-loop fix: test (pass 2)")
    other = create_worktree(loops, "fix", "cd34", None)
    (other.path / "app.py").write_text("one\n2\nthree\n")
    linting = create_worktree(loops, "lint", "ef56", None)
    (linting.path / "lint.log").write_text("ok\n")
    unchanged = create_worktree(loops, "docs", "gh78", None)
    notes = [keep_or_remove(fixed), keep_or_remove(unchanged)]
    # The run prints them as notes (`ll-loop: ...`) on stderr.
    assert [f"ll-loop: {note}" for note in notes] == block("ll-loop: kept worktree").splitlines()
    with acquire_scope(run_key("lint", "ef56"), ["."], loops):
        session(root, "$ ll-loop worktree list")
        refused = llproc.console(root, "worktree", "merge", "lint")
    assert refused.returncode == 1
    prose = " ".join((REPO / DOC).read_text().split())
    assert normalise(refused.stderr.removeprefix("ll-loop: error: ").strip()) in normalise(prose)
    session(root, "$ ll-loop worktree diff fix@ab12 --stat")
    session(root, "$ ll-loop worktree diff fix@cd34")
    session(root, "$ ll-loop worktree merge fix@ab12")
    session(root, "$ ll-loop worktree merge fix\n", code=1)
    session(root, "$ ll-loop worktree discard fix")


def test_a_changed_sample_fails() -> None:
    shown = block("$ ll-loop worktree merge fix@ab12")
    assert same(shown) != same(shown.replace("fast-forward", "merge commit"))
