"""The GitHub Action (action.yml) run by `act` on this machine: a 2-item matrix workflow
using `uses: ./` installs ll-loop at its own ref, runs a loop per item, and sets each
job's outputs and summary; actionlint finds nothing in the workflow or the action."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.doc_blocks import all_blocks
from support.gitrepo import GIT_ENV, git
from support.paths import REPO
from support.slowdown import scaled

BIN = Path(sys.executable).parent
ACT = BIN / "act"
ACTIONLINT = BIN / "actionlint"

FIX_ISSUE = """\
name: fix-issue
initial: fix
parameters:
  issue:
    default: "0"
states:
  fix:
    action: 'echo "fixing issue ${context.issue}" && echo "${context.issue}" > fixed.txt'
    next: done
  done:
    terminal: true
"""
# The steps the docs' workflow takes from github.com (not reachable here), and what the act
# run does instead: each job copies its export where the test reads it ($LL_EXPORTS).
GITHUB_COM = ("actions/upload-artifact@", "actions/download-artifact@")
COPY_EXPORT = {
    "name": "Keep the export",
    "env": {"EXPORTED": "${{ steps.loop.outputs.export }}", "ISSUE": "${{ matrix.issue }}"},
    "run": 'cp "$EXPORTED" "$LL_EXPORTS/$ISSUE.tar.gz"\n'
    'echo "outputs $ISSUE ${{ steps.loop.outputs.outcome }} ${{ steps.loop.outputs.exit-code }}'
    " ${{ steps.loop.outputs.final-state }} ${{ steps.loop.outputs.cost }}"
    ' ${{ steps.loop.outputs.branch }}"',
}


def docs_workflow() -> str:
    """The workflow of docs/github-actions.md, as written."""
    (block,) = [
        b
        for b in all_blocks()
        if b.starts("docs/github-actions.md", "# .github/workflows/fix-issues.yml")
    ]
    return block.text


def act_workflow() -> str:
    """The docs' workflow as act runs it here: the action from `./`, on push, without the
    steps and the job that need github.com's artifact service."""
    flow = yaml.safe_load(docs_workflow())
    flow[True] = {"push": None}  # YAML 1.1 reads `on` as true
    fix = flow["jobs"]["fix"]
    steps = [s for s in fix["steps"] if not str(s.get("uses", "")).startswith(GITHUB_COM)]
    for step in steps:
        if str(step.get("uses", "")).startswith("OWNER/little-loops@"):
            step["uses"] = "./"
    fix["steps"] = [*steps, COPY_EXPORT]
    del flow["jobs"]["report"]
    return yaml.safe_dump(flow, sort_keys=False).replace("true:", "on:", 1)


