"""A Claude step's cost and tokens reach the run's trace and its notification (real Claude Code)."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from support import llproc
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.otlp import otlp_endpoint

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

LOOP = """\
    name: ask
    initial: work
    states:
      work:
        action_type: prompt
        action: "Say hello"
        evaluate:
          type: output_contains
          pattern: hello
        on_success: done
        on_failure: done
      done:
        terminal: true
    notify:
      command: cat > summary.json
"""


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP endpoint on 127.0.0.1 that keeps each request's path and body."""
    with otlp_endpoint() as endpoint:
        yield endpoint


def _value(attribute: Any) -> Any:
    return getattr(attribute.value, attribute.value.WhichOneof("value"))


def test_the_claude_steps_span_carries_its_cost_and_tokens(
    fake_anthropic: FakeAnthropic, tmp_path: Path, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_text("hello there", usage={"input_tokens": 1500, "output_tokens": 42})
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "ask.yaml").write_text(textwrap.dedent(LOOP))
    endpoint, received = collector
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OTEL_") and not key.lower().endswith("_proxy")
    }
    done = llproc.ll_loop(
        tmp_path, "run", "ask", timeout=120, env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    )
    assert done.returncode == ExitCode.OK, done.stderr
    [(_, body)] = received
    request = ExportTraceServiceRequest.FromString(body)
    spans = {
        span.name: {a.key: _value(a) for a in span.attributes}
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    }
    work = spans["work"]
    assert work["ll_loop.verdict"] == "success"
    assert work["ll_loop.action_type"] == "prompt"
    assert work["ll_loop.exit_code"] == 0
    assert work["ll_loop.tokens.input"] >= 1500
    assert work["ll_loop.tokens.output"] == 42
    assert work["ll_loop.cost_usd"] > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cost_usd"] == pytest.approx(work["ll_loop.cost_usd"])
    assert spans["ll-loop ask"]["ll_loop.cost_usd"] == pytest.approx(summary["cost_usd"])
