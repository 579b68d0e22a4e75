"""`library:fix-ci` with real `ll-loop`, git and gh against the GitHub stand-in and a custom
agent: the checks fail on the first pushed commit, the agent gets their names and logs and
fixes the file, the fix is committed and pushed, the checks pass, the pull request merges."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks, normalise
from support.fake_github import Check, FakeGitHub
from support.gitrepo import GIT_ENV
from support.programs import needs_gh

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = needs_gh

# A custom agent: writes down the prompt it was given (outside the checkout) and fixes the
# planted bug, as a real agent CLI would, saying what it spent.
AGENT_SCRIPT = """#!/bin/bash
printf '%s\\n' "$1" >> ../prompts.log
sed -i 's/return a - b/return a + b/' calc.py
echo 'fixed add()'
echo 'cost: $0.25'
"""
FAILED_LOG = "test_calc.py::test_add FAILED\nE   assert -1 == 5"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "remote.git") as served:
        yield served


@pytest.fixture
def work(tmp_path: Path, fake: FakeGitHub) -> Path:
    root = fake.checkout(tmp_path / "work")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    for args in (["add", "calc.py"], ["commit", "-qm", "add()"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env={**os.environ, **GIT_ENV})
    agent = tmp_path / "fixer"
    agent.write_text(AGENT_SCRIPT)
    agent.chmod(0o755)
    (root / ".loops").mkdir()
    (root / ".loops" / "agents.yaml").write_text(
        f"agents:\n  fixer:\n    command: {agent}\n    cost_pattern: 'cost: \\$([0-9.]+)'\n"
    )
    return root


def test_fix_ci_runs_to_a_merged_pull_request_on_a_custom_agent(
    fake: FakeGitHub, work: Path, tmp_path: Path
) -> None:
    fake.script_checks(
        "fix",
        [[Check("test", "failed", log=FAILED_LOG)]],  # the first pushed commit
        [[Check("test", "passed")]],  # the fixed one
    )
    env = {**os.environ, **GIT_ENV, **fake.env(tmp_path / "gh-config")}

    args = ("library:fix-ci", "--set", "agent=fixer", "--set", "title=Fix add")
    run = llproc.ll_loop(work, "run", *args, "--json", "--no-color", env=env, timeout=120)

    assert run.returncode == ExitCode.OK, run.stderr
    outcome = json.loads(run.stdout)
    assert outcome["final_state"] == "done"
    assert outcome["cost_usd"] == pytest.approx(0.25)
    # The agent was given the failing check's name and its log.
    prompt = (tmp_path / "prompts.log").read_text()
    assert "checks failed: test" in prompt
    assert FAILED_LOG in prompt
    # Merged once, after green, on the fixed commit the run pushed; the fix is what merged.
    pr = fake.prs[1]
    assert (pr.state, pr.merge_method, pr.title) == ("MERGED", "SQUASH", "Fix add")
    (merge,) = fake.merges()
    assert merge.checks_then == (("test", "passed"),)
    assert merge.variables["input"]["expectedHeadOid"] == fake.head_oid("fix")
    pushed = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "remote.git"), "show", "fix:calc.py"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "return a + b" in pushed.stdout
    # The run's own files were not committed.
    listed = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "remote.git"), "ls-tree", "-r", "--name-only", "fix"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(listed.stdout.split()) == ["README", "calc.py"]
    # What it printed is docs/library.md's sample (the pushed commits' ids aside).
    command = "$ ll-loop run " + " ".join(args) + "\n"
    (block,) = [b for b in all_blocks() if b.starts("docs/library.md", command)]
    assert _same(block.text.split("\n", 1)[1]) == _same(run.stderr)


def _same(text: str) -> str:
    return normalise(re.sub(r"\([0-9a-f]{12}\)", "(<COMMIT>)", text))