def _project(root: Path) -> Path:
    """A repository holding this one's files (the action and the package it installs), a
    loop, and the workflow."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    (root / ".loops").mkdir(exist_ok=True)
    (root / ".loops" / "fix-issue.yaml").write_text(FIX_ISSUE)
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "workflows" / "fix-issues.yml").write_text(act_workflow())
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "project")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("action") / "project")


def test_actionlint_finds_nothing_in_the_docs_workflow_nor_in_the_one_act_runs(
    project: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs-flow"
    (docs / ".github" / "workflows").mkdir(parents=True)
    (docs / ".github" / "workflows" / "fix-issues.yml").write_text(docs_workflow())
    git(docs, "init", "-q")
    done = subprocess.run(
        [str(ACTIONLINT)], cwd=docs, capture_output=True, text=True, timeout=scaled(60)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [str(ACTIONLINT), ".github/workflows/fix-issues.yml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_an_input_the_action_does_not_have(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(REPO / "action.yml", root / "action.yml")
    (root / ".github" / "workflows" / "bad.yml").write_text(
        act_workflow().replace("loop: fix-issue", "loops: fix-issue")
    )
    git(root, "init", "-q")  # actionlint finds `./` actions from the repository's top
    done = subprocess.run(
        [str(ACTIONLINT), ".github/workflows/bad.yml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 1
    assert 'input "loops" is not defined in action' in done.stdout


RECORDS = (
    '#!/bin/bash\nif [ "$1" = run ]; then printf \'%s\\n\' "$@" > "$CALLED"; echo \'{}\'; fi\n'
)


def _run_step(tmp_path: Path, inputs: dict[str, str], fake_ll_loop: str = RECORDS) -> list[str]:
    """Run action.yml's "Run the loop" step in real bash (as a composite step runs it) with
    these inputs, an `ll-loop` on PATH that records its arguments: those of `ll-loop run`
    (or runs *fake_ll_loop*, which records them too)."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "run"]
    bin_dir, runner = tmp_path / "bin", tmp_path / "runner"
    bin_dir.mkdir(parents=True)
    runner.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    fake = bin_dir / "ll-loop"
    fake.write_text(fake_ll_loop)
    fake.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "CALLED": str(tmp_path / "called"),
        "RUNNER_TEMP": str(runner),
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary"),
        "GITHUB_JOB": "fix",
        "GITHUB_RUN_ID": "1",
    }
    for name, value in step["env"].items():
        (key,) = re.findall(r"^\$\{\{ inputs\.([\w-]+) \}\}$", value)
        env[name] = inputs.get(key, action["inputs"][key].get("default", ""))
    (tmp_path / "step.sh").write_text(step["run"])
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(tmp_path / "step.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stderr
    return (tmp_path / "called").read_text().splitlines()


def test_the_agent_input_sets_the_loops_agent_parameter_after_set(tmp_path: Path) -> None:
    called = _run_step(
        tmp_path / "a", {"loop": "library:fix-ci", "set": "agent=claude\nn=1", "agent": "codex"}
    )
    assert called == [
        "run",
        "library:fix-ci",
        "--json",
        "--set",
        "agent=claude",
        "--set",
        "n=1",
        "--set",
        "agent=codex",
    ]
    called = _run_step(tmp_path / "b", {"loop": "hello", "agent": ""})
    assert called == ["run", "hello", "--json"]


# An `ll-loop run` that leaves what a run of a `pr:` state in a worktree leaves: its result,
# its state file (the worktree's branch) and its events (the pull request it opened).
PR_RUN = """\
#!/bin/bash
[ "$1" = run ] || exit 0
printf '%s\\n' "$@" > "$CALLED"
mkdir -p .loops/.running
echo '{"worktree": {"branch": "ll/ship/a1"}}' > .loops/.running/ship.state.json
{
  echo '{"event": "loop_start", "loop": "ship"}'
  echo '{"event": "pull_request", "url": "http://github.localhost/o/r/pull/7"}'
} > .loops/.running/ship.events.jsonl
echo '{"terminated_by": "terminal", "final_state": "done", "cost_usd": 0.25}'
"""


def test_the_outputs_name_the_runs_pull_request_branch_and_cost(tmp_path: Path) -> None:
    called = _run_step(tmp_path, {"loop": "ship"}, PR_RUN)
    assert called == ["run", "ship", "--json"]
    lines = (tmp_path / "runner" / "output").read_text().splitlines()
    outputs = dict(line.split("=", 1) for line in lines if not line.startswith("export="))
    assert outputs == {
        "exit-code": "0",
        "outcome": "terminal",
        "final-state": "done",
        "cost": "0.250000",
        "branch": "ll/ship/a1",
        "pr-url": "http://github.localhost/o/r/pull/7",
    }


def test_act_runs_the_docs_matrix_each_job_with_its_outputs_summary_and_export(
    project: Path, tmp_path: Path
) -> None:
    home, exports = tmp_path / "home", tmp_path / "exports"
    home.mkdir()
    exports.mkdir()
    env = {
        **os.environ,
        **GIT_ENV,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    done = subprocess.run(
        [str(ACT), "push", "-P", "ubuntu-latest=-self-hosted", "--no-cache-server"]
        + ["--env", f"LL_EXPORTS={exports}"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(900),
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]
    outputs = sorted(set(re.findall(r"\| (outputs \d+ .*)$", log, re.MULTILINE)))
    assert [line.rsplit(" ", 1)[0] for line in outputs] == [
        "outputs 101 terminal 0 done 0.000000",
        "outputs 102 terminal 0 done 0.000000",
    ], log[-6000:]
    assert all(re.search(r" ll/fix-issue/\w+$", line) for line in outputs), outputs
    summaries = re.findall(r"Summary - (.*)$", log, re.MULTILINE)
    assert any("### ll-loop: fix-issue (exit 0)" in line for line in summaries), summaries
    # The combining job's command, on the two jobs' exports: one report of both runs.
    combined = subprocess.run(
        [str(BIN / "ll-loop"), "report", "--json", "--from", *map(str, sorted(exports.iterdir()))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert combined.returncode == 0, combined.stderr
    assert '"runs": 2' in combined.stdout.replace("\n", "").replace("  ", ""), combined.stdout
