"""`run` and `resume` check the agent CLIs a run calls before its first step: exit 2."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support import llproc
from support.fake_claude import REPORT
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

FIXER = """\
    name: fixer
    initial: check
    states:
      check:
        action: "echo pass >> passes; false"
        on_success: done
        on_failure: fix
      fix:
        action: Fix the failing test
        action_type: prompt
        next: check
      done:
        terminal: true
"""
NOT_ON_PATH = (
    "ll-loop: error: state 'fix' runs a Claude Code prompt, but claude is not on PATH; "
    "install Claude Code: npm install -g @anthropic-ai/claude-code\n"
)
AS_ROOT = (
    "ll-loop: error: state 'fix' runs a Claude Code prompt as root: claude refuses "
    "--dangerously-skip-permissions as root; set IS_SANDBOX=1 in a sandbox, or run as a "
    "normal user\n"
)


def _bin(root: Path, claude: bool) -> str:
    """A PATH of one folder: bash (which a run needs anyway) and, if asked, a fake claude
    that says the fix is done (its calls are counted in `claude-calls`)."""
    folder = root / ("bin-with-claude" if claude else "bin-without-claude")
    folder.mkdir(exist_ok=True)
    bash = folder / "bash"
    if not bash.exists():
        bash.symlink_to(shutil.which("bash") or "/bin/bash")
    if claude:
        fake = folder / "claude"
        fake.write_text(f"#!/bin/bash\necho called >> claude-calls\necho '{json.dumps(REPORT)}'\n")
        fake.chmod(0o755)
    return str(folder)


def _env(root: Path, *, claude: bool, sandbox: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("IS_SANDBOX", "PATH")}
    env["PATH"] = _bin(root, claude)
    if sandbox:
        env["IS_SANDBOX"] = "1"
    return env


def _nothing_ran(project: LoopProject) -> None:
    """No step ran, and no run file says a run happened."""
    assert not (project.root / "passes").exists()
    assert not (project.root / "claude-calls").exists()
    assert sorted(p.name for p in project.loops.iterdir()) == ["fixer.yaml"]


def test_a_run_without_claude_on_path_stops_before_its_first_step(
    loop_project: LoopProject,
) -> None:
    loop_project.write("fixer", FIXER)
    result = llproc.ll_loop(
        loop_project.root, "run", "fixer", env=_env(loop_project.root, claude=False)
    )
    assert (result.returncode, result.stderr, result.stdout) == (ExitCode.USAGE, NOT_ON_PATH, "")
    _nothing_ran(loop_project)


def test_a_background_run_is_refused_here_not_in_its_log(loop_project: LoopProject) -> None:
    loop_project.write("fixer", FIXER)
    env = _env(loop_project.root, claude=False)
    result = llproc.ll_loop(loop_project.root, "run", "fixer", "--background", env=env)
    assert (result.returncode, result.stderr, result.stdout) == (ExitCode.USAGE, NOT_ON_PATH, "")
    _nothing_ran(loop_project)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the tests run as root in CI")
def test_as_root_without_is_sandbox_the_run_stops_before_its_first_step(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "fixer",
        FIXER.replace('echo pass >> passes; false"', 'echo pass >> passes; test -f claude-calls"'),
    )
    env = _env(loop_project.root, claude=True, sandbox=False)
    result = llproc.ll_loop(loop_project.root, "run", "fixer", env=env)
    assert (result.returncode, result.stderr) == (ExitCode.USAGE, AS_ROOT)
    _nothing_ran(loop_project)
    # With IS_SANDBOX=1 the same claude runs, and the loop ends.
    env = _env(loop_project.root, claude=True, sandbox=True)
    result = llproc.ll_loop(loop_project.root, "run", "fixer", env=env)
    assert result.returncode == ExitCode.OK, result.stderr
    assert (loop_project.root / "claude-calls").read_text() == "called\n"


def test_a_resume_checks_again_before_its_next_step(loop_project: LoopProject) -> None:
    loop_project.write("fixer", FIXER)
    with_claude = _env(loop_project.root, claude=True)
    result = llproc.ll_loop(loop_project.root, "run", "fixer", "-n", "1", env=with_claude)
    assert result.returncode == ExitCode.MAX_ITERATIONS, result.stderr
    assert (loop_project.root / "passes").read_text() == "pass\n"
    without = _env(loop_project.root, claude=False)
    result = llproc.ll_loop(loop_project.root, "resume", "fixer", "-n", "3", env=without)
    assert (result.returncode, result.stderr) == (ExitCode.USAGE, NOT_ON_PATH)
    assert (loop_project.root / "passes").read_text() == "pass\n"  # nothing ran


@pytest.mark.parametrize(
    "loop",
    [
        # shell steps only
        FIXER.replace("action_type: prompt", "action_type: shell"),
        # the Claude state cannot be reached
        FIXER.replace("on_failure: fix", "on_failure: done"),
    ],
)
def test_a_run_that_calls_no_claude_does_not_need_it(loop_project: LoopProject, loop: str) -> None:
    loop_project.write("fixer", loop)
    env = _env(loop_project.root, claude=False)
    result = llproc.ll_loop(loop_project.root, "run", "fixer", "-n", "1", env=env)
    assert result.returncode in (ExitCode.OK, ExitCode.MAX_ITERATIONS), result.stderr
    assert (loop_project.root / "passes").exists()


def test_no_llm_takes_the_judge_off_the_list(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = FIXER.replace("action_type: prompt", "action_type: shell").replace(
        'false"', 'false"\n        evaluate:\n          type: llm_structured'
    )
    loop_project.write("fixer", judged)
    env = {
        k: v
        for k, v in _env(loop_project.root, claude=False).items()
        if not k.startswith("ANTHROPIC_")
    }
    result = llproc.ll_loop(loop_project.root, "run", "fixer", "-n", "1", env=env)
    assert result.returncode == ExitCode.USAGE
    assert result.stderr == (
        "ll-loop: error: state 'check' is judged through Claude Code (llm_structured, no API "
        "key), but claude is not on PATH; install Claude Code: npm install -g "
        "@anthropic-ai/claude-code (or set ANTHROPIC_API_KEY for the judge, or run with "
        "--no-llm)\n"
    )
    result = llproc.ll_loop(loop_project.root, "run", "fixer", "-n", "1", "--no-llm", env=env)
    assert result.returncode == ExitCode.MAX_ITERATIONS, result.stderr
