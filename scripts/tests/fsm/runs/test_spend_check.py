"""An agent whose spend cannot be counted: refused under a budget (one line, exit 2), else
one warning; through the real `ll-loop` with custom agents (bash scripts) and, for the
built-in agents, through the check itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import forkserver, llproc
from support.doc_blocks import all_blocks

from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopSetupError
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.spend_check import require_counted, uncounted

AGENT = """#!/bin/bash
echo "worked on it" >> calls.log
echo 'cost: $0.01'
"""
LOOP = """\
name: fix
initial: check
agent: {agent}
states:
  check:
    action: "exit 1"
    on_success: done
    on_failure: fix
  fix:
    action: fix it
    action_type: prompt
    next: check
  done:
    terminal: true
"""


def _project(tmp_path: Path, cost_pattern: bool) -> Path:
    root = tmp_path / "project"
    (root / ".loops").mkdir(parents=True)
    tool = root / "agent.sh"
    tool.write_text(AGENT)
    tool.chmod(0o755)
    pattern = "    cost_pattern: 'cost: \\$([0-9.]+)'\n" if cost_pattern else ""
    (root / ".loops" / "agents.yaml").write_text(
        f"agents:\n  mine:\n    command: ./agent.sh\n{pattern}"
    )
    (root / ".loops" / "fix.yaml").write_text(LOOP.format(agent="mine"))
    return root


NO_PATTERN = (
    "state 'fix' runs a prompt on mine, whose spend cannot be counted: it has no cost_pattern"
    " (add one to its definition: what its output says it spent)"
)


def test_a_custom_agent_without_cost_pattern_is_refused_under_max_cost(tmp_path: Path) -> None:
    root = _project(tmp_path, cost_pattern=False)
    done = forkserver.ll_loop(root, "run", "fix", "--max-cost", "1", "-n", "3")
    assert done.returncode == ExitCode.USAGE
    assert done.stderr == (
        f"ll-loop: error: the budget $1 (max_cost_usd, --max-cost) cannot be kept: {NO_PATTERN}\n"
    )
    assert not (root / "calls.log").exists()  # nothing ran
    (root / ".loops" / "fix.yaml").write_text(
        LOOP.format(agent="mine").replace("initial:", "max_cost_usd: 2\ninitial:")
    )
    refused = forkserver.ll_loop(root, "run", "fix", "-n", "3")
    assert refused.returncode == ExitCode.USAGE
    assert refused.stderr.startswith("ll-loop: error: the budget $2 (max_cost_usd, --max-cost)")


def test_without_a_budget_it_is_one_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    root = _project(tmp_path, cost_pattern=False)
    done = forkserver.ll_loop(root, "run", "fix", "-n", "2", "-q")
    assert done.returncode == ExitCode.MAX_ITERATIONS, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"ll-loop: warning: {NO_PATTERN}; the run's cost leaves it out"
    )
    assert (root / "calls.log").read_text().count("worked on it") == 2
    shown = forkserver.ll_loop(root, "run", "fix", "--dry-run", "--max-cost", "1")
    assert f"ll-loop: note: a run would stop before its first step: {NO_PATTERN}" in shown.stderr


def test_max_cost_stops_a_custom_agent_that_says_what_it_spent(tmp_path: Path) -> None:
    root = _project(tmp_path, cost_pattern=True)
    done = forkserver.ll_loop(root, "run", "fix", "--max-cost", "0.02", "-n", "10", "--json")
    assert done.returncode == ExitCode.BUDGET, done.stderr
    assert "cannot be counted" not in done.stderr
    assert (root / "calls.log").read_text().count("worked on it") == 2
    assert json.loads(done.stdout)["cost_usd"] == pytest.approx(0.02)


def _loop(agent: str, options: str = "") -> FSMLoop:
    from little_loops.fsm.definition.reading.loader import load_text
    from little_loops.fsm.validate.loopfile import check_document

    text = LOOP.format(agent=agent) + options
    report = check_document(load_text(text, source="fix.yaml"))
    assert report.fsm is not None, report.errors
    return report.fsm


def _machine(home: Path, **env: str) -> Machine:
    return Machine({"HOME": str(home), **env}, False, lambda p: f"/bin/{p}", home=home)


@pytest.mark.parametrize(
    ("agent", "options", "expected"),
    [
        ("claude", "", None),  # Claude Code reports what it spent
        ("codex", "codex: {model: gpt-5-codex}\n", None),
        ("codex", "codex: {config: {model: o3}}\n", None),
        ("codex", "", "no model is named"),
        ("codex", "codex: {model: gpt-9-x}\n", "its model 'gpt-9-x' has no known price"),
        ("gemini", "", None),  # Gemini CLI names its model; its default family is priced
        ("gemini", "gemini: {model: gemini-2.5-pro}\n", None),
        ("gemini", "gemini: {model: llama-3}\n", "its model 'llama-3' has no known price"),
        ("opencode", "", None),  # opencode reports what it spent
        ("claude,codex", "", "no model is named"),  # a fallback list: each agent may run
    ],
)
def test_each_built_in_agent(
    tmp_path: Path, agent: str, options: str, expected: str | None
) -> None:
    lines = uncounted(_loop(agent, options), machine=_machine(tmp_path))
    if expected is None:
        assert lines == []
    else:
        (line,) = lines
        assert expected in line
        assert line.startswith("state 'fix' runs a prompt on ")


def test_an_agent_the_preflight_skips_is_left_out(tmp_path: Path) -> None:
    """It never runs, so its spend is none; the others of its list still count, each."""
    fsm = _loop("codex,claude")
    fsm.max_cost_usd = 1.0
    assert require_counted(fsm, machine=_machine(tmp_path), skipped={"codex": "not_ready"}) == []
    with pytest.raises(LoopSetupError, match="runs a prompt on Codex, whose spend cannot"):
        require_counted(fsm, machine=_machine(tmp_path), skipped={"claude": "not_ready"})
    both = _loop("codex,gemini", "gemini: {model: llama-3}\n")
    lines = uncounted(both, machine=_machine(tmp_path))
    assert [line.split(",")[0] for line in lines] == [  # in the list's order
        "state 'fix' runs a prompt on Codex",
        "state 'fix' runs a prompt on Gemini",
    ]
    assert len(uncounted(both, machine=_machine(tmp_path), skipped={"codex"})) == 1


def test_the_model_in_codex_config_is_counted(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('model = "gpt-5-codex"\n')
    assert uncounted(_loop("codex"), machine=_machine(tmp_path)) == []
    fsm = _loop("codex")
    fsm.max_cost_usd = 1.0
    assert require_counted(fsm, machine=_machine(tmp_path)) == []
    with pytest.raises(LoopSetupError, match=r"^the budget \$1 \(max_cost_usd"):
        require_counted(fsm, machine=_machine(tmp_path, CODEX_HOME=str(tmp_path / "none")))


def test_resume_with_a_budget_is_refused_too(tmp_path: Path) -> None:
    root = _project(tmp_path, cost_pattern=False)
    first = forkserver.ll_loop(root, "run", "fix", "-n", "1", "-q")
    assert first.returncode == ExitCode.MAX_ITERATIONS, first.stderr
    calls = (root / "calls.log").read_text()
    resumed = forkserver.ll_loop(root, "resume", "fix", "-n", "3", "--max-cost", "1")
    assert resumed.returncode == ExitCode.USAGE
    assert resumed.stderr.splitlines()[-1] == (
        f"ll-loop: error: the budget $1 (max_cost_usd, --max-cost) cannot be kept: {NO_PATTERN}"
    )
    assert (root / "calls.log").read_text() == calls  # nothing ran


def test_run_help_names_no_single_agent_for_model_and_max_cost(tmp_path: Path) -> None:
    shown = llproc.console(tmp_path, "run", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    model = text[text.index("--model MODEL the") :].split(" --max-cost USD ")[0]
    budget = text[text.index("--max-cost USD end") :].split(" --queue ")[0]
    assert model.startswith("--model MODEL the model of every prompt and slash-command state,")
    assert "every agent" in model
    assert "agents' spend" in budget
    assert "refused when an agent's spend cannot be counted" in budget
    assert "Claude" not in model + budget


def test_a_step_whose_output_says_no_cost_stops_a_budgeted_run_after_it(tmp_path: Path) -> None:
    """The agent has a cost_pattern (the preflight counts it) but this time printed no
    cost: under a budget the run stops after the step, exit 6, one line; without one it
    goes on and the step's spend shows as not counted."""
    root = _project(tmp_path, cost_pattern=True)
    (root / "agent.sh").write_text(AGENT.replace("echo 'cost: $0.01'\n", "echo 'all done'\n"))
    done = forkserver.ll_loop(root, "run", "fix", "--max-cost", "1", "-n", "3", "--json")
    assert done.returncode == ExitCode.BUDGET, done.stderr
    assert (root / "calls.log").read_text().count("worked on it") == 1
    why = (
        "the budget $1 (max_cost_usd, --max-cost) cannot be kept: state 'fix' ran on mine,"
        " whose spend cannot be counted: its output did not say what it spent (cost_pattern)"
    )
    outcome = json.loads(done.stdout)
    assert (outcome["terminated_by"], outcome["error"]) == ("budget", why)
    (closing,) = [line for line in done.stderr.splitlines() if line.startswith("Loop stopped")]
    shown = next(b for b in all_blocks() if b.starts("docs/cli.md", "Loop stopped in fix: "))
    assert re.sub(r"\(1 iteration, [^)]*\)", "(1 iteration, 52ms)", closing) == shown.text.strip()
    status = forkserver.ll_loop(root, "status", "fix")
    (hint,) = [line for line in status.stdout.splitlines() if line.startswith("to go on:")]
    assert hint.split(None, 3)[-1] == (
        "ll-loop resume fix (until the next step whose spend cannot be counted)"
    )
    # A resume judges the step that ran (never again) and goes on to the next such step.
    resumed = forkserver.ll_loop(root, "resume", "fix", "-q")
    assert resumed.returncode == ExitCode.BUDGET, resumed.stderr
    assert (root / "calls.log").read_text().count("worked on it") == 2
    assert resumed.stderr.splitlines()[-1].startswith(f"Loop stopped in fix: {why} (")
    # Without a budget: on it goes, each step recorded as not counted.
    (root / "calls.log").unlink()
    free = forkserver.ll_loop(root, "run", "fix", "-n", "2", "-q", "--json")
    assert free.returncode == ExitCode.MAX_ITERATIONS, free.stderr
    assert (root / "calls.log").read_text().count("worked on it") == 2
    steps = [e for e in llproc.events(root, "fix") if e["event"] == "action_complete"]
    marks = [e.get("uncounted") for e in steps if e["state"] == "fix"]
    assert marks == ["its output did not say what it spent (cost_pattern)"] * 2


