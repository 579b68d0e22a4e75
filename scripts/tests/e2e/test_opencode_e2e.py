"""Loops whose prompt states run on the real opencode CLI (opencode-ai from npm), which
talks to a scripted Chat Completions stand-in on 127.0.0.1, run by `ll-loop` itself.

opencode is told of the stand-in by a provider in `OPENCODE_CONFIG_CONTENT`
(`@ai-sdk/openai-compatible`, bundled in its binary, `options.baseURL`). Every test has a
fresh HOME and XDG folders; models.dev, the update check, sharing and LSP downloads are
off, any other address goes to a closed proxy port, and the plugin package opencode would
install into its config folder is marked installed, so nothing but 127.0.0.1 is reached.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_openai_chat import FakeOpenAIChat, error_reply, usage
from support.npm_cli import OPENCODE, cli_or_skip

from little_loops.fsm.actions import opencode
from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

PROVIDER = "fake"
MODEL = "fake-model"
# Dollars per million tokens the stand-in's model costs, so opencode reports a cost.
PRICE = {"input": 2.0, "output": 8.0}
# What opencode's config folder holds so it does not install @opencode-ai/plugin from npm
# in the background: node_modules present, the package in package.json and the lock file.
PLUGIN = {"@opencode-ai/plugin": OPENCODE.version}


@pytest.fixture(scope="session")
def opencode_cli() -> Path:
    """The pinned opencode CLI (installed into .cache/opencode on first use)."""
    return cli_or_skip(OPENCODE)


@pytest.fixture
def fake_chat() -> Iterator[FakeOpenAIChat]:
    with FakeOpenAIChat() as fake:
        yield fake


def opencode_env(cli: Path, fake: FakeOpenAIChat, root: Path, home: Path) -> dict[str, str]:
    """The environment `ll-loop` (and so opencode) runs in: only the stand-in is reached."""
    config = home / ".config" / "opencode"
    (config / "node_modules").mkdir(parents=True)
    (config / "package.json").write_text(json.dumps({"dependencies": PLUGIN}))
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": PLUGIN}}}
    (config / "package-lock.json").write_text(json.dumps(lock))
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Stand-in",
        "options": {"baseURL": fake.url, "apiKey": "sk-fake-test-key"},
        "models": {MODEL: {"name": "Stand-in model", "cost": PRICE}},
    }
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_"))}
    return {
        **keep,
        "PATH": f"{cli.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PWD": str(root),  # opencode works in $PWD, not in the directory it was started in
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG_CONTENT": json.dumps({"provider": {PROVIDER: provider}}),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
    }


@pytest.fixture
def project(
    opencode_cli: Path, fake_chat: FakeOpenAIChat, tmp_path: Path
) -> tuple[Path, dict[str, str]]:
    """A project with a planted bug (calc.py's ANSWER is 41, the check wants 42), and the
    environment to run ll-loop in it."""
    root = tmp_path / "project"
    (root / ".loops").mkdir(parents=True)
    (root / "calc.py").write_text("ANSWER = 41\n")
    return root, opencode_env(opencode_cli, fake_chat, root, tmp_path / "home")


FIX = f"""\
name: fix
initial: fix
agent: opencode
opencode: {{model: {PROVIDER}/{MODEL}}}
rate_limit: {{ladder: [0.5, 1], max_wait: 60}}
states:
  fix:
    action_type: prompt
    action: "-Make the check pass: ANSWER in calc.py must be 42"
    evaluate: {{type: exit_code}}
    on_success: check
    on_failure: failed
    on_error: broken
  check:
    action: python3 -c 'import calc, sys; sys.exit(calc.ANSWER != 42)'
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
  broken:
    terminal: true
"""
PROMPT = "-Make the check pass: ANSWER in calc.py must be 42"
FIX_COMMAND = "sed -i 's/^ANSWER = 41$/ANSWER = 42/' calc.py && cat calc.py"


def run(root: Path, env: dict[str, str], name: str, text: str) -> dict[str, Any]:
    (root / ".loops" / f"{name}.yaml").write_text(textwrap.dedent(text))
    done = llproc.ll_loop(root, "run", name, "--json", timeout=180, env=env)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def test_opencode_fixes_a_planted_bug_with_its_shell_tool(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    fake_chat.reply_tool(
        "bash",
        {"command": FIX_COMMAND, "description": "Fix the constant"},
        usage=usage(1000, 50, cached=200),
    )
    fake_chat.reply_text("ANSWER is 42 now.", usage=usage(1200, 20))

    outcome = run(root, env, "fix", FIX)

    assert outcome["final_state"] == "done", outcome
    assert (root / "calc.py").read_text() == "ANSWER = 42\n"
    first, second = fake_chat.turns
    # The loop's prompt, as written (a leading `-` and all), and its model reach the API.
    assert first.user_texts == [PROMPT]
    assert first.model == MODEL
    assert first.credential == "sk-fake-test-key"
    assert "bash" in first.tool_names
    assert first.tool("bash")["parameters"]["required"] == ["command"]
    # opencode ran the call in the project and sent back what it printed.
    assert second.tool_results == ["ANSWER = 42\n"]
    events = llproc.events(root, "fix")
    (action,) = [e for e in of(events, "action_complete") if e.get("state", "fix") == "fix"][:1]
    assert action["output"] == "ANSWER is 42 now."
    # Tokens and opencode's own cost: (800 * 2 + 50 * 8 + 1200 * 2 + 20 * 8) / 1e6 dollars.
    assert action["usage"]["input_tokens"] == 2000
    assert action["usage"]["cache_read_input_tokens"] == 200
    assert action["usage"]["output_tokens"] == 70
    assert action["cost_usd"] == pytest.approx(0.00456)
    status = llproc.ll_loop(root, "status", "fix", "--json", env=env)
    assert json.loads(status.stdout)["cost_usd"] == pytest.approx(0.00456), status.stdout
    # The kind reads opencode's transcript (the action's .out file) as a person would.
    out = (root / ".loops" / ".running" / "fix.fix.out").read_text().splitlines()
    shown = [text for line in out for text in opencode.readable(line)]
    call = {"command": FIX_COMMAND, "description": "Fix the constant"}
    assert f"→ bash {json.dumps(call, separators=(', ', ': '))}" in shown
    assert "← ANSWER = 42" in shown
    assert shown[-2:] == ["ANSWER is 42 now.", "· step done (1200 in, 20 out, $0.0026)"]
    assert opencode.latest_step(str(root / ".loops" / ".running" / "fix.fix.out")) == (
        "ANSWER is 42 now."
    )


SESSION = f"""\
name: talk
initial: plan
agent: opencode
opencode: {{model: {PROVIDER}/{MODEL}}}
states:
  plan:
    action_type: prompt
    action: "Plan the fix"
    evaluate: {{type: exit_code}}
    session_key: work
    next: fix
  fix:
    action_type: prompt
    action: "Now apply it"
    evaluate: {{type: exit_code}}
    session: continue
    session_key: work
    next: done
  done:
    terminal: true
"""


def test_session_continue_sends_the_earlier_turns(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    fake_chat.reply_text("The plan: change 41 to 42.")
    fake_chat.reply_text("Applied.")

    outcome = run(root, env, "talk", SESSION)

    assert outcome["final_state"] == "done", outcome
    first, second = fake_chat.turns
    assert first.user_texts == ["Plan the fix"]
    assert second.user_texts == ["Plan the fix", "Now apply it"]
    assert second.assistant_texts == ["The plan: change 41 to 42."]
    sessions = {e.get("session_id") for e in of(llproc.events(root, "talk"), "action_complete")}
    assert len(sessions - {None}) == 1, sessions


def test_a_usage_limit_is_recognised_and_waited_out(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    quota = error_reply(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        {"retry-after": "0"},  # opencode's own five retries at once
    )
    # One whole opencode run (six tries) at least, then until a time.
    for _ in range(6):
        fake_chat.reply(quota)
    fake_chat.reply_until(time.time() + 2, quota)
    fake_chat.reply_tool("bash", {"command": FIX_COMMAND, "description": "Fix"})
    fake_chat.reply_text("Fixed after the wait.")

    outcome = run(root, env, "fix", FIX)

    assert outcome["final_state"] == "done", outcome
    events = llproc.events(root, "fix")
    waits = of(events, "rate_limit_wait")
    assert waits, [e["event"] for e in events]
    assert {w["limit"] for w in waits} == {"usage_limit"}
    assert (root / "calc.py").read_text() == "ANSWER = 42\n"
    # The refused tries gave no verdict: the one route out of fix is the good answer's.
    assert [(r["from"], r["to"]) for r in of(events, "route")][:1] == [("fix", "check")]


def test_logs_show_the_opencode_session_as_text(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    fake_chat.reply_text("Nothing to do.")
    once = FIX.replace("on_success: check", "on_success: done")
    assert run(root, env, "fix", once)["final_state"] == "done"
    logs = llproc.ll_loop(root, "logs", "fix", "fix", env=env)
    assert logs.returncode == 0, logs.stderr
    assert "Nothing to do." in logs.stdout.splitlines()


def test_the_docs_loop_and_provider_config_run_as_the_page_says(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    """docs/agents/opencode.md's loop, with its opencode.json (the local model's server
    being the stand-in), fixes the bug; no provider comes from the environment."""
    root, env = project
    blocks = [b for b in all_blocks() if b.doc == "docs/agents/opencode.md"]
    config = json.loads(next(b.text for b in blocks if b.info == "json"))
    local = config["provider"]["local"]
    assert local["options"]["baseURL"].startswith("http://127.0.0.1:")
    local["options"]["baseURL"] = fake_chat.url
    (root / "opencode.json").write_text(json.dumps(config))
    loop = next(b.text for b in blocks if b.text.startswith("name: fix-answer"))
    env = {k: v for k, v in env.items() if k != "OPENCODE_CONFIG_CONTENT"}
    fake_chat.reply_tool("bash", {"command": FIX_COMMAND, "description": "Fix"})
    fake_chat.reply_text("Fixed.")

    outcome = run(root, env, "fix-answer", loop)

    assert outcome["final_state"] == "done", outcome
    assert (root / "calc.py").read_text() == "ANSWER = 42\n"
    assert [t.model for t in fake_chat.turns] == ["qwen3-coder", "qwen3-coder"]
    assert fake_chat.turns[0].user_texts == ["Make the check pass: ANSWER in calc.py must be 42"]


def test_without_a_provider_the_run_stops_before_its_first_step(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    env = {k: v for k, v in env.items() if k != "OPENCODE_CONFIG_CONTENT"}
    (root / ".loops" / "fix.yaml").write_text(textwrap.dedent(FIX))

    done = llproc.ll_loop(root, "run", "fix", env=env, timeout=120)

    assert done.returncode == ExitCode.USAGE, done.stdout + done.stderr
    assert "opencode has no key or login: run `opencode auth login`" in done.stderr
    assert fake_chat.requests == []
    assert not (root / ".loops" / ".running" / "fix.fix.out").exists()


CLAIMED = f"""\
name: claimed
initial: fix
agent: opencode
opencode: {{model: {PROVIDER}/{MODEL}}}
states:
  fix:
    action_type: prompt
    action: "Fix calc.py"
    evaluate: {{type: exit_code}}
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


