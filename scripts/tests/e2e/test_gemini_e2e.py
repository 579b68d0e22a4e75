"""Loops whose agent is Gemini: the real Gemini CLI (npm, pinned) against the scripted Gemini
API on 127.0.0.1, run by the `ll-loop` console script.

Each test has a fresh HOME whose Gemini settings choose the API key, turn off the update
check, usage statistics and telemetry (so the CLI calls nothing but the stand-in), and let
the CLI try a refused call once (its default is 10 tries with backoff).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_gemini import (
    SHELL_TOOL,
    FakeGemini,
    Reply,
    gemini_env,
    gemini_home,
    quota_body,
    usage_metadata,
)
from support.npm_cli import GEMINI_CLI, cli_or_skip
from support.project import LoopProject

from little_loops.fsm.actions.gemini import readable
from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

MODEL = "gemini-2.5-flash"
PROMPT = "The check fails: make calc.ANSWER 42."
FIX_LOOP = f"""\
    name: fix-calc
    initial: check
    agent: gemini
    gemini:
      model: {MODEL}
    max_iterations: 6
    states:
      check:
        action: python3 -c "import calc, sys; sys.exit(0 if calc.ANSWER == 42 else 1)"
        on_success: done
        on_failure: fix
      fix:
        action_type: prompt
        action: "{PROMPT}"
        next: check
      done:
        terminal: true
