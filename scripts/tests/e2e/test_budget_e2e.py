"""A budget on every agent: the real Codex CLI (npm @openai/codex) against the scripted
Responses API and the real Claude Code against the scripted Messages API, on 127.0.0.1, run
by the `ll-loop` console script. Codex's spend is counted with the model the loop, `--model`
or Codex's own config.toml names, and `--max-cost` stops the run; with no model named
anywhere the run is refused before a request is made, unless the preflight skips Codex
anyway (it cannot run here) and the next agent of the list, whose spend is counted, runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.fake_openai import FakeOpenAI
from support.npm_cli import CODEX, cli_or_skip
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


FALLBACK = """\
name: ask
initial: ask
agent: [{agents}]
states:
  ask:
    action: Say hello
    action_type: prompt
    evaluate: {{type: exit_code}}
    next: done
  done:
    terminal: true
"""


@pytest.mark.parametrize("cause", ["not logged in", "not installed"])
def test_an_uncounted_agent_the_preflight_skips_does_not_stop_the_budget(
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cause: str,
) -> None:
    """The first agent of the list, Codex, names no model (its spend cannot be counted) but
    cannot run here either: the preflight skips it, the next agent (Claude Code, whose
    spend is counted) runs, and `--max-cost` holds for it."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CODEX_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex-home"))  # no auth.json
    folders = [f for f in os.environ["PATH"].split(os.pathsep) if not Path(f, "codex").exists()]
    if cause == "not logged in":
        folders.insert(0, str(cli_or_skip(CODEX).parent))
    monkeypatch.setenv("PATH", os.pathsep.join(folders))
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_text("Hello.")
    loop_project.write("ask", FALLBACK.format(agents="codex, claude"))
    done = llproc.console(loop_project.root, "run", "ask", "--max-cost", "1", "--json", timeout=180)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "cannot be counted" not in done.stderr
    assert "(codex is skipped: the next agent of the list runs)" in done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["final_state"] == "done"
    assert 0 < outcome["cost_usd"] < 1  # Claude Code's own figure, counted
    started = [e.get("agent") for e in llproc.events(loop_project.root, "ask")
               if e["event"] == "action_start"]  # fmt: skip
    assert started == ["claude"]
    assert len(agent.requests) == 1
    # --dry-run says the same: no note that a run would stop.
    shown = llproc.console(loop_project.root, "run", "ask", "--max-cost", "1", "--dry-run")
    assert "cannot be counted" not in shown.stderr, shown.stderr


def test_an_uncounted_agent_that_can_run_later_in_the_list_is_still_refused(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
) -> None:
    """Codex is ready (a key) but names no model: it runs when Claude Code is limited, so
    a budget cannot be kept even though Claude Code comes first in the list."""
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    loop_project.write("ask", FALLBACK.format(agents="claude, codex"))
    done = llproc.console(loop_project.root, "run", "ask", "--max-cost", "1", timeout=120)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.startswith(
        "ll-loop: error: the budget $1 (max_cost_usd, --max-cost) cannot be kept: state 'ask'"
        " runs a prompt on Codex, whose spend cannot be counted: no model is named"
    ), done.stderr
    assert agent.requests == []
    assert fake_openai.requests == []