TWICE = """\
name: twice
initial: ask
agent: opencode
{model}
states:
  ask:
    action_type: prompt
    action: "Say hello"
    evaluate: {{type: exit_code}}
    on_success: again
    on_failure: failed
  again:
    action_type: prompt
    action: "Say it again"
    evaluate: {{type: exit_code}}
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def test_the_step_line_says_when_opencode_s_own_tool_call_failed_though_it_claimed_success(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    root, env = project
    # Its bash command fails (opencode says `completed`, with `exit: 3`) ... then "Fixed".
    failing = "python3 -c 'import sys; sys.exit(3)'"
    fake_chat.reply_tool("bash", {"command": failing, "description": "Fix"})
    fake_chat.reply_text("Fixed calc.py.")
    (root / ".loops" / "claimed.yaml").write_text(CLAIMED)

    done = llproc.ll_loop(root, "run", "claimed", timeout=180, env=env)

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "✓ success" in line]
    assert "(1 of the agent's own tool call failed)" in line
    (complete,) = of(llproc.events(root, "claimed"), "action_complete")
    assert complete["tools_failed"] == 1


FALLBACK = f"""\
name: fallback
initial: fix
agent: [opencode, mine]
opencode: {{model: {PROVIDER}/{MODEL}}}
agents: {{mine: {{command: bash ./mine.sh}}}}
states:
  fix:
    action_type: prompt
    action: "Fix calc.py"
    evaluate: {{type: exit_code}}
    on_success: done
    on_failure: failed
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


