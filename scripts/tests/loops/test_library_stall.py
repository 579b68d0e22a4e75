"""The library loops' stall settings stop a run on the same failure three times in a row,
on a stand-in's output and on real pytest output (which differs run to run)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from support import llproc
from support.fake_claude import fake_claude
from support.gitrepo import make_repo

from little_loops.fsm.facts.layout import LOOPS_GITIGNORE
from little_loops.fsm.facts.outcomes import ExitCode


def test_a_fix_that_changes_nothing_stops_fix_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_claude(tmp_path, monkeypatch, 0.01)  # answers, edits nothing
    project = tmp_path / "project"
    project.mkdir()
    command = "echo 'FAILED test_x - assert 1 == 2'; exit 1"
    result = llproc.console(project, "run", "library:fix-tests", command, "--json")
    assert result.returncode == ExitCode.STALL, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stall"]["detector"] == "same_result"
    assert len(calls.read_text().splitlines()) == 2  # two fixes, then the third failure stops it


# A real pytest project whose failure message names what differs on each run: its temp
# folder, its pid and the time (and pytest's own `1 failed in 0.04s`).
FAILING_TEST = """\
import os
import time

from calc import add


def test_add(tmp_path):
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    assert add(2, 2) == 4, f"pid {os.getpid()} at {started} in {tmp_path}"
"""
# A custom agent that reads the prompt and changes nothing, as a stuck agent does.
IDLE_AGENT = """#!/bin/bash
printf '%s\\n---\\n' "$1" >> prompts.log
echo 'I looked at it.'
echo 'cost: $0.01'
"""
AGENTS = "agents:\n  idle:\n    command: ./tools/idle\n    cost_pattern: 'cost: \\$([0-9.]+)'\n"


# Runs the project's tests with real pytest and keeps each run's output in runs.log.
RUN_TESTS = f"""#!/bin/bash
{sys.executable} -m pytest -q -p no:cacheprovider > out.txt 2>&1
code=$?
cat out.txt
{{ cat out.txt; echo '---'; }} >> runs.log
exit $code
"""
TEST_COMMAND = "./tools/run-tests"


def _tool(root: Path, name: str, text: str) -> None:
    path = root / "tools" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _pytest_project(root: Path) -> Path:
    (root / ".loops").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(FAILING_TEST)
    _tool(root, "idle", IDLE_AGENT)
    _tool(root, "run-tests", RUN_TESTS)
    (root / ".loops" / "agents.yaml").write_text(AGENTS)
    return root


def _test_outputs(root: Path) -> list[str]:
    """What pytest printed on each run."""
    return (root / "runs.log").read_text().split("---\n")[:-1]


def test_fix_tests_stops_on_the_third_same_real_pytest_failure(tmp_path: Path) -> None:
    root = _pytest_project(tmp_path / "project")
    result = llproc.console(
        root, "run", "library:fix-tests", TEST_COMMAND, "--set", "agent=idle", "--json", timeout=120
    )
    assert result.returncode == ExitCode.STALL, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stall"] == {"detector": "same_result", "state": "test", "limit": 3, "count": 3}
    outputs = _test_outputs(root)
    assert len(outputs) == 3
    assert len(set(outputs)) == 3  # pytest printed three different texts of one failure
    assert all("1 failed in " in out for out in outputs)
    assert (root / "prompts.log").read_text().count("\n---\n") == 2  # two fixes, then it stops


def test_review_and_fix_stops_on_the_third_same_real_pytest_failure(tmp_path: Path) -> None:
    root = _pytest_project(tmp_path / "project")
    make_repo(root, {".loops/.gitignore": LOOPS_GITIGNORE})
    result = llproc.console(
        root, "run", "library:review-and-fix", "--set", f"test_command={TEST_COMMAND}",
        "--set", "agent=idle", "--set", "base=HEAD", "--json", timeout=120,
    )  # fmt: skip
    assert result.returncode == ExitCode.STALL, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stall"]["detector"] == "same_result"
    assert outcome["stall"]["state"] == "test"
    assert len(_test_outputs(root)) == 3


def test_ignore_volatile_false_compares_the_real_output_byte_for_byte(tmp_path: Path) -> None:
    root = _pytest_project(tmp_path / "project")
    (root / ".loops" / "exact.yaml").write_text(
        f"""\
name: exact
initial: test
max_iterations: 4
agent: idle
stall:
  same_result: 3
  ignore_volatile: false
states:
  test:
    action: {TEST_COMMAND}
    on_success: done
    on_failure: fix
  fix:
    action: fix the tests
    action_type: prompt
    next: test
  done:
    terminal: true
"""
    )
    result = llproc.console(root, "run", "exact", "--json", timeout=120)
    assert result.returncode == ExitCode.MAX_ITERATIONS, result.stderr
    assert len(_test_outputs(root)) == 4
    masked_too = (root / ".loops" / "exact.yaml").read_text().replace("false", "true")
    (root / ".loops" / "exact.yaml").write_text(masked_too)
    again = llproc.console(root, "run", "exact", "--json", timeout=120)
    assert again.returncode == ExitCode.STALL, again.stderr


# The idle agent, stuck on its second call until the test kills the run (`sleep MARKER`).
STUCK_SECOND = """#!/bin/bash
printf '%s\\n---\\n' "$1" >> prompts.log
if [ "$(grep -c '^---$' prompts.log)" = 2 ]; then touch stuck; sleep {marker}; fi
echo 'I looked at it.'
echo 'cost: $0.01'
"""


def test_a_kill_9_and_resume_keep_the_count_of_the_same_real_failure(
    tmp_path: Path, marker: str
) -> None:
    root = _pytest_project(tmp_path / "project")
    _tool(root, "idle", STUCK_SECOND.format(marker=marker))
    proc = llproc.start(root, "run", "library:fix-tests", TEST_COMMAND, "--set", "agent=idle")
    try:
        llproc.wait_for((root / "stuck").exists, timeout=120, what="the second fix")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and all it started, as a crash would
        proc.communicate()
    assert len(_test_outputs(root)) == 2
    resumed = llproc.console(root, "resume", "fix-tests", "--json", timeout=120)
    assert resumed.returncode == ExitCode.STALL, resumed.stderr
    assert json.loads(resumed.stdout)["stall"]["detector"] == "same_result"
    outputs = _test_outputs(root)
    assert len(outputs) == 3  # the third same failure, counted with the two before the kill
    assert len(set(outputs)) == 3
