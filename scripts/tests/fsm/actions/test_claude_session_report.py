"""What a Claude Code report says about its session: the id, the cost per model, a lost resume."""

from __future__ import annotations

import json

from little_loops.fsm.actions.claude import (
    apply_report,
    lost_session,
    model_costs,
    partial_session,
)
from little_loops.fsm.actions.request import ActionResult

INIT = {"type": "system", "subtype": "init", "session_id": "sess-9"}
ASSISTANT = {
    "type": "assistant",
    "session_id": "sess-9",
    "message": {"id": "m1", "model": "claude-x", "content": [{"type": "text", "text": "hi"}]},
}
REPORT = {
    "type": "result",
    "result": "done",
    "session_id": "sess-9",
    "total_cost_usd": 0.5,
    "modelUsage": {"claude-a": {"costUSD": 0.4}, "claude-b": {"costUSD": 0.1}, "x": {}},
}


def _stream(*lines: dict[str, object]) -> str:
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_the_report_gives_the_session_id_and_the_cost_of_each_model() -> None:
    result = apply_report(ActionResult(_stream(INIT, ASSISTANT, REPORT), "", 0, 5))
    assert (result.output, result.session_id) == ("done", "sess-9")
    assert result.model_costs == {"claude-a": 0.4, "claude-b": 0.1}
    assert model_costs({"modelUsage": "nonsense"}) == {}


def test_a_session_cut_short_still_has_its_id() -> None:
    partial = partial_session(_stream(INIT, ASSISTANT).splitlines())
    assert partial is not None
    assert partial.session_id == "sess-9"
    result = apply_report(ActionResult(_stream(INIT, ASSISTANT), "", 0, 5))
    assert result.session_id == "sess-9"


def test_a_session_claude_code_has_no_file_for_is_lost() -> None:
    stderr = "No conversation found with session ID: 7d9c2b1a-0000-4000-8000-000000000000\n"
    assert lost_session(ActionResult("", stderr, 1, 5))
    assert not lost_session(ActionResult("", "Invalid API key\n", 1, 5))
    assert not lost_session(ActionResult("", stderr, 0, 5))