"""


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    """The pinned Gemini CLI (installed into .cache/gemini-cli on first use)."""
    return cli_or_skip(GEMINI_CLI)


@pytest.fixture
def fake_gemini(
    gemini_cli: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[FakeGemini]:
    """The scripted API, and the environment (applied to os.environ, so ll-loop and its
    children inherit it) that points the pinned gemini, first on PATH, at it."""
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")):  # nothing of a developer's own login
            monkeypatch.delenv(name)
    home = gemini_home(tmp_path_factory.mktemp("gemini-home"))
    with FakeGemini() as fake:
        env = gemini_env(fake, home, tmp_path_factory.mktemp("gemini-tmp"))
        env["PATH"] = f"{gemini_cli.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        yield fake


def run(project: LoopProject, name: str, text: str) -> tuple[dict[str, Any], str]:
    project.write(name, text)
    done = llproc.console(project.root, "run", name, "--json", timeout=240)
    assert done.returncode == ExitCode.OK, done.stderr
    return json.loads(done.stdout), done.stderr


def of(project: LoopProject, name: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in llproc.events(project.root, name) if e["event"] == kind]


def test_gemini_fixes_the_planted_bug_with_its_shell_tool(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    fake_gemini.reply_call(
        {"command": "sed -i 's/41/42/' calc.py", "description": "Fix the constant"},
        text="The constant is wrong.",
        usage=usage_metadata(prompt=1000, output=20, cached=400, thoughts=30),
    )
    fake_gemini.reply_text("Fixed: ANSWER is 42.", usage=usage_metadata(prompt=1200, output=10))

    outcome, _ = run(loop_project, "fix-calc", FIX_LOOP)

    assert (outcome["terminated_by"], outcome["final_state"]) == ("terminal", "done")
    assert (loop_project.root / "calc.py").read_text() == "ANSWER = 42\n"
    first, second = fake_gemini.turns
    # The loop's prompt and model reach the API; the CLI offers its shell tool.
    assert first.user_text == PROMPT
    assert first.model == second.model == MODEL
    assert SHELL_TOOL in first.tool_names
    assert first.headers.get("x-goog-api-key") == "fake-gemini-key"
    # The shell tool ran the call and its result went back to the model.
    (response,) = second.function_responses
    assert response["name"] == SHELL_TOOL
    # Tokens and cost: 1800 fresh input, 400 cached, 20 + 10 answer + 30 thinking.
    expected = (1800 * 0.30 + 400 * 0.30 * 0.1 + 60 * 2.50) / 1e6
    (done,) = [e for e in of(loop_project, "fix-calc", "action_complete") if e.get("usage")]
    assert done["usage"] == {
        "input_tokens": 1800,
        "output_tokens": 60,
        "cache_read_input_tokens": 400,
    }
    assert done["cost_usd"] == pytest.approx(expected)
    assert outcome["cost_usd"] == pytest.approx(expected)
    status = llproc.console(loop_project.root, "status", "fix-calc", "--json", timeout=60)
    assert json.loads(status.stdout)["cost_usd"] == pytest.approx(expected), status.stdout
    # The session's output file as `ll-loop logs` shows it (the kind's readable lines).
    out = loop_project.root / ".loops" / ".running" / "fix-calc.fix.out"
    shown = [text for line in out.read_text().splitlines() for text in readable(line)]
    assert "The constant is wrong." in shown
    assert any(text.startswith('→ run_shell_command {"command": "sed -i') for text in shown)
    assert shown[-1] == "tokens: 1800 in (+400 cached), 60 out"


def test_without_a_key_or_login_nothing_runs(
    fake_gemini: FakeGemini, loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    (Path(os.environ["HOME"]) / ".gemini" / "settings.json").unlink()  # no chosen login
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    loop_project.write("fix-calc", FIX_LOOP)

    done = llproc.console(loop_project.root, "run", "fix-calc", timeout=120)

    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "gemini has no API key or login: set GEMINI_API_KEY" in done.stderr
    assert fake_gemini.requests == []
    assert not (loop_project.root / ".loops" / ".running" / "fix-calc.events.jsonl").exists()


def test_session_continue_sends_the_earlier_turns(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    fake_gemini.reply_text("Hello, first time.")
    fake_gemini.reply_text("Hello again.")
    loop = """\
        name: twice
        initial: greet
        agent: gemini
        max_iterations: 6
        states:
          greet:
            action_type: prompt
            action: "Say hello"
            session: continue
            next: count
          count:
            action: test -f seen || { touch seen; exit 1; }
            on_success: done
            on_failure: greet
          done:
            terminal: true
    """

    outcome, _ = run(loop_project, "twice", loop)

    assert outcome["final_state"] == "done"
    first, second = fake_gemini.turns
    assert first.texts("model") == []
    assert second.texts("model") == ["Hello, first time."]
    assert second.texts("user")[-2:] == ["Say hello", "Say hello"]
    sessions = {e.get("session_id") for e in of(loop_project, "twice", "action_complete")}
    assert len(sessions - {None}) == 1  # the same Gemini session both times


def test_a_quota_and_a_rate_limit_are_waited_out(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    fake_gemini.reply_quota(daily=True)  # a usage limit: the ladder's 0.5 s
    fake_gemini.reply_quota(daily=False, retry_seconds=1)  # a rate limit: until retry time
    fake_gemini.reply_call({"command": "sed -i 's/41/42/' calc.py"})
    fake_gemini.reply_text("Fixed.")
    loop = FIX_LOOP.replace(
        "max_iterations: 6", "max_iterations: 6\n    rate_limit: {ladder: [0.5, 1], max_wait: 60}"
    )

    outcome, stderr = run(loop_project, "fix-calc", loop)

    assert outcome["final_state"] == "done"
    waits = of(loop_project, "fix-calc", "rate_limit_wait")
    assert [w["limit"] for w in waits] == ["usage_limit", "rate_limit"]
    assert outcome["waited_ms"]["rate_limit"] >= 1000
    assert len(fake_gemini.turns) == 4  # each refused call made once, then the fix
    # A limit is never a verdict: the prompt state ran three times, routed once.
    assert [r["to"] for r in of(loop_project, "fix-calc", "route")].count("check") == 1
    assert "usage limit" in stderr


CLAIMED = """\
    name: claimed
    initial: fix
    agent: gemini
    gemini: {model: gemini-2.5-flash}
    states:
      fix:
        action_type: prompt
        action: "Fix calc.py"
        evaluate: {type: exit_code}
        on_success: done
        on_failure: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


