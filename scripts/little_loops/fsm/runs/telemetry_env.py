"""Whether the environment asks for a run's OpenTelemetry trace (runs/telemetry.py makes it)."""

from __future__ import annotations

from collections.abc import Mapping

# Any of these set (and the SDK installed) exports each run; OTEL_TRACES_EXPORTER=none or
# OTEL_SDK_DISABLED=true turns it off again, as in every OpenTelemetry SDK.
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXPORTER_VAR = "OTEL_TRACES_EXPORTER"


def wanted(env: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces: an OTLP endpoint, or a traces exporter."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get(EXPORTER_VAR, "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter) or any(env.get(name, "").strip() for name in ENDPOINT_VARS)
