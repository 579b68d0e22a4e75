"""Reading `codex exec --json` output, on lines recorded from the real Codex CLI 0.171."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from little_loops.fsm.actions import codex_events
from little_loops.fsm.actions.codex_events import (
    earlier_usage,
    finish,
    lost_session,
    readable,
    reset_time,
    tool_lines,
    usage_limit,
    usage_of,
)
from little_loops.fsm.actions.ratelimit import RATE_LIMIT, USAGE_LIMIT
from little_loops.fsm.actions.request import ActionRequest, ActionResult

FIXTURES = Path(__file__).parent / "fixtures" / "codex"
THREAD = "01a219b6-87f6-7911-8faa-75c3db0e3669"


def recorded(name: str, exit_code: int = 0, stderr: str = "") -> ActionResult:
    return ActionResult((FIXTURES / name).read_text(), stderr, exit_code, 10)


def request(model: str | None = "gpt-5-codex", resume: str | None = None) -> ActionRequest:
    options = {"model": model} if model else {}
    env = {"CODEX_HOME": str(FIXTURES / "codex-home")}
    return ActionRequest("fix it", 60, "codex", env=env, options=options, resume_session=resume)


def test_a_session_that_ran_a_command_gives_its_answer_tokens_cost_thread_and_commands() -> None:
    result = finish(recorded("fix_with_shell.jsonl"), request())
    assert result.output == "Hello from fake"
    assert result.error is None
    assert result.session_id == THREAD
    # Codex counts cached tokens inside input_tokens; the USAGE_KEYS names count them apart.
    assert result.usage == {
        "input_tokens": 160,
        "output_tokens": 14,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 40,
    }
    assert result.cost_usd == pytest.approx((160 * 1.25 + 40 * 0.125 + 14 * 10) / 1e6)
    assert result.model_costs == {"gpt-5-codex": result.cost_usd}
    assert result.tool_calls == [
        "→ $ echo hi > out.txt && echo done",
        "← done",
    ]


def test_a_model_without_a_price_is_counted_in_tokens_only() -> None:
    result = finish(recorded("fix_with_shell.jsonl"), request("my-local-model"))
    assert result.usage is not None
    assert result.usage["output_tokens"] == 14
    assert result.cost_usd is None


def test_a_resumed_session_counts_only_its_own_turn() -> None:
    # turn.completed says 300 input tokens: the thread's total; its rollout file says the
    # thread had used 200 when this turn began.
    result = finish(recorded("resumed.jsonl"), request(resume=THREAD))
    assert result.usage == {
        "input_tokens": 80,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 20,
    }
    assert (
        earlier_usage(THREAD, {"CODEX_HOME": str(FIXTURES / "codex-home")})["output_tokens"] == 14
    )
    assert earlier_usage("no-such-thread", {"CODEX_HOME": str(FIXTURES / "codex-home")}) == {}


def test_a_usage_limit_is_an_error_with_the_time_it_resets() -> None:
    result = finish(recorded("usage_limit.jsonl", exit_code=1), request())
    assert result.error is not None
    assert result.error.startswith("codex failed: You’ve hit your usage limit.")
    now = datetime(2026, 11, 26, 21, 40).timestamp()
    limit = codex_events.usage_limit(result, now)
    assert limit is not None
    assert limit.kind == USAGE_LIMIT
    assert limit.resets_at == datetime(2026, 11, 26, 22, 38).timestamp()


def test_a_rate_limit_is_one_without_a_reset_time() -> None:
    result = finish(recorded("rate_limit.jsonl", exit_code=1), request())
    assert result.error == "codex failed: exceeded retry limit, last status: 429 Too Many Requests"
    limit = usage_limit(result)
    assert limit is not None
    assert (limit.kind, limit.resets_at) == (RATE_LIMIT, None)


def test_a_finished_session_is_never_a_limit() -> None:
    assert usage_limit(finish(recorded("fix_with_shell.jsonl"), request())) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("try again at 10:38 PM.", datetime(2026, 11, 26, 22, 38)),
        ("try again at 9:05 AM.", datetime(2026, 11, 27, 9, 5)),  # passed today: tomorrow
        ("try again at Dec 29th, 2026 10:15 PM.", datetime(2026, 12, 29, 22, 15)),
    ],
)
def test_reset_times_as_codex_words_them(text: str, expected: datetime) -> None:
    now = datetime(2026, 11, 26, 21, 40).timestamp()
    assert reset_time("You’ve hit your usage limit. " + text, now) == expected.timestamp()
    assert reset_time("try again at 13:00 PM", now) is None


def test_a_thread_it_cannot_resume_is_a_lost_session() -> None:
    stderr = (FIXTURES / "lost_session.stderr").read_text()
    result = finish(ActionResult("", stderr, 1, 10), request(resume="01a219b6-0000"))
    assert lost_session(result)
    assert result.error is not None
    assert "no rollout found" in result.error
    assert not lost_session(recorded("fix_with_shell.jsonl"))


def test_output_that_is_not_codex_json_is_kept_and_a_failure_is_an_error() -> None:
    result = finish(ActionResult("plain words\n", "boom\n", 2, 10), request())
    assert result.output == "plain words\n"
    assert result.error == "codex exited with status 2: boom"


@pytest.mark.parametrize("tokens", ["NaN", "Infinity", "1" + "0" * 400])
def test_token_counts_outside_any_plausible_range_are_an_error_of_the_step(tokens: str) -> None:
    # They ended the run with an internal error (int() of NaN, a float of 400 digits).
    text = (
        '{"type": "thread.started", "thread_id": "t-1"}\n'
        '{"type": "item.completed", "item": {"type": "agent_message", "text": "done"}}\n'
        f'{{"type": "turn.completed", "usage": {{"output_tokens": {tokens}}}}}\n'
    )
    result = finish(ActionResult(text, "", 0, 10), request())
    assert result.error is not None
    assert result.error.startswith("codex failed: it reported output_tokens of ")
    assert (result.usage, result.cost_usd, result.output) == (None, None, "done")


def test_the_transcript_as_a_person_reads_it() -> None:
    lines = (FIXTURES / "fix_with_shell.jsonl").read_text().splitlines()
    shown = [text for line in lines for text in readable(line)]
    assert shown == [
        f"· session started (thread {THREAD})",
        "· Model metadata for `gpt-5-fake` not found. Defaulting to fallback metadata; this "
        "can degrade performance and cause issues.",
        "→ $ echo hi > out.txt && echo done",
        "← done",
        "Hello from fake",
        "tokens: 160 in, 14 out",
    ]
    assert readable("not json\n") == ["not json"]
    failed = (FIXTURES / "rate_limit.jsonl").read_text().splitlines()[-1]
    assert readable(failed) == [
        "(codex failed: exceeded retry limit, last status: 429 Too Many Requests)"
    ]


def test_the_live_step_is_the_command_running(tmp_path: Path) -> None:
    out = tmp_path / "step.out"
    lines = (FIXTURES / "fix_with_shell.jsonl").read_text().splitlines()
    out.write_text("\n".join(lines[:4]) + "\n")  # the command has started, not finished
    from little_loops.fsm.actions.codex import latest_step

    assert latest_step(str(out)) == "shell: echo hi > out.txt && echo done"
    out.write_text("\n".join(lines) + "\n")
    assert latest_step(str(out)) == "Hello from fake"
    assert latest_step(str(tmp_path / "missing.out")) is None


def test_tool_lines_are_bounded() -> None:
    line = (FIXTURES / "fix_with_shell.jsonl").read_text().splitlines()[4]
    kept = tool_lines([line] * 150)
    assert len(kept) == 201
    assert kept[-1] == "(and 100 more lines)"


def test_usage_of_reads_only_numbers() -> None:
    assert usage_of({"input_tokens": "x", "output_tokens": True}) == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
