from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.facts.errors import CorruptStateError, LoopDefinitionError
from little_loops.fsm.facts.layout import validate_loop_name
from little_loops.fsm.facts.outcomes import (
    OUTCOMES,
    STATUSES,
    TERMINATION_EXIT_CODE,
    ExitCode,
    outcome_of,
)
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import (
    StatePersistence,
    get_loop_history,
    list_running_loops,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory that is also the cwd, so messages show `.loops/.running/...`."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def full_state() -> LoopState:
    return LoopState(
        loop_name="fix",
        current_state="verify",
        iteration=3,
        captured={"errors": {"output": "4\n", "exit_code": 0}},
        prev_result={"output": "x", "exit_code": 1},
        last_result={"verdict": "failure", "details": {"confidence": 0.65}},
        status="awaiting_continuation",
        continuation="carry on from the 3rd error",
        pid=1234,
        pid_start=99,
        elapsed_ms=4567,
        context={"target": "src/ünï"},
        loop_path=".loops/fix.yaml",
        terminated_by="handoff",
        error=None,
        scope=["src", "tests"],
    )


def test_state_round_trips_through_the_file(project: Path) -> None:
    store = StatePersistence("fix")
    state = full_state()
    store.save_state(state)
    assert store.state_file == project / ".loops" / ".running" / "fix.state.json"
    assert store.load_state() == state
    assert json.loads(store.state_file.read_text())["current_state"] == "verify"


def test_undecodable_output_survives_state_and_events(project: Path) -> None:
    # Output decoded with errors="surrogateescape" holds lone surrogates; UTF-8 cannot encode them.
    output = b"bad \xff byte".decode("utf-8", errors="surrogateescape")
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "a", captured={"out": {"output": output}}))
    store.append_event({"event": "action_complete", "output": output})
    loaded = store.load_state()
    assert loaded is not None
    assert loaded.captured["out"]["output"] == output
    assert store.read_events() == [{"event": "action_complete", "output": output}]
    store.close()


def test_to_dict_from_dict_round_trip() -> None:
    state = full_state()
    assert LoopState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


def test_load_state_is_none_when_absent(project: Path) -> None:
    assert StatePersistence("fix").load_state() is None


def test_save_stamps_updated_at(project: Path) -> None:
    state = full_state()
    state.updated_at = "2000-01-01T00:00:00+00:00"
    StatePersistence("fix").save_state(state)
    assert state.updated_at > "2020"


def leftovers(project: Path) -> list[str]:
    """The files in `.running/` but its `.gitignore`."""
    return sorted(p.name for p in (project / ".loops" / ".running").iterdir())[1:]


def test_failed_replace_keeps_old_state_and_no_temp_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "check", iteration=1))

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="No space left"):
        store.save_state(LoopState("fix", "fix", iteration=2))
    monkeypatch.undo()
    loaded = store.load_state()
    assert loaded is not None
    assert (loaded.current_state, loaded.iteration) == ("check", 1)
    assert leftovers(project) == ["fix.state.json"]


def test_unserializable_state_leaves_old_file(project: Path) -> None:
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "check"))
    with pytest.raises(TypeError):
        store.save_state(LoopState("fix", "fix", captured={"x": object()}))
    loaded = store.load_state()
    assert loaded is not None
    assert loaded.current_state == "check"
    assert leftovers(project) == ["fix.state.json"]


WRITER = """
import sys
from little_loops.fsm.runs.store import StatePersistence
from little_loops.fsm.runs.state import LoopState
store = StatePersistence("fix", sys.argv[1])
i = 0
while True:
    i += 1
    store.save_state(LoopState("fix", "s%d" % i, iteration=i, captured={"pad": "x" * 50000}))
    store.append_event({"event": "route", "n": i, "pad": "y" * (i % 5000)})
    if i == 20:
        print("ready", flush=True)
"""