@pytest.mark.parametrize(
    "command",
    [
        # silent: stream-json's result says `Command exited with code: 3` (status success)
        "python3 -c 'import sys; sys.exit(3)'",
        # with output: stream-json says only `boom`; Gemini's own session record has the exit
        "echo boom; exit 3",
    ],
)
def test_the_step_line_says_when_gemini_s_own_tool_call_failed_though_it_claimed_success(
    fake_gemini: FakeGemini, loop_project: LoopProject, command: str
) -> None:
    # Its shell command fails ... and it says it fixed it, exit 0.
    fake_gemini.reply_call({"command": command})
    fake_gemini.reply_text("Fixed calc.py.")
    loop_project.write("claimed", CLAIMED)

    done = llproc.console(loop_project.root, "run", "claimed", timeout=240)

    assert done.returncode == ExitCode.OK, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "✓ success" in line]
    assert "(1 of the agent's own tool call failed)" in line
    (complete,) = of(loop_project, "claimed", "action_complete")
    assert complete["tools_failed"] == 1


@pytest.mark.parametrize(
    ("command", "failed"),
    [
        # prints Gemini's own words for a failed command, and exits 0: not failed
        ("echo 'Exit Code: 1'", 0),
        ("echo start; printf 'Exit Code: 1\\nProcess Group PGID: 7\\n'", 0),
        # exits 1 silently, and prints those words then exits 2: failed
        ("false", 1),
        ("echo 'Exit Code: 0'; exit 2", 1),
    ],
)
def test_a_command_that_merely_prints_gemini_s_exit_code_line_is_not_a_failed_call(
    fake_gemini: FakeGemini, loop_project: LoopProject, command: str, failed: int
) -> None:
    fake_gemini.reply_call({"command": command})
    fake_gemini.reply_text("Done.")
    loop_project.write("claimed", CLAIMED)

    done = llproc.console(loop_project.root, "run", "claimed", timeout=240)

    assert done.returncode == ExitCode.OK, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "✓ success" in line]
    assert ("own tool call failed" in line) == bool(failed), line
    (complete,) = of(loop_project, "claimed", "action_complete")
    assert complete.get("tools_failed", 0) == failed
    # The command ran as written: its words reached the model as its output.
    (answer,) = fake_gemini.turns[1].function_responses
    assert "Output: " in json.dumps(answer)


