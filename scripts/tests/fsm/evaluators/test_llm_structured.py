"""The LLM judge through the real anthropic client, pointed at the scripted fake API."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from support.fake_anthropic import FakeAnthropic, Reply
from support.slowdown import scaled

from little_loops.fsm.definition.model.typed import DEFAULT_LLM_MODEL, EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators import evaluate, evaluate_llm_structured
from little_loops.fsm.evaluators.llm_structured import (
    DEFAULT_LLM_PROMPT,
    DEFAULT_LLM_SCHEMA,
    MAX_OUTPUT_CHARS,
    build_message_request,
)
from little_loops.fsm.values.interpolation import InterpolationContext

if TYPE_CHECKING:
    import anthropic


@pytest.fixture(autouse=True, scope="module")
def _anthropic_client_imported() -> None:
    """The real anthropic client, imported before this module's first test (so that timing
    assertions do not include the import) but not at collection: a pytest worker that runs
    none of these tests never pays for it (about a second of CPU)."""
    global anthropic
    import anthropic


CUSTOM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["ship", "hold"]},
        "confidence": {"type": "number"},
        "reason": {"type": "string"},
        "risk": {"type": "string"},
    },
    "required": ["verdict", "confidence", "reason", "risk"],
}


def test_verdict_and_request_shape(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool(
        {"verdict": "success", "confidence": 0.9, "reason": "tests pass"},
        usage={"input_tokens": 321, "output_tokens": 45},
    )
    result = evaluate_llm_structured("12 passed in 0.3s", timeout=5)
    assert result.verdict == "success"
    assert result.details == {
        "confidence": 0.9,
        "confident": True,
        "reason": "tests pass",
        "raw": {"verdict": "success", "confidence": 0.9, "reason": "tests pass"},
        "model": DEFAULT_LLM_MODEL,
        "usage": {"input_tokens": 321, "output_tokens": 45},
    }
    (request,) = fake_anthropic.requests
    assert request.path == "/v1/messages"
    assert request.credential == "sk-ant-fake-test-key"
    assert request.body["model"] == DEFAULT_LLM_MODEL
    assert request.body["max_tokens"] == 256
    assert request.body["tool_choice"] == {"type": "tool", "name": "evaluate"}
    assert request.body["tools"][0]["name"] == "evaluate"
    assert request.body["tools"][0]["input_schema"] == DEFAULT_LLM_SCHEMA
    assert request.user_text == (
        f"{DEFAULT_LLM_PROMPT}\n\n<action_output>\n12 passed in 0.3s\n</action_output>"
    )


def test_output_truncated_to_last_4000_chars(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool({"verdict": "failure", "confidence": 0.8, "reason": "1 failed"})
    output = "HEAD" + "x" * 5000 + "TAIL"
    result = evaluate_llm_structured(output, prompt="Did the tests pass?", timeout=5)
    assert result.verdict == "failure"
    text = fake_anthropic.requests[0].user_text
    assert text.startswith(
        "Did the tests pass?\n\n(Output truncated: the last 4000 of 5008 characters.)\n"
    )
    shown = text.split("<action_output>\n", 1)[1].removesuffix("\n</action_output>")
    assert shown == output[-MAX_OUTPUT_CHARS:]
    assert "HEAD" not in text


@pytest.mark.parametrize(
    ("uncertain_suffix", "verdict"), [(False, "success"), (True, "success_uncertain")]
)
def test_low_confidence(
    fake_anthropic: FakeAnthropic, uncertain_suffix: bool, verdict: str
) -> None:
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 0.4, "reason": "unclear"})
    result = evaluate_llm_structured(
        "maybe fixed?", min_confidence=0.7, uncertain_suffix=uncertain_suffix, timeout=5
    )
    assert result.verdict == verdict
    assert result.details["confidence"] == 0.4
    assert result.details["confident"] is False


def test_confidence_at_threshold_is_confident_and_is_clamped(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.reply_tool({"verdict": "partial", "confidence": 0.7, "reason": "half"})
    fake_anthropic.reply_tool({"verdict": "blocked", "confidence": 85, "reason": "no access"})
    first = evaluate_llm_structured("x", min_confidence=0.7, uncertain_suffix=True, timeout=5)
    assert (first.verdict, first.details["confident"]) == ("partial", True)
    second = evaluate_llm_structured("x", timeout=5)
    assert (second.verdict, second.details["confidence"]) == ("blocked", 1.0)


def test_custom_schema_and_custom_verdicts(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool(
        {"verdict": "hold", "confidence": 0.95, "reason": "migration pending", "risk": "high"}
    )
    result = evaluate_llm_structured(
        "deploy plan: ...", prompt="Is this safe to ship?", schema=CUSTOM_SCHEMA, timeout=5
    )
    assert result.verdict == "hold"
    assert result.details["raw"]["risk"] == "high"
    body = fake_anthropic.requests[0].body
    assert body["tools"][0]["input_schema"] == CUSTOM_SCHEMA
    assert fake_anthropic.requests[0].user_text.startswith("Is this safe to ship?\n\n")


def test_verdict_outside_the_schema_enum_is_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 0.9, "reason": "ok"})
    result = evaluate_llm_structured("x", schema=CUSTOM_SCHEMA, timeout=5)
    assert result.verdict == "error"
    assert result.details["error"] == (
        "the model answered verdict 'success', which is not one of: ship, hold"
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"confidence": 0.9, "reason": "?"}, "the model's evaluation has no verdict"),
        (
            {"verdict": "success", "confidence": "high", "reason": "?"},
            'the model\'s confidence is not a number: "high"',
        ),
        (
            {"verdict": "success", "confidence": True, "reason": "?"},
            "the model's confidence is not a number: true",
        ),
        (
            {"verdict": "success", "confidence": 10**400, "reason": "?"},
            "the model's confidence is not a number: 1" + "0" * 36 + "...",
        ),
    ],
)
def test_unusable_tool_input_is_error(
    fake_anthropic: FakeAnthropic, answer: dict[str, Any], message: str
) -> None:
    fake_anthropic.reply_tool(answer)
    result = evaluate_llm_structured("x", timeout=5)
    assert result.verdict == "error"
    assert result.details["error"] == message


def test_response_without_tool_call_is_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_text("I think it worked.")
    result = evaluate_llm_structured("x", timeout=5)
    assert result.verdict == "error"
    assert (
        result.details["error"]
        == "the model did not call the evaluate tool (stop_reason: end_turn)"
    )


def test_server_error_is_error_after_bounded_retries(fake_anthropic: FakeAnthropic) -> None:
    for _ in range(3):
        fake_anthropic.reply_error(500, headers={"retry-after": "0"})
    started = time.monotonic()
    result = evaluate_llm_structured("x", timeout=5)
    assert time.monotonic() - started < scaled(2, at_most=4.5)  # retry-after 0 was heeded
    assert result.verdict == "error"
    assert result.details["error"] == "API error 500: fake 500"
    assert len(fake_anthropic.requests) == 3  # one call plus two retries, then give up


def test_rate_limit_is_retried_then_succeeds(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_error(429, headers={"retry-after": "0"})
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 1, "reason": "ok"})
    result = evaluate_llm_structured("x", timeout=5)
    assert result.verdict == "success"
    assert len(fake_anthropic.requests) == 2


def test_client_errors_are_not_retried(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_error(
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": "model: bad"}},
    )
    result = evaluate_llm_structured("x", model="claude-nope", timeout=5)
    assert result.details == {"model": "claude-nope", "error": "API error 400: model: bad"}
    assert len(fake_anthropic.requests) == 1


def test_malformed_body_is_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_malformed()
    result = evaluate_llm_structured("x", timeout=5)
    assert result.verdict == "error"
    assert result.details["error"].startswith("bad API response: Expecting value")


def test_hang_past_timeout_is_error_within_timeout_plus_2s(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.reply_hang(30)
    started = time.monotonic()
    result = evaluate_llm_structured("x", timeout=1)
    elapsed = time.monotonic() - started
    assert result.verdict == "error"
    assert result.details["error"] == "API call timed out after 1s"
    assert 0.9 <= elapsed < 1 + scaled(2, at_most=20)  # not the 30 s hang


def test_timeout_bounds_retries_too(fake_anthropic: FakeAnthropic) -> None:
    # a 503 asking for a 30 s pause must not stretch a 1.5 s budget
    fake_anthropic.reply_error(503, headers={"retry-after": "30"})
    started = time.monotonic()
    result = evaluate_llm_structured("x", timeout=1.5)
    assert time.monotonic() - started < scaled(1.5, at_most=20)  # not the 30 s pause
    assert result.details["error"] == "API error 503: fake 503"
    assert len(fake_anthropic.requests) == 1


def test_no_api_key_is_error_without_network(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = evaluate_llm_structured("x", timeout=5)
    assert result.verdict == "error"
    assert result.details == {
        "model": DEFAULT_LLM_MODEL,
        "error": "no API key: set ANTHROPIC_API_KEY",
    }
    assert fake_anthropic.requests == []


def test_auth_token_counts_as_a_key(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-fake")
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 1, "reason": "ok"})
    assert evaluate_llm_structured("x", timeout=5).verdict == "success"
    assert fake_anthropic.requests[0].headers["authorization"] == "Bearer tok-fake"
    assert fake_anthropic.requests[0].credential == "tok-fake"


def test_unreachable_api_is_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic() as fake:
        url = fake.url  # a port that is closed once the fake stops
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    result = evaluate_llm_structured("x", timeout=1.5)
    assert result.verdict == "error"
    assert result.details["error"].startswith("cannot reach the API: ")


def test_dispatcher_uses_loop_llm_settings(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool({"verdict": "failure", "confidence": 0.6, "reason": "3 left"})
    config = EvaluateConfig(
        type="llm_structured",
        prompt="Were all ${context.what} fixed?",
        min_confidence=0.7,
        uncertain_suffix=True,
    )
    result = evaluate(
        config,
        "fixed 2 of 5",
        0,
        InterpolationContext(context={"what": "lint errors"}, env={}),
        llm=LLMConfig(model="claude-test-model", max_tokens=64, timeout=5),
    )
    assert result.verdict == "failure_uncertain"
    body = fake_anthropic.requests[0].body
    assert (body["model"], body["max_tokens"]) == ("claude-test-model", 64)
    assert fake_anthropic.requests[0].user_text.startswith("Were all lint errors fixed?")


def test_build_message_request_is_what_is_sent(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 1, "reason": "ok"})
    evaluate_llm_structured("out", prompt="p", max_tokens=99, timeout=5)
    sent = fake_anthropic.requests[0].body
    assert sent == build_message_request("out", "p", None, DEFAULT_LLM_MODEL, 99)


# --- the fake itself (later issues point the Claude Code CLI at it) ----------------------


def test_fake_streams_tool_use_like_the_api(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 1, "reason": "ok"}, text="hm")
    client = anthropic.Anthropic(max_retries=0, timeout=5)
    with client.messages.stream(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"verdict": "success", "confidence": 1, "reason": "ok"}
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens > 0


def test_fake_count_tokens_and_unknown_paths(fake_anthropic: FakeAnthropic) -> None:
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 400}]})
    req = urllib.request.Request(
        f"{fake_anthropic.url}/v1/messages/count_tokens", data=body.encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert json.load(resp)["input_tokens"] > 100
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"{fake_anthropic.url}/v1/models", timeout=5)
    assert info.value.code == 404


def test_fake_without_script_answers_500_and_stops_while_hanging() -> None:
    fake = FakeAnthropic().start()
    fake.reply_hang(60, then=Reply("message"))
    client = anthropic.Anthropic(base_url=fake.url, api_key="k", max_retries=0, timeout=0.5)
    with pytest.raises(anthropic.APITimeoutError):
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "a"}])
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "a"}])
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < scaled(1, at_most=30)  # not the 60 s hang


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"schema": ["verdict"]}, "schema must be a mapping with type: object"),
        ({"schema": {"type": "string"}}, "schema must be a mapping with type: object"),
        ({"min_confidence": "0.7"}, "min_confidence must be a number, not '0.7'"),
    ],
)
def test_bad_settings_are_error_without_network(
    fake_anthropic: FakeAnthropic, kwargs: dict[str, Any], message: str
) -> None:
    result = evaluate_llm_structured("x", timeout=5, **kwargs)
    assert result.details["error"] == message
    assert fake_anthropic.requests == []
