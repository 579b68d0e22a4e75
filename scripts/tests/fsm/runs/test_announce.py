"""A run's end announced: the loop's `notify:` command (real bash), and its trace export."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.definition.model.typed import FSMLoop, NotifyConfig, StateConfig
from little_loops.fsm.runs import notify, telemetry
from little_loops.fsm.runs.announce import Announcer
from little_loops.fsm.runs.notify import RunSummary

STATE = {
    "terminated_by": "terminal",
    "started_at": "2026-01-15T10:30:00.001+00:00",
    "updated_at": "2026-01-15T10:31:00.000+00:00",
    "elapsed_ms": 60000,
    "current_state": "done",
    "iteration": 2,
}
TELEMETRY_VARS = (*telemetry.ENDPOINT_VARS, telemetry.EXPORTER_VAR, "OTEL_SDK_DISABLED")


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TELEMETRY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def loops_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project" / ".loops"
    folder.mkdir(parents=True)
    return folder


def fsm(notify: NotifyConfig | None) -> FSMLoop:
    states = {"done": StateConfig(terminal=True)}
    return FSMLoop(name="fix", initial="done", states=states, notify=notify)


class Events:
    """The run's event log, counting how often it is read."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> Iterable[dict[str, Any]]:
        self.reads += 1
        return [{"event": "loop_start"}]


def test_nothing_to_announce_reads_nothing(loops_dir: Path) -> None:
    notes: list[str] = []
    events = Events()
    Announcer(fsm(None), loops_dir, notes.append).announce(STATE, None, events)
    assert (notes, events.reads) == ([], 0)


def test_the_notify_command_runs_in_the_project_with_the_outcome(loops_dir: Path) -> None:
    command = 'printf "%s %s %s" "$LL_LOOP_NAME" "$LL_LOOP_OUTCOME" "$LL_LOOP_EXIT_CODE" > heard'
    notes: list[str] = []
    events = Events()
    Announcer(fsm(NotifyConfig(command=command)), loops_dir, notes.append).announce(
        STATE, None, events
    )
    assert (loops_dir.parent / "heard").read_text() == "fix done 0"
    assert notes == []
    assert events.reads == 0  # no trace wanted: the log is not read


def test_a_notify_command_that_fails_is_a_note(loops_dir: Path) -> None:
    notes: list[str] = []
    config = NotifyConfig(command="echo broken >&2; exit 3")
    Announcer(fsm(config), loops_dir, notes.append).announce(STATE, None, Events())
    assert len(notes) == 1
    assert notes[0].startswith("notify:")


def test_an_outcome_not_asked_for_runs_no_command(loops_dir: Path) -> None:
    config = NotifyConfig(command="touch heard", on=["failed"])
    Announcer(fsm(config), loops_dir, lambda _note: None).announce(STATE, None, Events())
    assert not (loops_dir.parent / "heard").exists()


def test_cancel_before_announce_changes_nothing(loops_dir: Path) -> None:
    announcer = Announcer(fsm(NotifyConfig(command="touch heard")), loops_dir, print)
    announcer.cancel()  # a Ctrl-C that ended the run itself: it is still announced
    announcer.announce(STATE, None, Events())
    assert (loops_dir.parent / "heard").exists()


def test_a_wanted_trace_is_exported_from_the_log(
    loops_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(telemetry.EXPORTER_VAR, "otlp")
    seen: list[tuple[list[dict[str, Any]], RunSummary]] = []

    def export_run(
        events: Iterable[dict[str, Any]], summary: RunSummary, env: object
    ) -> str | None:
        seen.append((list(events), summary))
        return None

    monkeypatch.setattr(telemetry, "export_run", export_run)
    notes: list[str] = []
    events = Events()
    Announcer(fsm(None), loops_dir, notes.append).announce(STATE, None, events)
    assert events.reads == 1
    assert [(log, summary.loop, summary.outcome) for log, summary in seen] == [
        ([{"event": "loop_start"}], "fix", "done")
    ]
    assert notes == []


@pytest.mark.parametrize(
    ("behaviour", "note"),
    [
        ("problem", "telemetry: the SDK is missing"),
        ("raise", "telemetry: the trace of the run could not be exported (collector down)"),
    ],
)
def test_an_export_problem_is_one_note(
    loops_dir: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str, note: str
) -> None:
    monkeypatch.setenv(telemetry.ENDPOINT_VARS[0], "http://127.0.0.1:9")

    def export_run(events: object, summary: object, env: object) -> str | None:
        if behaviour == "raise":
            raise RuntimeError("collector down")
        return "the SDK is missing"

    monkeypatch.setattr(telemetry, "export_run", export_run)
    notes: list[str] = []
    Announcer(fsm(None), loops_dir, notes.append).announce(STATE, None, Events())
    assert notes == [note]


def test_a_cancel_during_the_notification_skips_the_trace(
    loops_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(telemetry.EXPORTER_VAR, "otlp")
    exported: list[RunSummary] = []

    def export_run(events: object, summary: RunSummary, env: object) -> str | None:
        exported.append(summary)
        return None

    monkeypatch.setattr(telemetry, "export_run", export_run)
    announcer = Announcer(fsm(NotifyConfig(command="true")), loops_dir, print)

    def send_then_ctrl_c(notifier: notify.Notifier, summary: RunSummary) -> None:
        announcer.cancel()  # the first Ctrl-C, while the command runs

    monkeypatch.setattr(notify.Notifier, "send", send_then_ctrl_c)
    events = Events()
    announcer.announce(STATE, None, events)
    assert exported == []
    assert events.reads == 0
