"""The request/result pair of every runner: what an action is asked to do, and what it did."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from little_loops.fsm.actions.request import ActionRequest, ActionResult


def test_a_request_needs_only_the_action_its_timeout_and_its_kind() -> None:
    request = ActionRequest("make test", 30.0, "shell")
    assert (request.action, request.timeout, request.kind) == ("make test", 30.0, "shell")
    optional = (
        request.idle_timeout,
        request.cwd,
        request.env,
        request.output_file,
        request.options,
        request.resume_session,
    )
    assert optional == (None,) * 6


def test_a_request_carries_every_option_it_is_given(tmp_path: Path) -> None:
    request = ActionRequest(
        action="Fix it",
        timeout=None,
        kind="claude",
        idle_timeout=60.0,
        cwd=tmp_path,
        env={"A": "1"},
        output_file=tmp_path / "fix.out",
        options={"model": "sonnet"},
        resume_session="s-1",
    )
    assert request.timeout is None
    assert request.idle_timeout == 60.0
    assert request.cwd == tmp_path
    assert dict(request.env or {}) == {"A": "1"}
    assert request.output_file == tmp_path / "fix.out"
    assert dict(request.options or {}) == {"model": "sonnet"}
    assert request.resume_session == "s-1"


def test_a_request_retried_without_its_session_keeps_the_rest() -> None:
    # How the engine runs a Claude action again when its session cannot be resumed.
    request = ActionRequest("Fix it", 10.0, "claude", idle_timeout=5.0, resume_session="s-1")
    fresh = dataclasses.replace(request, resume_session=None)
    assert fresh.resume_session is None
    assert fresh == ActionRequest("Fix it", 10.0, "claude", idle_timeout=5.0)
    assert request.resume_session == "s-1"  # the first request is not changed


def test_a_result_in_the_original_four_field_form() -> None:
    result = ActionResult("out", "err", 3, 120)
    assert (result.output, result.stderr, result.exit_code, result.duration_ms) == (
        "out",
        "err",
        3,
        120,
    )
    assert result.truncated is False
    assert result.timed_out is False
    extras = (
        result.output_path,
        result.error,
        result.cost_usd,
        result.usage,
        result.session_id,
        result.model_costs,
        result.tool_calls,
    )
    assert extras == (None,) * 7


def test_a_result_can_be_filled_in_after_it_is_made() -> None:
    # Runners add what a Claude action reports once its output is read.
    result = ActionResult("x", "", 0, 1)
    result.cost_usd = 0.25
    result.usage = {"input_tokens": 10}
    result.session_id = "s-2"
    assert result == ActionResult(
        "x", "", 0, 1, cost_usd=0.25, usage={"input_tokens": 10}, session_id="s-2"
    )


def test_results_differ_by_any_field() -> None:
    base = ActionResult("x", "", 0, 1)
    assert base == ActionResult("x", "", 0, 1)
    assert base != ActionResult("x", "", 0, 1, error="timed out")
    assert base != ActionResult("x", "", 1, 1)
    assert [f.name for f in dataclasses.fields(ActionResult)][:4] == [
        "output",
        "stderr",
        "exit_code",
        "duration_ms",
    ]
