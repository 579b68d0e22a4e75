"""A run that ended as an OpenTelemetry trace (the `otel` extra): a root span, a span per state."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from little_loops.fsm.engine.events import nested
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.pricing import USAGE_KEYS
from little_loops.fsm.runs.telemetry_env import ENDPOINT_VARS as ENDPOINT_VARS  # its names, kept
from little_loops.fsm.runs.telemetry_env import EXPORTER_VAR
from little_loops.fsm.runs.telemetry_env import wanted as wanted

if TYPE_CHECKING:  # the SDK is an optional extra: imported only when a run is exported
    from opentelemetry.sdk.trace.export import SpanExporter

    from little_loops.fsm.runs.notify import RunSummary

PREFIX = "ll_loop."  # every attribute ll-loop sets: ll_loop.verdict, ll_loop.exit_code ...
INSTALL_HINT = "pip install 'little-loops[otel]'"
_SERVICE = "ll-loop"  # service.name, unless OTEL_SERVICE_NAME says otherwise
Attributes = dict[str, str | int | float | bool]


@dataclass
class Visit:
    """One state visit of a run: when it began and ended, and what it did (span attributes)."""

    state: str
    start: str  # ISO timestamps, as the events have them
    end: str = ""
    attributes: Attributes = field(default_factory=dict)


@dataclass
class Part:
    """The last part of a run (all of it, unless it was resumed): its state visits."""

    visits: list[Visit] = field(default_factory=list)
    began: str = ""
    ended: str = ""
    resumed: bool = False


def last_part(events: Iterable[dict[str, Any]]) -> Part:
    """The state visits from the run's last `loop_start` (a resumed run: what it did since)."""
    part = Part()
    found = part.visits
    for event in events:
        kind, ts = event.get("event"), str(event.get("ts", ""))
        if nested(event):  # a sub-loop's: its cost comes with its state's `evaluate`
            continue
        if kind == Event.LOOP_START:
            part = Part(began=ts, resumed=event.get("resumed") is True)
            found = part.visits
        elif kind == Event.STATE_ENTER:
            if found and not found[-1].end:
                found[-1].end = ts
            found.append(Visit(str(event.get("state", "")), ts, attributes=_fresh(event)))
        elif kind == Event.LOOP_COMPLETE:
            part.ended = ts
            if found and not found[-1].end:
                found[-1].end = ts
        elif found:
            _note_event(found[-1].attributes, kind, event)
    return part


def _fresh(event: dict[str, Any]) -> Attributes:
    """A visit's attributes as it begins: its pass, and nothing spent yet."""
    return {
        f"{PREFIX}iteration": _number(event.get("iteration")),
        f"{PREFIX}cost_usd": 0.0,
        f"{PREFIX}tokens.input": 0,
        f"{PREFIX}tokens.output": 0,
    }


def _note_event(attributes: Attributes, kind: object, event: dict[str, Any]) -> None:
    """Add what *event* says about the visit under way to its *attributes*."""
    if kind == Event.ACTION_START:
        attributes[f"{PREFIX}action_type"] = str(event.get("action_type", ""))
    elif kind == Event.ACTION_COMPLETE:
        attributes[f"{PREFIX}exit_code"] = _number(event.get("exit_code"))
        attributes[f"{PREFIX}duration_ms"] = _number(event.get("duration_ms"))
        _add_cost(attributes, event.get("cost_usd"))
        usage = event.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        for key in USAGE_KEYS:
            count = usage.get(key)
            if isinstance(count, int) and not isinstance(count, bool):
                name = f"{PREFIX}tokens.{key.removesuffix('_tokens')}"
                attributes[name] = int(attributes.get(name, 0)) + count
    elif kind == Event.EVALUATE:
        attributes[f"{PREFIX}verdict"] = str(event.get("verdict", ""))
        attributes[f"{PREFIX}evaluator"] = str(event.get("type", ""))
        _add_cost(attributes, event.get("cost_usd"))
    elif kind == Event.ROUTE:
        attributes[f"{PREFIX}next_state"] = str(event.get("to", ""))


def _add_cost(attributes: Attributes, cost: object) -> None:
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        name = f"{PREFIX}cost_usd"
        attributes[name] = round(float(attributes.get(name, 0.0)) + cost, 6)


def _number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _nanos(iso: str, fallback: int) -> int:
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1_000_000_000)
    except ValueError:
        return fallback


def run_attributes(summary: RunSummary, resumed: bool) -> Attributes:
    """The root span's attributes: the run as its notifications describe it."""
    return {
        f"{PREFIX}loop": summary.loop,
        f"{PREFIX}run_id": summary.run_id,
        f"{PREFIX}outcome": summary.outcome,
        f"{PREFIX}exit_code": summary.exit_code,
        f"{PREFIX}cost_usd": summary.cost_usd,
        f"{PREFIX}passes": summary.passes,
        f"{PREFIX}last_state": summary.last_state,
        f"{PREFIX}resumed": resumed,
    }


def export_run(
    events: Iterable[dict[str, Any]],
    summary: RunSummary,
    env: Mapping[str, str],
    exporter: SpanExporter | None = None,
) -> str | None:
    """Export the run as one trace to *exporter* (default: the one *env* configures, OTLP
    over HTTP unless OTEL_TRACES_EXPORTER=console); what went wrong, or None."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
    except ImportError:
        return f"OpenTelemetry is not installed, no trace was sent ({INSTALL_HINT})"
    part = last_part(events)
    service = env.get("OTEL_SERVICE_NAME") or _SERVICE
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    collected = InMemorySpanExporter()  # the spans are sent at once, in one request
    provider.add_span_processor(SimpleSpanProcessor(collected))
    tracer = provider.get_tracer("little_loops")
    start = _nanos(part.began or summary.started_at, 0)
    end = _nanos(part.ended or summary.ended_at, start)
    root = tracer.start_span(
        f"ll-loop {summary.loop}",
        attributes=run_attributes(summary, resumed=part.resumed),
        start_time=start,
    )
    if summary.status == Status.FAILED:
        root.set_status(trace.Status(trace.StatusCode.ERROR, summary.error or summary.outcome))
    parent = trace.set_span_in_context(root)
    for visit in part.visits:
        at = _nanos(visit.start, start)
        span = tracer.start_span(
            visit.state,
            context=parent,
            attributes={f"{PREFIX}state": visit.state, **visit.attributes},
            start_time=at,
        )
        if visit.attributes.get(f"{PREFIX}verdict") == ERROR_VERDICT:
            span.set_status(trace.Status(trace.StatusCode.ERROR, "verdict: error"))
        span.end(end_time=_nanos(visit.end, at) if visit.end else end)
    root.end(end_time=end)
    spans = collected.get_finished_spans()
    target = exporter if exporter is not None else _configured_exporter(env)
    with _quiet():
        try:
            result = target.export(spans)
        finally:
            target.shutdown()
    if result != SpanExportResult.SUCCESS:
        return f"the trace of the run could not be exported ({len(spans)} spans)"
    return None


def _configured_exporter(env: Mapping[str, str]) -> SpanExporter:
    """The exporter OTEL_TRACES_EXPORTER names: `console` (to stderr), else OTLP over HTTP."""
    if env.get(EXPORTER_VAR, "").strip().lower() == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers and timeout from the OTEL_* variables


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Keep the SDK's own log lines (retries, failures) off the terminal: one note says it."""
    import logging

    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(before)