@pytest.mark.parametrize("retry_after", ["0", "3600"])
def test_a_usage_limit_gives_way_to_the_next_agent_at_opencode_s_first_own_retry(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat, retry_after: str
) -> None:
    root, env = project
    quota = error_reply(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        {"retry-after": retry_after},  # opencode waits that long (no upper bound) itself
    )
    for _ in range(20):
        fake_chat.reply(quota)
    (root / "mine.sh").write_text("echo 'ANSWER = 42' > calc.py\n")
    (root / ".loops" / "fallback.yaml").write_text(FALLBACK)

    done = llproc.ll_loop(root, "run", "fallback", timeout=180, env=env)

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "↪ opencode's usage limit" in done.stderr
    assert (root / "calc.py").read_text() == "ANSWER = 42\n"
    # opencode 1.18 would retry it five times by itself (a fixed cap, no setting), each
    # after the retry-after: its log line of the first refusal ends it, one request.
    assert len(fake_chat.turns) == 1, len(fake_chat.turns)
    (first, _) = of(llproc.events(root, "fallback"), "action_complete")
    assert "retries a refused call itself: AI_APICallError: You exceeded" in first["error"]
    starts = [e.get("agent") for e in of(llproc.events(root, "fallback"), "action_start")]
    assert starts == ["opencode", "mine"]