@pytest.mark.reliability
def test_kill_9_mid_write_leaves_readable_state_and_events(project: Path) -> None:
    loops = project / ".loops"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(loops)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = StatePersistence("fix", loops)
    state = store.load_state()
    assert state is not None
    assert state.iteration >= 20
    raw = store.events_file.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    numbers = [json.loads(line)["n"] for line in complete.splitlines()]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(store.read_events()) == len(numbers)
    # The next run's initialize() sweeps temp files a killed save left behind, and its first
    # append trims any torn tail: then every line of the log is valid JSON.
    store.initialize()
    assert leftovers(project) == ["fix.events.jsonl", "fix.state.json"]
    store.append_event({"event": "resumed"})
    store.close()
    lines = store.events_file.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line)["event"] for line in lines[:-1]][-2:] == ["route", "resumed"]


CORRUPT_CASES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "empty"),
    ("blank", b"  \n", "empty"),
    (
        "truncated",
        b'{"loop_name": "fix", "current_state": "ch',
        "invalid or truncated JSON at line 1 column 39: Unterminated string starting at",
    ),
    ("not json", b"hello", "invalid or truncated JSON at line 1 column 1: Expecting value"),
    ("not utf-8", b'{"loop_name": "\xff\xfe"}', "not UTF-8 text"),
    ("a list", b"[1, 2]", "expected a JSON object, found a list"),
    (
        "no current_state",
        b'{"loop_name": "fix", "iteration": 1, "status": "running", "started_at": "t"}',
        "missing 'current_state'",
    ),
    (
        "string iteration",
        b'{"loop_name": "fix", "current_state": "a", "iteration": "3", "status": "running",'
        b' "started_at": "t"}',
        "'iteration' should be an integer, found a string",
    ),
    (
        "bool iteration",
        b'{"loop_name": "fix", "current_state": "a", "iteration": true, "status": "running",'
        b' "started_at": "t"}',
        "'iteration' should be an integer, found a boolean",
    ),
    (
        "captured list",
        b'{"loop_name": "fix", "current_state": "a", "iteration": 1, "status": "running",'
        b' "started_at": "t", "captured": []}',
        "'captured' should be an object, found a list",
    ),
    (
        "unknown status",
        b'{"loop_name": "fix", "current_state": "a", "iteration": 1, "status": "runing",'
        b' "started_at": "t"}',
        "unknown status 'runing'",
    ),
    (
        "newer schema",
        b'{"schema_version": 2, "loop_name": "fix", "current_state": "a", "iteration": 1,'
        b' "status": "running", "started_at": "t"}',
        "schema_version 2 is newer than this ll-loop reads (1)",
    ),
    (
        "other loop",
        b'{"loop_name": "lint", "current_state": "a", "iteration": 1, "status": "running",'
        b' "started_at": "t"}',
        "it belongs to loop 'lint'",
    ),
    ("nested too deeply", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "JSON nested too deeply"),
    (
        "too many digits",
        b'{"loop_name": "fix", "current_state": "a", "iteration": ' + b"9" * 5000 + b"}",
        "a number with too many digits",
    ),
    (
        "NaN cost",
        b'{"loop_name": "fix", "current_state": "a", "iteration": 1, "status": "running",'
        b' "started_at": "t", "cost_usd": NaN}',
        "'cost_usd' should be a finite number, found nan",
    ),
]


@pytest.mark.parametrize(
    ("content", "problem"),
    [(c, p) for _, c, p in CORRUPT_CASES],
    ids=[case[0] for case in CORRUPT_CASES],
)
def test_corrupt_state_file_is_reported_clearly(
    project: Path, content: bytes, problem: str
) -> None:
    store = StatePersistence("fix")
    store.initialize()
    store.state_file.write_bytes(content)
    with pytest.raises(CorruptStateError) as info:
        store.load_state()
    assert str(info.value) == (
        f".loops/.running/fix.state.json: corrupt state file ({problem}); delete it, or start"
        " the loop over with 'll-loop run fix'"
    )


