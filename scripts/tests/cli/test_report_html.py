"""The HTML page of a report (cli/report_html.py) from a run's events: how it ended and why,
each step's verdict, Claude's tool calls; every text from the run escaped."""

from __future__ import annotations

import re
from typing import Any

from little_loops.cli.report_html import render_html
from little_loops.fsm.runs.report import Report, build_report

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def _ev(kind: str, second: int, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "ts": f"2026-01-15T10:00:{second:02d}.000+00:00", **fields}


def _run(*events: dict[str, Any]) -> Report:
    return build_report("fix", "20260115-100000", [_ev("loop_start", 0, loop="fix"), *events])


def _claude_step(second: int, **complete: Any) -> list[dict[str, Any]]:
    return [
        _ev("state_enter", second, state="fix", iteration=1),
        _ev("action_start", second, state="fix", action="/fix it", action_type="prompt"),
        _ev("action_complete", second + 1, state="fix", exit_code=0, duration_ms=900, **complete),
    ]


def _summaries(page: str) -> list[str]:
    """The text of each step's heading, tags removed."""
    return [re.sub(r"<[^>]+>", "", s) for s in re.findall(r"<summary>(.*?)</summary>", page)]


def test_hostile_text_from_the_run_is_escaped_everywhere() -> None:
    stall = {"detector": HOSTILE, "state": HOSTILE, "limit": 3, "count": 3}
    page = render_html(
        [
            _run(
                *_claude_step(1, output=HOSTILE, error=HOSTILE, tool_calls=[f"→ Bash {HOSTILE}"]),
                _ev("evaluate", 3, state="fix", type="llm_structured", verdict="x", reason=HOSTILE),
                _ev("stall", 3, state="fix", message=HOSTILE),
                _ev("loop_complete", 3, terminated_by="stall", final_state=HOSTILE, error=HOSTILE)
                | {"stall": stall},
            )
        ]
    )
    assert "<script" not in page
    assert "<img" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 7  # each place it shows


def test_claude_tool_calls_are_shown_as_logs_shows_them() -> None:
    calls = ['→ Bash {"command": "pytest -q"}', "← 1 failed, 3 passed (+12 lines)"]
    page = render_html([_run(*_claude_step(1, output="done", tool_calls=calls))])
    (shown,) = re.findall(r'<pre class="tools">(.*?)</pre>', page, re.S)
    assert shown == "\n".join(calls).replace('"', "&quot;")
    assert "Claude's tool calls (as ll-loop logs shows them):" in page


def test_a_step_no_evaluator_judged_says_how_its_action_ended() -> None:
    page = render_html(
        [
            _run(
                *_claude_step(1, output="done"),
                _ev("route", 2, **{"from": "fix", "to": "test", "verdict": None, "reason": "next"}),
                _ev("state_enter", 2, state="test", iteration=1),
                _ev("action_start", 2, state="test", action="true", action_type="shell"),
                _ev("action_complete", 3, state="test", exit_code=0, duration_ms=5),
                _ev("route", 3, **{"from": "test", "to": "end", "verdict": None, "reason": "next"}),
            )
        ]
    )
    assert "no verdict" not in page
    summaries = _summaries(page)
    assert summaries[0].startswith("#1 fix · claude: success · ")
    assert summaries[1].startswith("#2 test · exit 0 · ")
    assert '<span class="v ok">claude: success</span>' in page


def test_a_judged_claude_step_shows_the_verdict_its_confidence_and_reason() -> None:
    page = render_html(
        [
            _run(
                *_claude_step(1, output="Fixed"),
                _ev(
                    "evaluate",
                    3,
                    state="fix",
                    type="llm_structured",
                    verdict="success",
                    confidence=0.92,
                    reason="The tests pass now.",
                ),
            )
        ]
    )
    assert _summaries(page)[0].startswith("#1 fix · success · ")
    assert (
        "verdict of llm_structured: success (confidence 0.92)</p><pre>The tests pass now." in page
    )


def test_the_ending_names_the_terminal_and_whether_it_is_a_success() -> None:
    good = render_html(
        [_run(_ev("loop_complete", 1, terminated_by="terminal", final_state="done"))]
    )
    assert '<span class="badge ok">terminal</span>' in good
    assert 'Ended in <b>done</b>: <span class="v ok">a success</span>.' in good
    bad = render_html(
        [_run(_ev("loop_complete", 1, terminated_by="terminal_failure", final_state="stuck"))]
    )
    assert '<span class="badge bad">terminal_failure</span>' in bad
    assert 'Ended in <b>stuck</b>: <span class="v bad">a failure</span>.' in bad
    stopped = render_html([_run(_ev("loop_complete", 1, terminated_by="stopped", final_state="a"))])
    assert '<span class="badge other">stopped</span>' in stopped
    assert "Ended in <b>a</b>: stopped." in stopped


