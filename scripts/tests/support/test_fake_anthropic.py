"""The fake Messages API's routes and its stream, through the real anthropic client."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from support.fake_anthropic import FakeAnthropic, is_claude_code_turn, is_judge
from support.slowdown import scaled

if TYPE_CHECKING:
    import anthropic


@pytest.fixture(autouse=True, scope="module")
def _anthropic_client_imported() -> None:
    """The real anthropic client, imported before this module's first test (so that timing
    assertions do not include the import) but not at collection: a pytest worker that runs
    none of these tests never pays for it (about a second of CPU)."""
    global anthropic
    import anthropic


MESSAGES = [{"role": "user", "content": "hi"}]
EVALUATE = {"name": "evaluate", "input_schema": {"type": "object"}}
BASH = {"name": "Bash", "input_schema": {"type": "object"}}


def _client(fake: FakeAnthropic, user_agent: str = "test/1") -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=fake.url,
        api_key="k",
        max_retries=0,
        timeout=scaled(5),
        default_headers={"user-agent": user_agent},
    )


def test_routes_answer_the_requests_they_select(fake_anthropic: FakeAnthropic) -> None:
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    judge = fake_anthropic.route("judge", is_judge)
    agent.reply_text("from the agent route")
    judge.reply_tool({"verdict": "success"})
    fake_anthropic.reply_text("from the server's own queue")
    cli = _client(fake_anthropic, "claude-cli/2.1.197 (external, cli)")
    plain = _client(fake_anthropic)

    side = cli.messages.create(model="m", max_tokens=5, messages=MESSAGES)  # no tools
    turn = cli.messages.create(model="m", max_tokens=5, messages=MESSAGES, tools=[BASH])
    verdict = plain.messages.create(
        model="m",
        max_tokens=5,
        messages=MESSAGES,
        tools=[EVALUATE],
        tool_choice={"type": "tool", "name": "evaluate"},
    )

    assert side.content[0].text == "from the server's own queue"
    assert turn.content[0].text == "from the agent route"
    assert verdict.content[0].input == {"verdict": "success"}
    assert [r.tool_names for r in agent.requests] == [["Bash"]]
    assert [r.tool_names for r in judge.requests] == [["evaluate"]]
    assert fake_anthropic.unrouted == [fake_anthropic.requests[0]]
    with pytest.raises(anthropic.InternalServerError) as info:
        cli.messages.create(model="m", max_tokens=5, messages=MESSAGES, tools=[BASH])
    assert info.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "fake_anthropic: no reply for agent"},
    }


def test_stream_has_the_api_event_sequence(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.reply_tool(
        {"file_path": "/tmp/x", "content": "fixed\n"},
        name="Write",
        text="Writing.",
        usage={"input_tokens": 120, "output_tokens": 30},
    )
    with _client(fake_anthropic).messages.stream(
        model="m", max_tokens=5, messages=MESSAGES, tools=[BASH]
    ) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()

    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert {"text", "input_json", "content_block_stop", "message_delta"} <= set(kinds)
    assert message.stop_reason == "tool_use"
    assert message.content[0].text == "Writing."
    tool = message.content[1]
    assert (tool.name, tool.input) == ("Write", {"file_path": "/tmp/x", "content": "fixed\n"})
    assert (message.usage.input_tokens, message.usage.output_tokens) == (120, 30)
    assert message.usage.cache_read_input_tokens == 0