def test_from_dict_names_its_source() -> None:
    with pytest.raises(CorruptStateError) as info:
        LoopState.from_dict({"loop_name": "x"}, source="snapshot.json")
    assert str(info.value) == "snapshot.json: corrupt state file (missing 'status')"


def test_events_append_and_read_back(project: Path) -> None:
    with StatePersistence("fix") as store:
        store.append_event({"event": "loop_start", "loop": "fix"})
        store.append_event({"event": "note", "text": "a\nb\u2028c ü"})
        assert store.read_events() == [
            {"event": "loop_start", "loop": "fix"},
            {"event": "note", "text": "a\nb\u2028c ü"},
        ]
        assert store.events_file.read_bytes().count(b"\n") == 2
    assert get_loop_history("fix") == store.read_events()


def test_events_are_in_the_file_for_another_process_while_open(project: Path) -> None:
    store = StatePersistence("fix")
    store.append_event({"event": "a"})
    store.append_event({"event": "b"})
    reader = (
        "import sys; from little_loops.fsm.runs.store import get_loop_history;"
        " print([e['event'] for e in get_loop_history('fix', sys.argv[1])])"
    )
    out = subprocess.run(
        [sys.executable, "-c", reader, str(project / ".loops")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == "['a', 'b']\n"
    store.close()


def test_torn_last_line_is_skipped(project: Path) -> None:
    store = StatePersistence("fix")
    store.append_event({"event": "a"})
    store.close()
    with open(store.events_file, "ab") as f:
        f.write(b'{"event": "b", "pa')
    assert store.read_events() == [{"event": "a"}]


def test_next_append_trims_a_torn_tail_so_every_line_parses(project: Path) -> None:
    store = StatePersistence("fix")
    store.append_event({"event": "a"})
    store.close()
    with open(store.events_file, "ab") as f:
        f.write(b'{"event": "b", "pa')
    resumed = StatePersistence("fix")
    resumed.append_event({"event": "c"})
    lines = resumed.events_file.read_bytes().splitlines()
    assert [json.loads(line) for line in lines] == [{"event": "a"}, {"event": "c"}]


def test_tail_missing_only_its_newline_is_kept(project: Path) -> None:
    store = StatePersistence("fix")
    store.initialize()
    store.events_file.write_bytes(b'{"event":"a"}\n{"event":"b"}')
    store.append_event({"event": "c"})
    assert [e["event"] for e in store.read_events()] == ["a", "b", "c"]


def test_corrupt_middle_line_is_reported(project: Path) -> None:
    store = StatePersistence("fix")
    store.initialize()
    store.events_file.write_bytes(b'{"event":"a"}\n{"ev\n{"event":"c"}\n')
    with pytest.raises(CorruptStateError) as info:
        store.read_events()
    assert str(info.value) == (
        ".loops/.running/fix.events.jsonl:2: corrupt event line (invalid or truncated JSON"
        " at line 1 column 2: Unterminated string starting at)"
    )


def test_append_reopens_after_the_log_is_cleared_elsewhere(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from little_loops.fsm.runs import eventlog

    monkeypatch.setattr(eventlog, "RECHECK_S", 0.0)  # checked at every append
    writer = StatePersistence("fix")
    writer.append_event({"event": "old"})
    StatePersistence("fix").clear_events()
    writer.append_event({"event": "new"})
    assert writer.read_events() == [{"event": "new"}]
    writer.close()


def test_clear_state_events_and_all(project: Path) -> None:
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "a"))
    store.append_event({"event": "a"})
    store.clear_state()
    assert store.load_state() is None
    assert store.read_events() == [{"event": "a"}]
    store.save_state(LoopState("fix", "a"))
    store.clear_all()
    assert (store.load_state(), store.read_events()) == (None, [])
    store.clear_all()  # absent files are fine


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "it is empty"),
        ("../etc", "it contains a path separator"),
        ("a/b", "it contains a path separator"),
        ("a\\b", "it contains a path separator"),
        ("..", "it starts with '.'"),
        (".scopes", "it starts with '.'"),
        ("a\0b", "it contains a control character"),
        ("a\nb", "it contains a control character"),
        ("x" * 201, "it is longer than 200 bytes"),
    ],
)
def test_unsafe_loop_names_are_refused(name: str, problem: str) -> None:
    with pytest.raises(LoopDefinitionError) as info:
        StatePersistence(name)
    assert str(info.value) == f"loop name {name!r} cannot be used as a file name: {problem}"