@pytest.mark.parametrize(("retry_after", "waited"), [("3600", True), ("0", False)])
def test_a_429_that_names_no_limit_is_a_rate_limit_waited_when_opencode_waits_to_retry_it(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat, retry_after: str, waited: bool
) -> None:
    """A 429 whose words name no quota or limit (a proxy's "try again later") is a rate
    limit. opencode's log line of it has no status (a refused key's looks the same), so
    ll-loop ends opencode when it still runs OPENCODE_SETTLE seconds after it, waiting to
    retry (an hour here): ll-loop's own ladder waits, and the step runs again on the same
    agent (a rate limit is no usage limit: no switch). A retry opencode makes at once goes
    on untouched however long its answer takes (here past OPENCODE_SETTLE: its log says the
    call was sent again; a loaded machine once cut it there and paid a second prompt)."""
    root, env = project
    busy = error_reply(429, "Please try again later.", "server_busy", {"retry-after": retry_after})
    fake_chat.reply(busy)
    fake_chat.reply_text("Fixed calc.py.", delay=0 if waited else opencode.OPENCODE_SETTLE + 3)
    (root / "mine.sh").write_text("echo 'ANSWER = 42' > calc.py\n")
    loop = FALLBACK.replace("states:", "rate_limit: {ladder: [0.5, 1], max_wait: 60}\nstates:")
    (root / ".loops" / "fallback.yaml").write_text(loop)

    done = llproc.ll_loop(root, "run", "fallback", timeout=180, env=env)

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    events = llproc.events(root, "fallback")
    limits = [w["limit"] for w in of(events, "rate_limit_wait")]
    assert limits == (["rate_limit"] if waited else []), done.stderr
    starts = [e.get("agent") for e in of(events, "action_start")]
    assert starts == (["opencode", "opencode"] if waited else ["opencode"])
    assert len(fake_chat.turns) == 2, len(fake_chat.turns)  # the refused one, then the fix
    if waited:
        first = of(events, "action_complete")[0]
        assert (
            "retries a refused call itself: AI_APICallError: Please try again later"
            in (first["error"])
        )
        assert first["duration_ms"] < 60_000  # OPENCODE_SETTLE, not the hour
    assert (root / "calc.py").read_text() == "ANSWER = 41\n"  # the next agent did not run
    assert "usage limit" not in done.stderr


