"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import bytecode, llproc, slowdown
from support.fake_anthropic import FakeAnthropic
from support.project import LoopProject


@pytest.fixture(autouse=True)
def _sandboxed_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """As root (a container, CI), Claude Code runs only with IS_SANDBOX=1 and `ll-loop run`
    checks that before a run's first step: every test runs as in such a sandbox (as the e2e
    tests' real Claude Code does); the tests of that check take it away."""
    if os.geteuid() == 0:
        monkeypatch.setenv("IS_SANDBOX", "1")


@pytest.fixture(autouse=True)
def _claude_logged_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`ll-loop run` checks that Claude Code has a key or login before a run's first step:
    every test runs as on a machine where it is logged in (a credentials file in a
    CLAUDE_CONFIG_DIR of its own; the e2e tests' real Claude Code does not see it, its
    fixture removes every CLAUDE* variable). The tests of that check take it away."""
    folder = tmp_path_factory.getbasetemp() / "claude-logged-in"
    folder.mkdir(exist_ok=True)
    (folder / ".credentials.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before the first test: bytecode written (the test modules' and the package's), the
    machine's slowdown measured (see support/bytecode.py and support/slowdown.py), and the
    variables a pytest-xdist worker gets removed: the processes the tests start (a loop
    running `python -m pytest`) must see the environment a user has."""
    bytecode.write_bytecode()
    slowdown.take_over()  # a pytest-xdist worker: what the process that started it measured
    slowdown.refresh()
    if session.config.pluginmanager.has_plugin("dsession"):  # it starts the workers next
        slowdown.hand_over()
    for name in [name for name in os.environ if name.startswith("PYTEST_XDIST_")]:
        del os.environ[name]


# The markers of the longest tests, longest first: those tests run first.
LONG_FIRST = ("reliability", "e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long reliability tests first, then the end-to-end ones with the real agent CLIs
    (the order is otherwise kept): spread over workers (`-n`, `--dist worksteal` takes
    from the end of a worker's queue), none of them is left to run alone at the end."""

    def rank(item: pytest.Item) -> int:
        marked = (i for i, name in enumerate(LONG_FIRST) if item.get_closest_marker(name))
        return next(marked, len(LONG_FIRST))

    items.sort(key=rank)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """The machine's slowdown, measured again between tests while the load changes."""
    slowdown.refresh()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say by how much the deadlines were scaled: the first thing to know of a timeout."""
    fixed = slowdown.given()
    if fixed is not None:
        said = f"x{fixed:.2f} (set by {slowdown.ENV})"
    else:
        seen = slowdown.measured() or [slowdown.factor()]
        span = f"x{min(seen):.2f}" + (f" to x{max(seen):.2f}" if max(seen) > min(seen) else "")
        said = f"{span} (measured; set it with {slowdown.ENV})"
    terminalreporter.write_line(f"test deadlines were scaled by {said}")


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A scripted Messages API on 127.0.0.1, with ANTHROPIC_BASE_URL and a fake key set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield fake


@pytest.fixture
def loop_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> LoopProject:
    """An empty loop project in tmp_path, made the current directory."""
    (tmp_path / ".loops").mkdir()
    monkeypatch.chdir(tmp_path)
    return LoopProject(tmp_path, capsys)


@pytest.fixture
def marker() -> Iterator[str]:
    """A `sleep` argument no other process has, to find (and clean up) a test's actions."""
    value = f"30.{uuid.uuid4().int % 10**12:012d}"
    yield value
    llproc.kill_marked(value)