@pytest.mark.parametrize("name", ["fix-types", "fix types", "fïx_2", "a.b"])
def test_ordinary_names_are_accepted(name: str) -> None:
    assert validate_loop_name(name) == name


def test_list_running_loops(project: Path, dead_pid: int) -> None:
    assert list_running_loops() == []
    me = os.getpid()
    live = StatePersistence("live")
    live.save_state(LoopState("live", "a", pid=me, pid_start=process_start_ticks(me)))
    live.append_event({"event": "loop_start"})  # this process now writes its log
    # Names this (live) process too, but this process does not write its log: not its run.
    StatePersistence("foreign").save_state(
        LoopState("foreign", "a", pid=me, pid_start=process_start_ticks(me))
    )
    StatePersistence("dead").save_state(LoopState("dead", "a", pid=dead_pid))
    StatePersistence("reused").save_state(LoopState("reused", "a", pid=me, pid_start=1))
    StatePersistence("done").save_state(LoopState("done", "z", status="completed", pid=dead_pid))
    broken = StatePersistence("broken")
    broken.initialize()
    broken.state_file.write_text("{")
    infos = {info.loop_name: info for info in list_running_loops()}
    assert sorted(infos) == ["broken", "dead", "done", "foreign", "live", "reused"]
    assert (infos["live"].alive, infos["live"].crashed) == (True, False)
    assert (infos["foreign"].alive, infos["foreign"].crashed) == (False, True)
    assert (infos["dead"].alive, infos["dead"].crashed) == (False, True)
    assert (infos["reused"].alive, infos["reused"].crashed) == (False, True)
    assert (infos["done"].alive, infos["done"].crashed) == (False, False)
    live.close()
    assert infos["broken"].state is None
    assert infos["broken"].error == (
        ".loops/.running/broken.state.json: corrupt state file (invalid or truncated JSON at"
        " line 1 column 2: Expecting property name enclosed in double quotes); delete it, or"
        " start the loop over with 'll-loop run broken'"
    )


def test_every_termination_reason_has_one_status_and_exit_code() -> None:
    codes: dict[str, int] = {
        "terminal": ExitCode.OK,
        "terminal_failure": ExitCode.TERMINAL_FAILURE,
        "error": ExitCode.FAILED,
        "max_iterations": ExitCode.MAX_ITERATIONS,
        "max_steps": ExitCode.MAX_STEPS,
        "timeout": ExitCode.TIMEOUT,
        "handoff": ExitCode.HANDOFF,
        "handoff_ended": ExitCode.HANDOFF,
        "budget": ExitCode.BUDGET,
        "interrupted": ExitCode.INTERRUPTED,
        "stopped": ExitCode.STOPPED,
        "stall": ExitCode.STALL,
        "awaiting_approval": ExitCode.AWAITING_APPROVAL,
    }
    assert codes == TERMINATION_EXIT_CODE
    assert {o.status for o in OUTCOMES.values()} == set(STATUSES) - {"running"}
    assert ExitCode.USAGE not in TERMINATION_EXIT_CODE.values()
    statuses: dict[str, Any] = {k: o.status for k, o in OUTCOMES.items()}
    assert statuses == {
        "terminal": "completed",
        "terminal_failure": "failed",
        "error": "failed",
        "max_iterations": "failed",
        "max_steps": "failed",
        "timeout": "failed",
        "handoff": "awaiting_continuation",
        "handoff_ended": "failed",
        "budget": "failed",
        "interrupted": "interrupted",
        "stopped": "stopped",
        "stall": "failed",
        "awaiting_approval": "awaiting_approval",
    }
    assert outcome_of("no-such-reason") == OUTCOMES["error"]