FALLBACK = f"""\
    name: fallback
    initial: fix
    agent: [gemini, mine]
    gemini: {{model: {MODEL}}}
    agents: {{mine: {{command: bash ./mine.sh}}}}
    states:
      fix:
        action_type: prompt
        action: "{PROMPT}"
        evaluate: {{type: exit_code}}
        on_success: done
        on_failure: failed
        on_error: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def test_a_daily_quota_gives_way_to_the_next_agent_after_one_request_with_gemini_s_own_retries(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    root = loop_project.root
    _default_attempts()
    fake_gemini.default_reply = Reply(status=429, body=quota_body(daily=True))
    (root / "mine.sh").write_text("echo 'ANSWER = 42' > calc.py\n")

    outcome, stderr = run(loop_project, "fallback", FALLBACK)

    assert outcome["final_state"] == "done", stderr
    assert "↪ gemini's usage limit" in stderr
    assert (root / "calc.py").read_text() == "ANSWER = 42\n"
    # A daily quota is not retried by Gemini CLI: one turn, then ll-loop's switch.
    assert len(fake_gemini.turns) == 1, [r.path for r in fake_gemini.requests]
    starts = [e.get("agent") for e in of(loop_project, "fallback", "action_start")]
    assert starts == ["gemini", "mine"]


def _default_attempts() -> None:
    """Gemini CLI's own default (general.maxAttempts 10), as on a user's machine."""
    settings = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    del data["general"]["maxAttempts"]
    settings.write_text(json.dumps(data))


def test_a_per_minute_quota_ends_gemini_s_own_retries_at_its_second_and_ll_loop_waits(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    _default_attempts()
    # A per-minute quota: Gemini CLI would wait 5 s, 10 s, ... (up to 10 tries) by itself.
    fake_gemini.reply_quota(daily=False, retry_seconds=0.5)
    fake_gemini.reply_quota(daily=False, retry_seconds=0.5)
    fake_gemini.reply_text("Fixed.")
    (loop_project.root / "mine.sh").write_text("echo 'ANSWER = 42' > calc.py\n")
    loop = FALLBACK.replace(
        "    states:", "    rate_limit: {ladder: [0.5, 1], max_wait: 60}\n    states:"
    )

    outcome, stderr = run(loop_project, "fallback", loop)

    assert outcome["final_state"] == "done", stderr
    # Its first retry is let through; its "Attempt 2 failed: ... Retrying after 1xxxxms..."
    # ended it: ll-loop's own rate-limit wait ran the step again (a rate limit waits on
    # the same agent), whose one request was answered.
    waits = of(loop_project, "fallback", "rate_limit_wait")
    assert [w["limit"] for w in waits] == ["rate_limit"], stderr
    starts = [e.get("agent") for e in of(loop_project, "fallback", "action_start")]
    assert starts == ["gemini", "gemini"]
    assert len(fake_gemini.turns) == 3, [r.path for r in fake_gemini.requests]
    first = of(loop_project, "fallback", "action_complete")[0]
    assert "retries a refused call itself: Attempt 2 failed" in first["error"]
    assert not (loop_project.root / "calc.py").exists()  # the next agent was not needed


# The API's answers when it cannot serve the call: Gemini CLI retries any 5xx itself (5 s,
# 10 s, ... up to general.maxAttempts), printing "Attempt N failed with status 5xx".
OVERLOAD_BODIES = {
    503: {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    },
    500: {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}},
}


@pytest.mark.parametrize("status", sorted(OVERLOAD_BODIES))
def test_an_overloaded_api_ends_gemini_s_own_retries_at_its_first_and_ll_loop_waits(
    fake_gemini: FakeGemini, loop_project: LoopProject, status: int
) -> None:
    _default_attempts()
    fake_gemini.reply_error(status, OVERLOAD_BODIES[status])
    fake_gemini.reply_text("Fixed.")
    (loop_project.root / "mine.sh").write_text("echo 'ANSWER = 42' > calc.py\n")
    loop = FALLBACK.replace(
        "    states:", "    rate_limit: {ladder: [0.5, 1], max_wait: 60}\n    states:"
    )

    outcome, stderr = run(loop_project, "fallback", loop)

    assert outcome["final_state"] == "done", stderr
    # Its "Attempt 1 failed with status 5xx. Retrying with backoff..." ended it before its
    # own 5 s backoff: ll-loop's overload wait (the ladder's 0.5 s) ran the step again on
    # the same agent (an overload waits; it is no usage limit), whose one request was answered.
    waits = of(loop_project, "fallback", "rate_limit_wait")
    assert [w["limit"] for w in waits] == ["overloaded"], stderr
    assert waits[0]["seconds"] == 0.5, waits
    starts = [e.get("agent") for e in of(loop_project, "fallback", "action_start")]
    assert starts == ["gemini", "gemini"]
    assert len(fake_gemini.turns) == 2, [r.path for r in fake_gemini.requests]
    first = of(loop_project, "fallback", "action_complete")[0]
    assert (
        f"retries a refused call itself: Attempt 1 failed with status {status}" in (first["error"])
    )
    assert "usage limit" not in stderr
    assert not (loop_project.root / "calc.py").exists()  # the next agent was not needed


def test_a_line_like_gemini_s_retry_printed_by_the_agent_s_own_command_ends_nothing(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    _default_attempts()
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    look_alike = "Attempt 1 failed: quota exceeded (429). Retrying after 5000ms..."
    fake_gemini.reply_call(
        {"command": f"echo '{look_alike}'; echo '{look_alike}' >&2; sed -i s/41/42/ calc.py"}
    )
    fake_gemini.reply_text("Fixed: ANSWER is 42.")

    outcome, stderr = run(loop_project, "fix-calc", FIX_LOOP)

    assert (outcome["terminated_by"], outcome["final_state"]) == ("terminal", "done"), stderr
    assert of(loop_project, "fix-calc", "rate_limit_wait") == []
    assert len(fake_gemini.turns) == 2
    assert (loop_project.root / "calc.py").read_text() == "ANSWER = 42\n"


RESUMED = """\
    name: resumed
    initial: fix
    agent: gemini
    gemini: {model: gemini-2.5-flash}
    states:
      fix:
        action_type: prompt
        action: "Fix calc.py"
        session: continue
        session_key: shared
        evaluate: {type: exit_code}
        next: again
      again:
        action_type: prompt
        action: "Check it again"
        session: continue
        session_key: shared
        evaluate: {type: exit_code}
        next: done
      done:
        terminal: true
