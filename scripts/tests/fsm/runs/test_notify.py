"""A run's notification summary and which outcomes a `notify: on:` list picks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.definition.model.typed import NotifyConfig
from little_loops.fsm.facts.outcomes import NOTIFY_OUTCOMES, Outcome, outcome_word
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.notify import Notifier, summarize, wanted

STATE = {
    "terminated_by": "budget",
    "started_at": "2026-01-15T10:30:00.001+00:00",
    "updated_at": "2026-01-15T10:31:00.000+00:00",
    "elapsed_ms": 60000,
    "cost_usd": 2.5,
    "current_state": "fix",
    "iteration": 4,
}


def test_every_outcome_has_a_word_and_the_aliases_mean_the_same() -> None:
    assert {outcome_word(o) for o in Outcome} <= set(NOTIFY_OUTCOMES)
    assert NOTIFY_OUTCOMES["done"] is NOTIFY_OUTCOMES["terminal"] is Outcome.TERMINAL
    assert NOTIFY_OUTCOMES["failed"] is NOTIFY_OUTCOMES["error"] is Outcome.ERROR


def test_a_run_not_archived_has_no_report_and_an_id_from_its_start(tmp_path: Path) -> None:
    summary = summarize("fix", STATE, None, tmp_path / ".loops")
    assert (summary.run_id, summary.outcome, summary.exit_code) == ("20260115-103000", "budget", 6)
    assert (summary.report_path, summary.report_command) == (None, None)
    assert (summary.cost_usd, summary.passes, summary.last_state) == (2.5, 4, "fix")


@pytest.mark.parametrize(
    ("on", "expected"),
    [(None, True), (["budget"], True), (["done", "failed"], False), (["max_iterations"], False)],
)
def test_on_picks_outcomes(tmp_path: Path, on: list[str] | None, expected: bool) -> None:
    summary = summarize("fix", STATE, None, tmp_path / ".loops")
    assert wanted(NotifyConfig(command="true", on=on), summary) is expected


def test_a_command_past_its_timeout_is_ended_with_all_it_started(tmp_path: Path) -> None:
    # The command and its child ignore SIGTERM: only the SIGKILL after the grace ends them.
    command = f"trap '' TERM; sleep 300 & echo $! > {tmp_path}/child; wait; wait"
    notes: list[str] = []
    notifier = Notifier(NotifyConfig(command=command, timeout=0.5), tmp_path, notes.append)
    began = time.monotonic()
    notifier.send(summarize("fix", STATE, None, tmp_path / ".loops"))
    assert time.monotonic() - began < scaled(0.5 + 2.0 + 2.0)  # timeout, grace, slack
    assert notes == ["notify: the command took longer than 0.5s and was stopped"]
    child = int((tmp_path / "child").read_text())
    deadline = time.monotonic() + scaled(2.0)
    while pid_alive(child):
        assert time.monotonic() < deadline, "the command's child still runs"
        time.sleep(0.02)
