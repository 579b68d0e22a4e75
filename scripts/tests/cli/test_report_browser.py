"""The HTML report in a real headless Chromium: it loads offline, with no console errors,
and shows the graph, the timeline and the steps; a screenshot of it can be taken."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from support import browser, llproc
from support.doc_checks import FIX
from support.fake_claude import json_line, stream_claude
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode


@pytest.fixture(scope="module")
def chromium() -> str:
    return browser.chromium()


@pytest.fixture
def page(loop_project: LoopProject, tmp_path: Path) -> Path:
    loop_project.write("fix", FIX)  # fails until the third pass
    assert llproc.console(loop_project.root, "run", "fix").returncode == ExitCode.OK
    html = tmp_path / "report.html"
    result = llproc.console(loop_project.root, "report", "fix", "--html", str(html))
    assert result.returncode == ExitCode.OK, result.stderr
    return html


def test_the_report_loads_offline_with_no_console_errors(chromium: str, page: Path) -> None:
    loaded = browser.load(chromium, page)
    assert loaded.console == []
    assert '<svg class="graph"' in loaded.dom
    assert '<svg class="timeline"' in loaded.dom
    assert loaded.dom.count('class="edge taken"') == 3  # check→fix, fix→check, check→done
    assert loaded.dom.count("<details>") == 5  # check, fix, check, fix, check
    assert ">3×<" in loaded.dom  # check was visited three times


def test_console_errors_would_be_seen(chromium: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); nope();</script>")
    loaded = browser.load(chromium, broken)
    assert any("boom" in line for line in loaded.console)
    assert any("nope" in line for line in loaded.console)


def test_a_screenshot_of_the_report(chromium: str, page: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    browser.screenshot(chromium, page, png)
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a page with pictures, not a blank one


# What Claude runs (its Bash tool) and what that printed: hostile text, shown, never run.
HOSTILE_COMMAND = 'echo "<script>console.error(1)</script>"'
HOSTILE_RESULT = "<img src=x onerror=console.error(2)>"


def _tool_session() -> str:
    """The body of a `claude` that prints a stream-json session with one Bash tool call."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": HOSTILE_COMMAND}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": HOSTILE_RESULT}
    return "".join(
        json_line(line)
        for line in (
            {"type": "system", "subtype": "init", "model": "claude-x"},
            {"type": "assistant", "message": {"id": "m1", "content": [call]}},
            {"type": "user", "message": {"content": [result]}},
            {"type": "result", "subtype": "success", "result": "done", "total_cost_usd": 0.0003},
        )
    )


