"""Whether the environment asks for a run's trace: OTLP endpoints, exporter, off switches."""

from __future__ import annotations

import pytest

from little_loops.fsm.runs import telemetry
from little_loops.fsm.runs.telemetry_env import wanted


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, False),
    ],
)
def test_traces_are_wanted_when_the_environment_says_so(
    env: dict[str, str], expected: bool
) -> None:
    assert wanted(env) is expected


def test_the_telemetry_module_answers_with_the_same_function() -> None:
    # Old imports (`from little_loops.fsm.runs.telemetry import wanted`) keep working.
    assert telemetry.wanted is wanted
