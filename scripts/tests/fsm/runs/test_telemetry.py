"""A run as an OpenTelemetry trace: spans from its events, OTLP export, and no import without it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from support import llproc
from support.otlp import otlp_endpoint
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.archive import list_runs
from little_loops.fsm.runs.notify import RunSummary, summarize
from little_loops.fsm.runs.telemetry import INSTALL_HINT, export_run, last_part

# check fails once, then passes: states check, fix, check, done.
LOOP = """\
    name: tele
    initial: check
    states:
      check:
        action: test -f fixed
        on_success: done
        on_failure: fix
      fix:
        action: touch fixed
        next: check
      done:
        terminal: true
"""


def _env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OTEL_") and not key.lower().endswith("_proxy")
    }
    return {**env, **extra}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "tele.yaml").write_text(textwrap.dedent(LOOP))
    return tmp_path


def _ran(root: Path) -> tuple[list[dict[str, Any]], RunSummary]:
    """Run the loop with the console script; its events and its summary."""
    done = llproc.ll_loop(root, "run", "tele", env=_env())
    assert done.returncode == ExitCode.OK, done.stderr
    [archived], _ = list_runs(root / ".loops", "tele")
    state = llproc.state(root, "tele")
    return llproc.events(root, "tele"), summarize("tele", state, archived, root / ".loops")


def test_a_run_is_one_trace_with_a_span_per_state_visit(project: Path) -> None:
    events, summary = _ran(project)
    exporter = InMemorySpanExporter()
    assert export_run(events, summary, {}, exporter) is None
    spans = exporter.get_finished_spans()
    root = next(span for span in spans if span.parent is None)
    states = [span for span in spans if span is not root]
    # The terminal state is reached, not run: it is the root's last_state, not a span.
    assert [span.name for span in states] == ["check", "fix", "check"]
    assert {span.context.trace_id for span in spans} == {root.context.trace_id}
    assert all(span.parent and span.parent.span_id == root.context.span_id for span in states)
    assert root.name == "ll-loop tele"
    assert dict(root.attributes or {}) == {
        "ll_loop.loop": "tele",
        "ll_loop.run_id": summary.run_id,
        "ll_loop.outcome": "done",
        "ll_loop.exit_code": 0,
        "ll_loop.cost_usd": 0.0,
        "ll_loop.passes": summary.passes,
        "ll_loop.last_state": "done",
        "ll_loop.resumed": False,
    }
    first = dict(states[0].attributes or {})
    assert first["ll_loop.verdict"] == "failure"
    assert first["ll_loop.exit_code"] == 1
    assert first["ll_loop.next_state"] == "fix"
    assert (first["ll_loop.cost_usd"], first["ll_loop.tokens.input"]) == (0.0, 0)
    assert dict(states[2].attributes or {})["ll_loop.verdict"] == "success"
    assert root.start_time is not None
    assert root.end_time is not None
    for span in states:
        assert span.start_time is not None
        assert span.end_time is not None
        assert root.start_time <= span.start_time <= span.end_time <= root.end_time


def test_cost_tokens_and_an_error_verdict_are_on_the_states_span() -> None:
    events = [
        {"event": "loop_start", "ts": "2026-01-01T10:00:00.000+00:00", "resumed": True},
        {"event": "state_enter", "ts": "2026-01-01T10:00:00.100+00:00", "state": "ask"},
        {"event": "action_start", "ts": "2026-01-01T10:00:00.100+00:00", "action_type": "prompt"},
        {
            "event": "action_complete",
            "ts": "2026-01-01T10:00:03.000+00:00",
            "exit_code": 0,
            "cost_usd": 0.25,
            "usage": {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 7},
        },
        {"event": "evaluate", "ts": "2026-01-01T10:00:04.000+00:00", "verdict": "error",
         "type": "llm_structured", "cost_usd": 0.01},
        {"event": "loop_complete", "ts": "2026-01-01T10:00:05.000+00:00"},
    ]  # fmt: skip
    summary = RunSummary(
        "20260101-095500", "asker", "failed", "error", "failed", 1, 5000, 0.26, "ask", 1,
        "2026-01-01T09:55:00.000+00:00", "2026-01-01T10:00:05.000+00:00", "no route", None, None,
    )  # fmt: skip
    exporter = InMemorySpanExporter()
    assert export_run(events, summary, {}, exporter) is None
    root, ask = sorted(exporter.get_finished_spans(), key=lambda span: span.parent is not None)
    attributes = dict(ask.attributes or {})
    assert attributes["ll_loop.cost_usd"] == 0.26
    assert attributes["ll_loop.tokens.input"] == 1200
    assert attributes["ll_loop.tokens.output"] == 300
    assert attributes["ll_loop.tokens.cache_read_input"] == 7
    assert attributes["ll_loop.action_type"] == "prompt"
    assert ask.status.status_code == StatusCode.ERROR
    assert root.status.status_code == StatusCode.ERROR
    assert dict(root.attributes or {})["ll_loop.resumed"] is True
    # The root spans this part of the run: from its loop_start, not the run's first start.
    assert (ask.end_time or 0) - (root.start_time or 0) == 5_000_000_000


def test_only_the_last_part_of_a_resumed_run_is_its_trace() -> None:
    events = [
        {"event": "loop_start", "ts": "2026-01-01T10:00:00+00:00"},
        {"event": "state_enter", "ts": "2026-01-01T10:00:01+00:00", "state": "a"},
        {"event": "loop_complete", "ts": "2026-01-01T10:00:02+00:00"},
        {"event": "loop_start", "ts": "2026-01-01T11:00:00+00:00", "resumed": True},
        {"event": "state_enter", "ts": "2026-01-01T11:00:01+00:00", "state": "b"},
        {"event": "loop_complete", "ts": "2026-01-01T11:00:02+00:00"},
    ]
    part = last_part(events)
    assert [visit.state for visit in part.visits] == ["b"]
    assert (part.began, part.ended, part.resumed) == (events[3]["ts"], events[5]["ts"], True)


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP endpoint on 127.0.0.1 that keeps each request's path and body."""
    with otlp_endpoint() as endpoint:
        yield endpoint


