"""Every library loop that asks a coding agent takes an `agent` parameter: its prompt states
run on the agent given (built in, custom, or a comma-separated fallback list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.loops import library_loop_path, library_loops

# A custom agent of the project: a bash script that "fixes" the planted bug and says what
# it spent, as a real agent CLI would.
AGENT_SCRIPT = """#!/bin/bash
printf '%s\\n' "$1" >> prompts.log
sed -i 's/ANSWER = 41/ANSWER = 42/' app.py
echo 'fixed the constant'
echo 'cost: $0.25'
"""


def _prompt_loops() -> list[str]:
    names = []
    for name in library_loops():
        fsm = load_and_validate(library_loop_path(name))
        if any(state.is_prompt() for state in fsm.states.values() if state.action):
            names.append(name)
    return names


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".loops").mkdir(parents=True)
    (root / "app.py").write_text("ANSWER = 41\n")
    agent = root / "tools" / "fixer"
    agent.parent.mkdir()
    agent.write_text(AGENT_SCRIPT)
    agent.chmod(0o755)
    (root / ".loops" / "agents.yaml").write_text(
        "agents:\n  fixer:\n    command: ./tools/fixer\n    cost_pattern: 'cost: \\$([0-9.]+)'\n"
    )
    return root


def test_the_loops_that_ask_an_agent_are_the_seven() -> None:
    assert set(_prompt_loops()) == {
        "fix-ci",
        "fix-tests",
        "lint-fix",
        "type-fix",
        "coverage-up",
        "ralph",
        "review-and-fix",
    }


@pytest.mark.parametrize("name", _prompt_loops())
def test_each_prompt_state_runs_on_the_agent_given(name: str, tmp_path: Path) -> None:
    root = _project(tmp_path)
    shown = llproc.ll_loop(root, "run", f"library:{name}", "--set", "agent=fixer", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    agents = [
        line.strip() for line in shown.stdout.splitlines() if line.strip().startswith("agent:")
    ]
    assert agents, shown.stdout
    assert set(agents) == {"agent: fixer"}, shown.stdout
    default = llproc.ll_loop(root, "run", f"library:{name}", "--dry-run")
    assert "agent: claude" in default.stdout
    assert "agent: fixer" not in default.stdout
    wrong = llproc.ll_loop(root, "run", f"library:{name}", "--set", "agent=fixr", "--dry-run")
    assert wrong.returncode != 0
    assert "unknown agent 'fixr'" in wrong.stderr
    assert "fixer" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1


def test_fix_tests_runs_to_done_on_a_custom_agent(tmp_path: Path) -> None:
    root = _project(tmp_path)
    check = "grep -q 'ANSWER = 42' app.py || { echo 'FAILED: ANSWER is not 42'; exit 1; }"
    run = llproc.ll_loop(
        root, "run", "library:fix-tests", check, "--set", "agent=fixer", "--json", timeout=60
    )
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout)
    assert outcome["final_state"] == "done"
    assert (root / "app.py").read_text() == "ANSWER = 42\n"
    # The agent was handed the loop's prompt, with the failing output in it.
    assert "FAILED: ANSWER is not 42" in (root / "prompts.log").read_text()
    assert outcome["cost_usd"] == pytest.approx(0.25)