def test_a_library_run_s_report_draws_its_whole_loop_why_it_stalled_and_claude_s_tool_calls(
    chromium: str, loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`library:fix-tests` whose tests never pass: Claude's steps change nothing, so the
    stall breaker ends the run. Its report drew only the states the run visited, no reason
    for the stall, "no verdict" for Claude's steps and none of Claude's tool calls."""
    stream_claude(tmp_path, monkeypatch, _tool_session())
    root = loop_project.root
    run = llproc.console(root, "run", "library:fix-tests", "false", timeout=60)
    assert run.returncode == ExitCode.STALL, run.stderr
    page = tmp_path / "report.html"
    done = llproc.console(root, "report", "fix-tests", "--html", str(page))
    assert done.returncode == ExitCode.OK, done.stderr
    raw = page.read_text()
    assert "<script" not in raw
    assert "<img" not in raw

    loaded = browser.load(chromium, page)
    assert loaded.console == []  # nothing from the run was run as script
    dom = loaded.dom
    # Every state and transition of the loop, `done` and test → done never reached.
    nodes = re.findall(r'<g class="(node[^"]*)"><title>([^<]*)</title>', dom)
    assert nodes == [
        ("node visited initial", "test: 3 visit(s)"),
        ("node visited", "fix: 2 visit(s)"),
        ("node terminal", "done: 0 visit(s)"),
    ]
    assert dom.count('class="edge taken"') == 2  # test → fix, fix → test
    assert dom.count('class="edge"') == 1  # test → done, never taken
    # How it ended and why: the breaker and its counts.
    assert 'Ended in <b>test</b>: <span class="v bad">a failure</span>.' in dom
    assert "(detector same_result, state test, count 3, limit 3)" in dom
    assert "gave the same verdict on the same output 3 times in a row" in dom
    # Claude's steps: how the session ended, and its tool calls as `ll-loop logs` shows them.
    summaries = [re.sub(r"<[^>]+>", "", s) for s in re.findall(r"<summary>(.*?)</summary>", dom)]
    assert [s.split(" · ")[:2] for s in summaries] == [
        ["#1 test", "failure"],
        ["#2 fix", "claude: success"],
        ["#3 test", "failure"],
        ["#4 fix", "claude: success"],
        ["#5 test", "failure"],
    ]
    logs = llproc.console(root, "logs", "fix-tests", "fix")
    calls = [line for line in logs.stdout.splitlines() if line.startswith(("→ ", "← "))]
    assert calls == [
        f"→ Bash {json.dumps({'command': HOSTILE_COMMAND})}",
        f"← {HOSTILE_RESULT}",
    ]
    shown = re.findall(r'<pre class="tools">(.*?)</pre>', dom, re.S)
    assert shown == [html.escape("\n".join(calls), quote=False)] * 2


JUDGED = """\
    name: judged
    initial: fix
    states:
      fix:
        action: /fix the bug
        route:
          success: done
          _: stuck
      done:
        terminal: true
      stuck:
        terminal: true
        outcome: failure
"""


def test_the_report_shows_the_judge_s_verdict_and_the_terminal_it_ended_in(
    chromium: str, loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Claude step judged by the LLM evaluator (through Claude Code): its verdict, the
    judge's confidence and reason; the run ends in `stuck`, a terminal that is a failure."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)  # the judge is Claude Code
    answer = {"verdict": "failure", "confidence": 0.8, "reason": "<b>still red</b>"}
    judge = {"type": "result", "result": "", "structured_output": answer, "total_cost_usd": 0.0001}
    stream_claude(
        tmp_path,
        monkeypatch,
        f'case "$*" in *--json-schema*) {json_line(judge)};; *) {_tool_session()};; esac',
    )
    loop_project.write("judged", JUDGED)
    run = llproc.console(loop_project.root, "run", "judged", timeout=60)
    assert run.returncode == ExitCode.TERMINAL_FAILURE, run.stderr
    page = tmp_path / "judged.html"
    done = llproc.console(loop_project.root, "report", "judged", "--html", str(page))
    assert done.returncode == ExitCode.OK, done.stderr
    assert "terminal_failure in stuck (failure) · 1 passes" in done.stdout

    loaded = browser.load(chromium, page)
    assert loaded.console == []
    dom = loaded.dom
    assert '<span class="badge bad">terminal_failure</span>' in dom
    assert 'Ended in <b>stuck</b>: <span class="v bad">a failure</span>.' in dom
    assert '#1 <b>fix</b> · <span class="v bad">failure</span>' in dom
    assert "verdict of llm_structured: failure (confidence 0.80)</p><pre>&lt;b&gt;still red" in dom


FALLBACK = """\
name: fallback
initial: fix
agent: [first, second]
agents:
  first: {command: ./first.sh, limit_pattern: "usage limit reached"}
  second: {command: ./second.sh, cost_pattern: 'cost: \\$([0-9.]+)'}
states:
  fix:
    action_type: prompt
    action: "Fix <it>"
    evaluate: {type: exit_code}
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_the_report_shows_the_cost_per_agent_and_the_switch(
    chromium: str, loop_project: LoopProject, tmp_path: Path
) -> None:
    """A step whose first agent hit its usage limit and whose second agent did it (both
    bash scripts): the page lists each agent's actions and cost, and the switch."""
    root = loop_project.root
    for name, body in (
        ("first", 'echo "usage limit reached"; exit 1'),
        ("second", "echo fixed; echo 'cost: $0.125'"),
    ):
        (root / f"{name}.sh").write_text(f"#!/usr/bin/env bash\n{body}\n")
        (root / f"{name}.sh").chmod(0o755)
    loop_project.write("fallback", FALLBACK)
    run = llproc.console(root, "run", "fallback", timeout=60)
    assert run.returncode == ExitCode.OK, run.stderr
    page = tmp_path / "fallback.html"
    done = llproc.console(root, "report", "fallback", "--html", str(page))
    assert done.returncode == ExitCode.OK, done.stderr
    assert "switch in fix: first's usage limit: on with second" in done.stdout

    loaded = browser.load(chromium, page)
    assert loaded.console == []
    (section,) = re.findall(r'<section class="agents">(.*?)</section>', loaded.dom, re.S)
    rows = [
        re.sub(r"<[^>]+>", "|", row).strip("|").split("||")
        for row in re.findall(r'<tr class="agent">(.*?)</tr>', section, re.S)
    ]
    # agent, model (none said), actions, cost, tokens
    assert rows == [["first", "", "1", "–", "–"], ["second", "", "1", "$0.1250", "–"]]
    assert "fix: first's usage limit: on with second" in html.unescape(section)
    assert '<p class="muted">second action:</p><pre>Fix &lt;it&gt;</pre>' in loaded.dom