def test_ll_loop_run_sends_the_trace_to_the_otlp_endpoint(
    project: Path, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    endpoint, received = collector
    done = llproc.ll_loop(project, "run", "tele", env=_env(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint))
    assert (done.returncode, done.stdout) == (ExitCode.OK, "")
    assert "telemetry" not in done.stderr
    [(path, body)] = received
    assert path == "/v1/traces"
    request = ExportTraceServiceRequest.FromString(body)
    [resource_spans] = request.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert service["service.name"] == "ll-loop"
    spans = [span for scope in resource_spans.scope_spans for span in scope.spans]
    assert sorted(span.name for span in spans) == sorted(["ll-loop tele", "check", "fix", "check"])
    assert len({span.trace_id for span in spans}) == 1


# Runs `ll-loop run tele` in this process, then prints the opentelemetry modules it imported.
# With BLOCK=1 the modules cannot be imported at all, as when the extra is not installed.
_WRAPPER = """\
import importlib.abc, os, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

if os.environ.get("BLOCK") == "1":
    sys.meta_path.insert(0, Block())
from little_loops.cli import main_loop
code = main_loop(["run", "tele", "-q"])
print(code, sorted({m.split(".")[0] for m in sys.modules if m.startswith("opentelemetry")}))
"""


def _wrapped(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WRAPPER],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env=_env(**env),
    )


def test_without_the_environment_ll_loop_run_imports_no_opentelemetry(
    project: Path, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    done = _wrapped(project)
    assert done.stdout == "0 []\n", done.stderr
    endpoint, received = collector  # the control: with an endpoint, the SDK is imported
    done = _wrapped(project, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert done.stdout == "0 ['opentelemetry']\n", done.stderr
    assert len(received) == 1


def test_without_the_extra_a_run_says_so_once_and_ends_as_it_would(project: Path) -> None:
    done = _wrapped(project, BLOCK="1", OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    assert done.stdout == "0 []\n", done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("ll-loop:")]
    assert notes == [
        f"ll-loop: telemetry: OpenTelemetry is not installed, no trace was sent ({INSTALL_HINT})"
    ]
