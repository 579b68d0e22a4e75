"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A scripted Messages API on 127.0.0.1, with ANTHROPIC_BASE_URL and a fake key set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield fake
