"""A budget on Codex: the real Codex CLI (npm @openai/codex) against the scripted Responses
API on 127.0.0.1, run by the `ll-loop` console script. Its spend is counted with the model
the loop, `--model` or Codex's own config.toml names, and `--max-cost` stops the run; with
no model named anywhere the run is refused before a request is made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_openai import FakeOpenAI
from support.project import LoopProject

from little_loops.fsm.actions.codex_model import recorded_model
from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

FAILING = "echo 'FAILED test_calc.py::test_add'; exit 1"
# One Codex call of the fake API (1000 input tokens, 200 of them cached, 50 output) on
# gpt-5-codex: (800 x 1.25 + 200 x 0.125 + 50 x 10) / 1e6 dollars.
ONE_CALL = (800 * 1.25 + 200 * 0.125 + 50 * 10.0) / 1_000_000


def _config(model: str) -> None:
    """Name *model* in the fake Codex home's config.toml, as a user's ~/.codex would."""
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.write_text(f'model = "{model}"\n' + config.read_text())


def _fix_tests(project: LoopProject, *flags: str) -> tuple[int, str, str]:
    done = llproc.console(
        project.root, "run", "library:fix-tests", FAILING, "--set", "agent=codex", "--json",
        *flags, timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("named_by", ["--model", "config.toml"])
def test_max_cost_stops_a_codex_run_once_its_spend_reaches_it(
    fake_openai: FakeOpenAI, loop_project: LoopProject, named_by: str
) -> None:
    if named_by == "config.toml":
        _config("gpt-5-codex")
        flags: tuple[str, ...] = ()
    else:
        flags = ("--model", "gpt-5-codex")
    code, out, err = _fix_tests(loop_project, "--max-cost", "0.001", *flags)
    assert code == ExitCode.BUDGET, err
    assert len(fake_openai.requests) == 1  # one fix, then the budget stops the next
    assert fake_openai.requests[0].model == "gpt-5-codex"
    outcome = json.loads(out)
    assert outcome["cost_usd"] == pytest.approx(ONE_CALL)
    # The report names the model Codex ran on, with its cost.
    report = llproc.console(loop_project.root, "report", "fix-tests")
    assert report.returncode == 0, report.stderr
    model_rows = [line.split() for line in report.stdout.splitlines() if "gpt-5-codex" in line]
    assert model_rows, report.stdout
    assert model_rows[0][0] == "gpt-5-codex"
    assert model_rows[0][1] == f"${ONE_CALL:.4f}"
    # Codex's own record of the session names the model too: it is read first.
    events = llproc.events(loop_project.root, "fix-tests")
    thread = next(e["session_id"] for e in events if e.get("session_id"))
    assert recorded_model(thread, dict(os.environ)) == "gpt-5-codex"


def test_no_model_named_anywhere_is_refused_under_a_budget(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    code, out, err = _fix_tests(loop_project, "--max-cost", "0.001")
    assert code == ExitCode.USAGE
    assert out == ""
    assert err == (
        "ll-loop: error: the budget $0.001 (max_cost_usd, --max-cost) cannot be kept: state"
        " 'fix' runs a prompt on Codex, whose spend cannot be counted: no model is named, and"
        " the price of Codex's built-in default is not known (name one: --model MODEL,"
        ' `codex: {model: MODEL}` in the loop, or `model = "MODEL"` in'
        " $CODEX_HOME/config.toml)\n"
    )
    assert fake_openai.requests == []  # refused before anything ran
    # The library loop's own max_cost_usd ($5) is a budget too: as docs/cli.md shows it.
    code, _, err = _fix_tests(loop_project)
    assert code == ExitCode.USAGE
    shown = next(
        b.text
        for b in all_blocks()
        if b.doc == "docs/cli.md" and b.text.startswith("ll-loop: error: the budget $5")
    )
    assert err == shown


def test_an_unpriced_model_is_refused_under_a_budget(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    _config("gpt-9-preview")
    code, _, err = _fix_tests(loop_project)
    assert code == ExitCode.USAGE
    assert "whose spend cannot be counted: its model 'gpt-9-preview' has no known price" in err
    assert len(err.splitlines()) == 1
    assert fake_openai.requests == []


NO_BUDGET = """\
name: ask
initial: ask
agent: codex
states:
  ask:
    action: Say hello
    action_type: prompt
    evaluate: {type: exit_code}
    next: done
  done:
    terminal: true
"""


def test_without_a_budget_an_uncounted_agent_is_one_warning_and_the_run_goes_on(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    loop_project.write("ask", NO_BUDGET)
    done = llproc.console(loop_project.root, "run", "ask", "-q", timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "cannot be counted" in line]
    assert warnings == [
        "ll-loop: warning: state 'ask' runs a prompt on Codex, whose spend cannot be counted:"
        " no model is named, and the price of Codex's built-in default is not known (name"
        ' one: --model MODEL, `codex: {model: MODEL}` in the loop, or `model = "MODEL"` in'
        " $CODEX_HOME/config.toml); the run's cost leaves it out"
    ]
    assert len(fake_openai.requests) == 1
