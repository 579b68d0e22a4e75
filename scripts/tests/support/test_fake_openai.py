"""The fake Responses API answers as scripted and records what it was sent."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from support.fake_openai import SHELL_TOOL, FakeOpenAI


def post(fake: FakeOpenAI, body: dict[str, Any], path: str = "/responses") -> tuple[int, str]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(fake.url + path, data, {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def sse(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_replies_stream_in_order_then_the_default() -> None:
    with FakeOpenAI() as fake:
        fake.reply_shell("pytest -q").reply_text(
            "done", usage={"input_tokens": 5, "output_tokens": 1}
        )
        body = {
            "model": "gpt-5",
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "hi"}],
                }
            ],
        }
        status, text = post(fake, body)
        events = sse(text)
        assert status == 200
        assert [e["type"] for e in events] == [
            "response.created",
            "response.output_item.done",
            "response.completed",
        ]
        call = events[1]["item"]
        assert (call["type"], call["name"]) == ("function_call", SHELL_TOOL)
        assert json.loads(call["arguments"]) == {"cmd": "pytest -q"}
        usage = events[2]["response"]["usage"]
        assert usage["input_tokens_details"] == {"cached_tokens": 200}
        second = sse(post(fake, body)[1])
        assert second[1]["item"]["content"][0]["text"] == "done"
        assert second[2]["response"]["usage"]["total_tokens"] == 6
        assert sse(post(fake, body)[1])[1]["item"]["content"][0]["text"] == "Done."
        assert fake.requests[0].model == "gpt-5"
        assert fake.requests[0].user_texts == ["hi"]


def test_errors_and_other_paths() -> None:
    with FakeOpenAI() as fake:
        fake.reply_usage_limit(resets_at=1_800_000_000)
        status, text = post(fake, {"input": []})
        assert status == 429
        assert json.loads(text)["error"]["type"] == "usage_limit_reached"
        assert json.loads(text)["error"]["resets_at"] == 1_800_000_000
        assert post(fake, {}, "/chat/completions")[0] == 404


def test_it_reads_what_a_client_sent_back() -> None:
    with FakeOpenAI() as fake:
        body = {
            "input": [{"type": "function_call_output", "call_id": "c", "output": "ok"}],
            "tools": [{"type": "function", "name": SHELL_TOOL}],
            "text": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        }
        post(fake, body)
        seen = fake.wait_for_requests(1)[0]
        assert seen.function_outputs == ["ok"]
        assert seen.tool_names == [SHELL_TOOL]
        assert seen.output_schema == {"type": "object"}
    with pytest.raises(AssertionError):
        fake.wait_for_requests(2, timeout=0.1)