@pytest.mark.parametrize("budget", ["--max-cost", "none"])
def test_a_session_opencode_has_no_price_for_is_not_counted(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat, budget: str
) -> None:
    """The model is opencode's own choice (its config names it, with no `cost`), so
    opencode prints `"cost":0` for the tokens it used and its events never name the model:
    the preflight could not tell, the step's spend is not counted. Under a budget the run
    stops after that step, exit 6, with one line; without one it goes on, the cost `-`."""
    root, env = project
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    del config["provider"][PROVIDER]["models"][MODEL]["cost"]
    config["model"] = f"{PROVIDER}/{MODEL}"
    env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
    fake_chat.reply_text("Hello.", usage=usage(1000, 50))
    fake_chat.reply_text("Hello again.", usage=usage(1000, 50))
    (root / ".loops" / "twice.yaml").write_text(TWICE.format(model=""))
    flags = ["--max-cost", "1"] if budget == "--max-cost" else []
    done = llproc.ll_loop(root, "run", "twice", "--json", *flags, timeout=180, env=env)
    assert "warning" not in done.stderr  # the preflight thought it would be counted
    outcome = json.loads(done.stdout)
    (first, *rest) = of(llproc.events(root, "twice"), "action_complete")
    assert first["uncounted"] == opencode.UNPRICED
    assert "cost_usd" not in first
    assert first["usage"]["input_tokens"] == 1000
    assert outcome["cost_usd"] == 0
    if budget == "--max-cost":
        assert done.returncode == ExitCode.BUDGET, done.stderr
        assert len(fake_chat.turns) == 1  # the next step never ran unbudgeted
        assert rest == []
        why = (
            "the budget $1 (max_cost_usd, --max-cost) cannot be kept: state 'ask' ran on "
            f"opencode, whose spend cannot be counted: {opencode.UNPRICED}"
        )
        assert outcome["terminated_by"] == "budget"
        assert outcome["error"] == why
        (closing,) = [line for line in done.stderr.splitlines() if "Loop stopped" in line]
        assert closing.startswith(f"Loop stopped in ask: {why} (1 iteration, ")
    else:
        assert done.returncode == ExitCode.OK, done.stderr
        assert len(fake_chat.turns) == 2
        assert len(rest) == 1
        report = llproc.ll_loop(root, "report", "twice", env=env)
        assert report.returncode == 0, report.stderr
        rows = [line.split() for line in report.stdout.splitlines() if line.startswith("opencode")]
        assert rows, report.stdout
        assert rows[0][-2:] == ["-", "2,100"], report.stdout  # COST, TOKENS: not counted


def test_a_model_ll_loop_prices_is_counted_when_opencode_says_0(
    project: tuple[Path, dict[str, str]], fake_chat: FakeOpenAIChat
) -> None:
    """opencode has no price for `gpt-5` here (no `cost` in its config, no model list) and
    says 0; the loop names the model, which ll-loop prices: the spend is counted."""
    root, env = project
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    config["provider"][PROVIDER]["models"] = {"gpt-5": {"name": "gpt-5, no price"}}
    env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
    fake_chat.reply_text("Hello.", usage=usage(1000, 50))
    fake_chat.reply_text("Hello again.", usage=usage(1000, 50))
    (root / ".loops" / "twice.yaml").write_text(
        TWICE.format(model=f"opencode: {{model: {PROVIDER}/gpt-5}}")
    )
    done = llproc.ll_loop(root, "run", "twice", "--json", "--max-cost", "1", timeout=180, env=env)
    assert done.returncode == ExitCode.OK, done.stderr
    completes = of(llproc.events(root, "twice"), "action_complete")
    # gpt-5: $1.25 per million input tokens, $10 per million output.
    one = (1000 * 1.25 + 50 * 10.0) / 1e6
    assert [c["cost_usd"] for c in completes] == [pytest.approx(one)] * 2
    assert not any("uncounted" in c for c in completes)
    assert json.loads(done.stdout)["cost_usd"] == pytest.approx(2 * one)
