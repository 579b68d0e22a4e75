"""EventLog: one-line appends, rotation into numbered parts, streamed reads and tail reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from little_loops.fsm.facts.errors import CorruptStateError
from little_loops.fsm.facts.layout import RunFiles, rotated_parts
from little_loops.fsm.runs import eventlog
from little_loops.fsm.runs.eventlog import EventLog


@pytest.fixture
def log(tmp_path: Path) -> EventLog:
    return EventLog(RunFiles("fix", tmp_path), "fix.events.jsonl")


def fill(log: EventLog, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        log.append({"event": "e", "n": n})


def numbers(events: object) -> list[int]:
    return [event["n"] for event in events]  # type: ignore[attr-defined]


def test_append_returns_where_the_log_ends(log: EventLog) -> None:
    part, end = log.append({"event": "a"})
    assert (part, end) == (1, log.path.stat().st_size)
    assert log.append({"event": "b"})[1] > end
    assert [e["event"] for e in log.events((1, end))] == ["b"]


def test_rotation_keeps_a_bounded_number_of_parts_and_reads_across_them(log: EventLog) -> None:
    for round_ in range(eventlog.SEGMENTS_KEPT + 3):
        fill(log, 3, start=round_ * 3)
        assert log.rotate() == round_ + 2
    fill(log, 2, start=100)
    kept = log.files.events_segments()
    assert len(kept) == eventlog.SEGMENTS_KEPT
    assert kept[0] == log.first_kept() == 4  # parts 1-3 were dropped
    assert log.current_part() == eventlog.SEGMENTS_KEPT + 4
    assert numbers(log.events()) == [*range(9, 21), 100, 101]
    assert numbers(log.tail(5)) == [18, 19, 20, 100, 101]
    # From a position inside an older part: the rest of it, the later parts, the current one.
    start = (5, len(b'{"event":"e","n":12}\n'))
    assert numbers(log.events(start)) == [13, 14, *range(15, 21), 100, 101]


def test_tail_reads_only_the_end(log: EventLog, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(log, 20_000)
    reads: list[int] = []
    real = os.pread

    def pread(fd: int, size: int, offset: int) -> bytes:
        reads.append(size)
        return real(fd, size, offset)

    monkeypatch.setattr(eventlog.os, "pread", pread)
    assert numbers(log.tail(3)) == [19_997, 19_998, 19_999]
    assert sum(reads) <= 2 * 65536 + 1
    assert log.tail(0) == []
    assert len(log.tail(50_000)) == 20_000


def test_torn_last_line_is_skipped_by_every_reader_and_trimmed_by_the_next_append(
    log: EventLog,
) -> None:
    fill(log, 2)
    log.close()
    with open(log.path, "ab") as handle:
        handle.write(b'{"event":"e","n":')
    assert numbers(log.events()) == [0, 1]
    assert numbers(log.tail(5)) == [0, 1]
    fill(log, 1, start=2)
    assert numbers(log.events()) == [0, 1, 2]


def test_a_bad_line_before_the_last_is_an_error_naming_the_line(log: EventLog) -> None:
    fill(log, 1)
    log.close()
    with open(log.path, "ab") as handle:
        handle.write(b"not json\n")
    fill(log, 1, start=1)
    with pytest.raises(CorruptStateError, match=r"^fix\.events\.jsonl:2: corrupt event line"):
        list(log.events())
    with pytest.raises(CorruptStateError, match="corrupt event line"):
        log.tail(3)


def test_a_position_that_is_not_a_line_start_is_refused(log: EventLog) -> None:
    fill(log, 2)
    with pytest.raises(CorruptStateError, match="no event begins at byte 3"):
        list(log.events((1, 3)))


def test_clear_removes_every_part(log: EventLog) -> None:
    fill(log, 1)
    log.rotate()
    fill(log, 1)
    log.clear()
    assert [p.name for p in log.path.parent.iterdir()] == [".gitignore"]


def test_parts_of_another_loop_are_not_taken(tmp_path: Path) -> None:
    ours = RunFiles("fix", tmp_path)
    (tmp_path / ".running").mkdir()
    for name in (
        "fix.events.2.jsonl",
        "fix.events.x.jsonl",
        "fix.events.02.jsonl",
        "fix.events.².jsonl",
        "fixed.events.3.jsonl",
    ):
        (tmp_path / ".running" / name).write_text("")
    assert ours.events_segments() == [2]
    assert RunFiles("fi[x]", tmp_path).events_segments() == []
    # The same from the parts a reader of many runs listed once (watch's list).
    listed = rotated_parts(os.listdir(tmp_path / ".running"))
    assert RunFiles("fix", tmp_path, parts_listed=listed).events_segments() == [2]
    assert RunFiles("fixed", tmp_path, parts_listed=listed).events_segments() == [3]
    assert RunFiles("fi[x]", tmp_path, parts_listed=listed).events_segments() == []


def test_a_run_with_rotated_parts_reads_the_same_from_the_parts_listed(log: EventLog) -> None:
    fill(log, 3)
    log.rotate()
    fill(log, 2)
    log.rotate()
    fill(log, 1)
    listed = rotated_parts(os.listdir(log.path.parent))
    files = RunFiles(log.files.loop_name, log.files.loops_dir, parts_listed=listed)
    assert files.events_segments() == log.files.events_segments() == [1, 2]
    again = EventLog(files, "listed")
    assert list(again.events()) == list(log.events())
    assert len(list(again.events())) == 6


def test_a_position_in_a_part_that_is_gone_reads_nothing(log: EventLog) -> None:
    fill(log, 2)
    assert list(log.events((3, 0))) == []  # the log was cleared and begun again since