def test_the_ending_of_a_stall_says_which_breaker_fired_and_its_counts() -> None:
    message = "stall (same_result: 3): state 'test' gave the same verdict 3 times in a row"
    stall = {"detector": "same_result", "state": "test", "limit": 3, "count": 3}
    page = render_html(
        [
            _run(
                _ev("loop_complete", 1, terminated_by="stall", final_state="test", error=message)
                | {"stall": stall}
            )
        ]
    )
    assert (
        "<b>Why:</b> stall (same_result: 3): state &#x27;test&#x27; gave the same verdict 3 times"
        ' in a row <span class="muted">(detector same_result, state test, count 3, limit 3)'
    ) in page


def test_a_cost_under_a_hundredth_of_a_cent_is_shown_as_every_command_shows_it() -> None:
    page = render_html([_run(*_claude_step(1, output="done", cost_usd=0.00001))])
    assert "&lt;$0.0001" in page
    assert "$0.0000" not in page


def _fallback_run() -> Report:
    """A step Claude could not do (its usage limit) that a second agent did."""
    return _run(
        _ev("state_enter", 1, state="fix", iteration=1),
        _ev("action_start", 1, state="fix", action="/fix", action_type="prompt", agent="claude"),
        _ev(
            "action_complete",
            2,
            state="fix",
            exit_code=1,
            duration_ms=5,
            cost_usd=0.01,
            models={"claude-x": 0.01},
            usage={"input_tokens": 10},
            error="usage limit",
        ),
        _ev(
            "agent_switch",
            2,
            state="fix",
            reason="usage_limit",
            resets="15:00",
            **{"from": "claude", "to": "other"},
        ),
        _ev("action_start", 2, state="fix", action="/fix", action_type="prompt", agent="other"),
        _ev(
            "action_complete",
            3,
            state="fix",
            exit_code=0,
            duration_ms=5,
            cost_usd=0.25,
            models={"other-1": 0.25},
            usage={"input_tokens": 7, "output_tokens": 3},
        ),
        _ev(
            "evaluate",
            3,
            state="fix",
            type="llm_structured",
            verdict="success",
            cost_usd=0.02,
            model="judge-m",
        ),
        _ev("route", 3, **{"from": "fix", "to": "done"}, verdict="success", reason="x"),
        _ev("loop_complete", 3, terminated_by="terminal", final_state="done"),
    )


def test_the_cost_per_agent_and_model_and_the_switches_are_shown() -> None:
    report = _fallback_run()
    data = report.to_dict()
    assert data["agents"] == {
        "claude": {
            "actions": 1,
            "cost_usd": 0.01,
            "tokens": {"input_tokens": 10},
            "models": {"claude-x": 0.01},
        },
        "other": {
            "actions": 1,
            "cost_usd": 0.25,
            "tokens": {"input_tokens": 7, "output_tokens": 3},
            "models": {"other-1": 0.25},
        },
        "judge": {"actions": 0, "cost_usd": 0.02, "tokens": {}, "models": {"judge-m": 0.02}},
    }
    assert data["agent_switches"] == [
        {
            "ts": "2026-01-15T10:00:02.000+00:00",
            "state": "fix",
            "from": "claude",
            "to": "other",
            "reason": "usage_limit",
            "resets": "15:00",
        }
    ]
    assert round(data["cost_usd"], 6) == 0.28  # the budget's sum: every agent and the judge
    page = render_html([report])
    (section,) = re.findall(r'<section class="agents">(.*?)</section>', page, re.S)
    text = re.sub(r"<[^>]+>", " ", section)
    for said in ("claude", "claude-x", "other", "other-1", "judge-m", "$0.25"):
        assert said in text
    assert "fix: claude&#x27;s usage limit (resets 15:00): on with other" in section


def test_a_run_without_agents_has_no_agent_section() -> None:
    page = render_html([_run(_ev("loop_complete", 1, terminated_by="terminal", final_state="x"))])
    assert 'class="agents"' not in page


def test_the_loop_metadata_and_state_descriptions_are_shown() -> None:
    report = _run(_ev("loop_complete", 1, final_state="done", terminated_by="terminal"))
    report.definition = {
        "name": "fix",
        "initial": "done",
        "description": "Fixes <things>.",
        "category": "gate",
        "labels": ["ci"],
        "states": {"done": {"terminal": True, "description": "the end"}},
    }
    page = render_html([report])
    assert "<p>Fixes &lt;things&gt;.</p>" in page
    assert '<span class="badge">gate</span> <span class="badge">ci</span>' in page