def test_event_lines_too_deep_or_too_long_are_reported_with_their_line(project: Path) -> None:
    store = StatePersistence("fix")
    store.initialize()
    good = b'{"event": "loop_start"}\n'
    for bad, problem in (
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "JSON nested too deeply"),
        (b'{"n": ' + b"9" * 5000 + b"}", "a number with too many digits"),
    ):
        store.events_file.write_bytes(good + bad + b"\n" + good)
        with pytest.raises(CorruptStateError) as info:
            store.read_events()
        assert str(info.value) == (
            f".loops/.running/fix.events.jsonl:2: corrupt event line ({problem})"
        )


def test_a_torn_tail_too_deep_to_parse_is_trimmed_before_appending(project: Path) -> None:
    store = StatePersistence("fix")
    store.initialize()
    store.events_file.write_bytes(b'{"event": "a"}\n' + b'{"x":[' * 100_000)
    store.append_event({"event": "b"})
    store.close()
    assert store.events_file.read_bytes() == b'{"event": "a"}\n{"event":"b"}\n'


def test_snapshots_are_fsynced_on_demand_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = StatePersistence("fix")
    store.initialize()

    def fsyncs(**kwargs: Any) -> int:
        calls.clear()
        store.save_state(full_state(), **kwargs)
        assert store.load_state() == store.load_state()  # readable after every save
        return len(calls)

    assert fsyncs() == 0  # atomic, not fsynced: the event log is the durable record
    assert fsyncs(durable=True) == 2  # the file and the folder
    assert fsyncs(durable=False) == 0


def test_leftover_temp_files_of_a_killed_write_are_removed_exactly(project: Path) -> None:
    from little_loops.fsm.runs.atomic import remove_leftover_temp_files

    running = project / ".running"
    running.mkdir()
    target = running / "fix.options.json"
    ours = running / ".fix.options.json.ab_c1234.tmp"
    other_loop = running / ".fix.options.json.options.json.ab_c1234.tmp"  # loop "fix.options.json"
    not_mkstemp = running / ".fix.options.json.x.tmp"
    for path in (ours, other_loop, not_mkstemp):
        path.write_text("{")
    remove_leftover_temp_files(target)
    assert not ours.exists()
    assert other_loop.exists()
    assert not_mkstemp.exists()


@pytest.mark.parametrize(
    ("saved", "why"),
    [
        ({"iteration+": 3}, "'iteration+' adds to 'iteration', which is not a list or an object"),
        ({"status": "bogus"}, "unknown status 'bogus'"),
        ({"captured+": [1]}, "'captured+' adds to 'captured', which is not a list or an object"),
        ([1, 2], "'saved' of a 'x' event is not an object"),
    ],
)
def test_changes_that_cannot_be_applied_leave_the_snapshot_and_say_why(
    project: Path, saved: object, why: str
) -> None:
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "a", iteration=2))
    store.append_event({"event": "x", "ts": "t", "saved": saved})
    state = store.load_state()
    assert state is not None
    assert (state.current_state, state.iteration) == ("a", 2)
    assert store.replay_error == (
        f".loops/.running/fix.events.jsonl: cannot apply the events after the snapshot ({why})"
    )


def test_a_replayed_run_is_the_snapshot_with_each_change_applied(project: Path) -> None:
    store = StatePersistence("fix")
    store.save_state(LoopState("fix", "a", iteration=1, captured={"n": {"output": "1"}}))
    store.append_event({"event": "route", "ts": "t1", "saved": {"current_state": "b"}})
    store.append_event({"event": "x", "ts": "t2"})  # no changes
    store.append_event(
        {"event": "action_complete", "ts": "t3", "saved": {"captured+": {"m": {"output": "2"}}}}
    )
    state = store.load_state()
    assert state is not None
    assert state.current_state == "b"
    assert state.captured == {"n": {"output": "1"}, "m": {"output": "2"}}
    assert state.updated_at == "t3"
    assert store.replay_error is None