def test_an_agent_that_never_ran_spent_nothing(tmp_path: Path) -> None:
    """Not found (exit 127): no spend to count, so the step takes its error route as before."""
    root = _project(tmp_path, cost_pattern=True)
    (root / "agent.sh").unlink()
    done = forkserver.ll_loop(root, "run", "fix", "--max-cost", "1", "-n", "2", "--json")
    assert done.returncode != ExitCode.BUDGET, done.stderr
    assert json.loads(done.stdout)["terminated_by"] != "budget"
    steps = [e for e in llproc.events(root, "fix") if e["event"] == "action_complete"]
    assert all("uncounted" not in e for e in steps)


PARENT = """\
name: parent
initial: sub
max_cost_usd: 1
states:
  sub:
    loop: fix
    on_success: after
    on_failure: after
    on_error: after
  after:
    action: "echo after >> calls.log"
    next: done
  done:
    terminal: true
"""


def test_a_sub_loop_step_not_counted_stops_the_whole_budgeted_tree(tmp_path: Path) -> None:
    """The parent's budget is the child's too: a child's step whose spend was not counted
    ends the tree (exit 6), not only the child (whose end would be the parent's verdict)."""
    root = _project(tmp_path, cost_pattern=True)
    (root / "agent.sh").write_text(AGENT.replace("echo 'cost: $0.01'\n", "echo 'all done'\n"))
    (root / ".loops" / "parent.yaml").write_text(PARENT)
    done = forkserver.ll_loop(root, "run", "parent", "--json")
    assert done.returncode == ExitCode.BUDGET, done.stderr
    assert (root / "calls.log").read_text().splitlines() == ["worked on it"]  # no `after`
    assert "whose spend cannot be counted" in json.loads(done.stdout)["error"]
