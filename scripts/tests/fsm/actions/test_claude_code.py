"""The Claude Code kind: its command line, its report read, its spec as the loop language says."""

from __future__ import annotations

import json
import subprocess
import sys

from little_loops.fsm.actions import claude_code
from little_loops.fsm.actions.claude_options import CLAUDE_OPTIONS
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import Interpolation


def test_the_command_line_has_options_stream_json_resume_and_the_prompt_last() -> None:
    request = ActionRequest("-fix", 10, "claude", options={"model": "m"}, resume_session="sess-1")
    assert claude_code.argv(request, ("claude",)) == [
        "claude",
        "--dangerously-skip-permissions",
        "--model",
        "m",
        "--output-format",
        "stream-json",
        "--verbose",
        "--resume",
        "sess-1",
        "-p",
        "--",
        "-fix",
    ]


def test_finish_reads_the_answer_cost_and_session_of_the_report() -> None:
    report = {"type": "result", "result": "Done", "total_cost_usd": 0.5, "session_id": "s"}
    result = ActionResult(json.dumps(report), "", 0, 1)
    done = claude_code.finish(result, ActionRequest("/fix", 10, "claude"))
    assert (done.output, done.cost_usd, done.session_id, done.error) == ("Done", 0.5, "s", None)


def test_finish_names_the_root_refusal() -> None:
    said = "--dangerously-skip-permissions cannot be used with root/sudo privileges"
    result = ActionResult("", said, 1, 1)
    done = claude_code.finish(result, ActionRequest("/fix", 10, "claude"))
    assert done.error == claude_code.CLAUDE_ROOT_ERROR


def test_the_readers_of_limits_sessions_and_transcripts() -> None:
    limited = ActionResult("API Error: 429 rate limited", "", 1, 1, error="claude exited")
    limit = claude_code.usage_limit(limited)
    assert limit is not None
    assert limit.kind == "rate_limit"
    assert claude_code.usage_limit(ActionResult("ok", "", 0, 1)) is None
    lost = ActionResult("", "No conversation found with session ID: x", 1, 1)
    assert claude_code.lost_session(lost)
    assert not claude_code.lost_session(ActionResult("", "", 0, 1))
    line = json.dumps({"type": "result", "result": "All fixed", "total_cost_usd": 0.01})
    assert any("All fixed" in text for text in claude_code.readable(line))


def test_the_spec_is_what_prompt_and_slash_command_meant_before_kinds() -> None:
    spec = claude_code.SPEC
    assert spec.action_types == ("prompt", "slash_command")
    assert spec.interpolation is Interpolation.TEXT
    assert (spec.default_evaluator, spec.default_timeout) == ("llm_structured", 1800)
    assert spec.options_key == "claude"
    assert spec.options is CLAUDE_OPTIONS
    assert spec.state_keys == ("claude", "session", "session_key")
    assert spec.sessions
    assert not spec.loop_idle_timeout
    assert spec.label == "Claude session"
    assert spec.quiet_seconds == 120


def test_checking_a_loop_file_does_not_import_the_transcript_readers() -> None:
    code = (
        "import sys, little_loops.fsm.actions.registry\n"
        "print(sorted(m for m in ('json', 'little_loops.fsm.actions.transcript',"
        " 'little_loops.fsm.actions.ratelimit') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