"""


HELLO = """\
    name: hello
    initial: ask
    agent: gemini
    states:
      ask:
        action_type: prompt
        action: "Say hello"
        next: again
      again:
        action_type: prompt
        action: "Say it again"
        next: done
      done:
        terminal: true
"""


def test_a_resumed_session_s_earlier_failed_call_is_not_counted_again(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    # Gemini CLI's record holds the whole session: the second step resumes it, and only
    # its own calls are its own.
    fake_gemini.reply_call({"command": "echo boom; exit 3"})
    fake_gemini.reply_text("Fixed calc.py.")
    fake_gemini.reply_call({"command": "echo fine"})
    fake_gemini.reply_text("Still fixed.")
    loop_project.write("resumed", RESUMED)

    done = llproc.console(loop_project.root, "run", "resumed", timeout=240)

    assert done.returncode == ExitCode.OK, done.stderr
    starts = of(loop_project, "resumed", "action_start")
    assert starts[1].get("resume_session")  # the same session, resumed
    completes = of(loop_project, "resumed", "action_complete")
    assert [c.get("tools_failed") for c in completes] == [1, None]


def test_a_model_of_gemini_s_own_settings_with_no_price_stops_a_budgeted_run(
    fake_gemini: FakeGemini, loop_project: LoopProject
) -> None:
    """The loop names no model, so the preflight counts on Gemini CLI's default family; but
    the user's settings.json chose `gemma-3-27b-it`, which has no known price. The first
    step's tokens cannot be counted: with --max-cost the run stops after it, exit 6."""
    settings = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "model": {"name": "gemma-3-27b-it"}}))
    fake_gemini.reply_text("Hello.", usage=usage_metadata(prompt=1000, output=20))
    fake_gemini.reply_text("Hello again.", usage=usage_metadata(prompt=1000, output=20))
    loop_project.write("hello", HELLO)
    done = llproc.console(
        loop_project.root, "run", "hello", "--json", "--max-cost", "1", timeout=240
    )
    assert done.returncode == ExitCode.BUDGET, done.stderr
    assert "warning" not in done.stderr  # the preflight thought it would be counted
    assert [turn.model for turn in fake_gemini.turns] == ["gemma-3-27b-it"]  # one step only
    (step,) = of(loop_project, "hello", "action_complete")
    assert step["uncounted"] == "it used 1,020 tokens, and no price is known for its model"
    outcome = json.loads(done.stdout)
    assert outcome["error"] == (
        "the budget $1 (max_cost_usd, --max-cost) cannot be kept: state 'ask' ran on gemini,"
        " whose spend cannot be counted: it used 1,020 tokens, and no price is known for its"
        " model"
    )
