"""docs/guide.md, "Run a fix loop per issue, in parallel": the whole story on a real git repo."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks, command_lines, normalise
from support.gitrepo import make_repo

from little_loops.fsm.facts.layout import run_files, split_run_key

DOC = "docs/guide.md"
COMMIT = re.compile(r"\b(to|commit) [0-9a-f]{7}\b")  # a commit's sha differs with its time
# The ids the guide shows for the runs of issues 101, 102 and 103.
SHOWN = {"101": "k3x9", "102": "m2p7", "103": "q8r4"}


def block(prefix: str) -> str:
    (found,) = [b for b in all_blocks() if b.starts(DOC, prefix)]
    return found.text


def same(text: str) -> str:
    return COMMIT.sub(r"\1 <SHA>", normalise(text))


def test_the_parallel_fix_story_is_what_ll_loop_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    make_repo(root, {".loops/patch-issue.yaml": block("name: patch-issue"), "README.md": "# a\n"})
    monkeypatch.chdir(root)
    keys = []
    starts = command_lines(block("ll-loop run patch-issue 101 --background"))
    assert len(starts) == 3
    for line in starts:
        started = llproc.console(root, *line.split()[1:])
        assert started.returncode == 0, started.stderr
        found = re.search(
            r"started loop '(patch-issue@[a-z0-9]{4})' in the background", started.stderr
        )
        assert found, started.stderr
        keys.append(found.group(1))

    def done() -> bool:
        states = [run_files(key, root / ".loops").state for key in keys]
        return all(
            s.exists() and json.loads(s.read_text())["status"] == "completed" for s in states
        )

    llproc.wait_for(done, 30, "the three runs to finish")
    ids = {}
    for key in keys:
        issue = json.loads(run_files(key, root / ".loops").state.read_text())["context"]["issue"]
        ids[split_run_key(key)[1]] = SHOWN[str(issue)]

    def as_shown(text: str) -> str:
        for real, shown in ids.items():
            text = text.replace(real, shown)
        return text

    for prefix in ("$ ll-loop list\n", "$ ll-loop worktree list"):
        command, _, shown = block(prefix).partition("\n")
        result = llproc.console(root, *command.split()[2:])
        assert result.returncode == 0, result.stderr
        real = same(as_shown(result.stdout)).splitlines()
        assert real[0] == same(shown).splitlines()[0]  # the header
        assert sorted(real[1:]) == sorted(same(shown).splitlines()[1:])  # runs in any order
    for prefix in (
        "$ ll-loop worktree diff patch-issue@k3x9",
        "$ ll-loop worktree merge patch-issue@k3x9",
        "$ ll-loop worktree merge patch-issue@m2p7",
        "$ ll-loop worktree discard patch-issue@q8r4",
    ):
        command, _, shown = block(prefix).partition("\n")
        shown_key = command.split()[-1]
        real_id = next(real for real, doc_id in ids.items() if shown_key.endswith(doc_id))
        argv = [*command.split()[2:-1], shown_key.replace(shown_key[-4:], real_id)]
        result = llproc.console(root, *argv)
        assert result.returncode == 0, result.stderr
        assert same(as_shown(result.stdout + result.stderr)) == same(shown), prefix
    assert sorted(p.name for p in root.glob("fixed-*.md")) == ["fixed-101.md", "fixed-102.md"]
