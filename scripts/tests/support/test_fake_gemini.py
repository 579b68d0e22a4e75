"""The scripted Gemini API answers as the real one does: SSE chunks, function calls, 429s."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from support.fake_gemini import SHELL_TOOL, FakeGemini, gemini_home, usage_metadata

BODY = {
    "contents": [{"role": "user", "parts": [{"text": "context"}, {"text": "fix the bug"}]}],
    "tools": [{"functionDeclarations": [{"name": SHELL_TOOL}, {"name": "read_file"}]}],
}


def _post(fake: FakeGemini, path: str, body: Any = BODY) -> tuple[int, str]:
    request = urllib.request.Request(
        fake.url + path, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.strip()]


STREAM = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


def test_streams_a_function_call_then_text_and_records_requests() -> None:
    with FakeGemini() as fake:
        fake.reply_call({"command": "ls"}, text="Looking.", usage=usage_metadata(50, 5))
        fake.reply_text("Done.")
        status, text = _post(fake, STREAM)
        assert status == 200
        chunks = _events(text)
        assert [c["candidates"][0]["content"]["parts"] for c in chunks] == [
            [{"text": "Looking."}],
            [{"functionCall": {"name": SHELL_TOOL, "args": {"command": "ls"}}}],
        ]
        assert "usageMetadata" not in chunks[0]
        assert chunks[-1]["usageMetadata"]["promptTokenCount"] == 50
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        status, text = _post(fake, STREAM)
        assert _events(text)[0]["candidates"][0]["content"]["parts"] == [{"text": "Done."}]
        first = fake.turns[0]
        assert first.model == "gemini-2.5-pro"
        assert first.user_text == "fix the bug"
        assert first.tool_names == [SHELL_TOOL, "read_file"]
        assert fake.pending == 0


def test_quota_errors_and_an_empty_queue() -> None:
    with FakeGemini() as fake:
        fake.reply_quota(daily=True)
        status, text = _post(fake, STREAM)
        assert status == 429
        error = json.loads(text)["error"]
        assert error["status"] == "RESOURCE_EXHAUSTED"
        assert "PerDay" in json.dumps(error["details"])
        status, _ = _post(fake, STREAM)
        assert status == 500  # nothing scripted
        status, text = _post(fake, "/v1beta/models/m:countTokens")
        assert status == 200
        assert json.loads(text)["totalTokens"] > 0
        status, _ = _post(fake, "/v1beta/other")
        assert status == 404


def test_side_requests_get_the_router_choice_and_take_nothing_of_the_script() -> None:
    with FakeGemini() as fake:
        fake.reply_text("hi")
        status, text = _post(fake, "/v1beta/models/gemini-2.5-flash-lite:generateContent")
        assert status == 200
        parts = json.loads(text)["candidates"][0]["content"]["parts"]
        assert json.loads(parts[0]["text"])["model_choice"] == "pro"
        assert fake.pending == 1
        assert fake.turns == []


def test_function_responses_of_earlier_turns_are_read() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": SHELL_TOOL, "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": SHELL_TOOL}}]},
        ]
    }
    with FakeGemini() as fake:
        fake.reply_text("ok")
        _post(fake, STREAM, body)
        request = fake.turns[0]
        assert request.function_calls == [{"name": SHELL_TOOL, "args": {}}]
        assert request.function_responses == [{"name": SHELL_TOOL}]
        assert request.texts("user") == ["go"]


def test_gemini_home_chooses_the_api_key_and_turns_off_the_network_calls(tmp_path: Path) -> None:
    home = gemini_home(tmp_path / "home")
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["general"]["maxAttempts"] == 1
    assert settings["privacy"]["usageStatisticsEnabled"] is False
