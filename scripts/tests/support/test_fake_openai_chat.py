"""The Chat Completions stand-in: its scripted answers as JSON and as a stream, its record."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from support.fake_openai_chat import FakeOpenAIChat, error_reply, usage
from support.slowdown import scaled

BASH = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}


@pytest.fixture
def fake() -> Iterator[FakeOpenAIChat]:
    with FakeOpenAIChat(side_text="A title") as server:
        yield server


def post(fake: FakeOpenAIChat, body: dict[str, Any]) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(
        fake.url + "/chat/completions",
        json.dumps(body).encode(),
        {"content-type": "application/json", "authorization": "Bearer sk-test"},
    )
    try:
        with urllib.request.urlopen(request, timeout=scaled(5)) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), dict(error.headers)


def turn(stream: bool = False, **more: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": "fix it"}]
    return {"model": "m", "messages": messages, "tools": [BASH], "stream": stream, **more}


def test_a_tool_call_then_text_as_json(fake: FakeOpenAIChat) -> None:
    fake.reply_tool("bash", {"command": "ls"}, usage=usage(10, 2))
    fake.reply_text("done")
    status, body, _ = post(fake, turn())
    assert status == 200
    choice = json.loads(body)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "bash",
        {"command": "ls"},
    )
    assert json.loads(body)["usage"]["prompt_tokens"] == 10
    _, body, _ = post(fake, turn())
    assert json.loads(body)["choices"][0]["message"]["content"] == "done"
    assert fake.pending == 0
    assert [r.credential for r in fake.turns] == ["sk-test", "sk-test"]


def test_a_stream_ends_with_finish_reason_usage_and_done(fake: FakeOpenAIChat) -> None:
    fake.reply_tool("bash", {"command": "ls"}, text="Looking", usage=usage(7, 3, cached=2))
    status, body, headers = post(fake, turn(stream=True))
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    data = [line.removeprefix("data: ") for line in body.splitlines() if line]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    delta = chunks[0]["choices"][0]["delta"]
    assert (delta["content"], delta["tool_calls"][0]["index"]) == ("Looking", 0)
    assert chunks[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[2]["usage"]["prompt_tokens_details"] == {"cached_tokens": 2}


def test_a_request_without_tools_gets_the_side_text_and_takes_no_reply(
    fake: FakeOpenAIChat,
) -> None:
    fake.reply_text("for the turn")
    _, body, _ = post(fake, {"model": "m", "messages": [{"role": "user", "content": "title?"}]})
    assert json.loads(body)["choices"][0]["message"]["content"] == "A title"
    assert (fake.pending, len(fake.side_requests), fake.turns) == (1, 1, [])


def test_errors_repeat_until_their_time_then_the_next_reply(fake: FakeOpenAIChat) -> None:
    until = time.time() + scaled(1)
    fake.reply_until(until, error_reply(429, "quota", "insufficient_quota"))
    fake.reply_text("back")
    status, body, _ = post(fake, turn())
    assert (status, json.loads(body)["error"]["code"]) == (429, "insufficient_quota")
    assert post(fake, turn())[0] == 429
    time.sleep(max(0.0, until - time.time()) + 0.01)  # until its time is past, no longer
    assert post(fake, turn())[0] == 200
    fake.reply_error(401, headers={"retry-after": "3"})
    status, body, headers = post(fake, turn())
    assert (status, json.loads(body)["error"]["type"], headers["retry-after"]) == (
        401,
        "invalid_api_key",
        "3",
    )
    assert post(fake, turn())[0] == 500  # nothing scripted is left


def test_the_record_reads_messages_tools_and_results(fake: FakeOpenAIChat) -> None:
    fake.reply_text("ok")
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "assistant", "content": "calling", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": "ANSWER = 42\n"},
    ]
    post(fake, {"model": "m", "messages": messages, "tools": [BASH]})
    (request,) = fake.turns
    assert (request.model, request.user_texts, request.assistant_texts) == (
        "m",
        ["fix it"],
        ["calling"],
    )
    assert (request.tool_results, request.tool_names) == (["ANSWER = 42\n"], ["bash"])
    assert request.tool("bash")["parameters"] == {"type": "object"}
    with pytest.raises(KeyError):
        request.tool("edit")


def test_a_slow_reply_answers_after_its_delay(fake: FakeOpenAIChat) -> None:
    fake.reply_text("slow", delay=0.5)
    started = time.monotonic()
    status, body, _ = post(fake, turn())
    assert time.monotonic() - started >= 0.5
    assert (status, json.loads(body)["choices"][0]["message"]["content"]) == (200, "slow")
