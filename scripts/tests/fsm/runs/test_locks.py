from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.errors import (
    CorruptStateError,
    LoopDefinitionError,
    LoopRuntimeError,
    ScopeConflictError,
)
from little_loops.fsm.runs.locks import (
    LockHandle,
    acquire_scope,
    normalize_scope,
    read_scope_locks,
    scopes_overlap,
    waiting_flock,
)


@pytest.fixture
def loops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".loops").mkdir()
    return tmp_path / ".loops"


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def write_record(loops: Path, loop: str, pid: int, scope: list[str], **extra: object) -> Path:
    running = loops / ".running"
    running.mkdir(exist_ok=True)
    record = {
        "loop": loop,
        "pid": pid,
        "scope": scope,
        "started_at": "t",
        "hostname": os.uname().nodename,
        **extra,
    }
    path = running / f"{loop}.lock"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (".", "src", True),
        ("src", "src", True),
        ("src", "src/api", True),
        ("src/api", "src", True),
        ("src/api", "src/apiv2", False),
        ("src", "tests", False),
        ("src/api/v1", "src/api", True),
        ("docs", "docs.txt", False),
        ("/elsewhere", "src", False),
        ("/", "src", True),
    ],
)
def test_overlap_rules(tmp_path: Path, a: str, b: str, overlap: bool) -> None:
    assert scopes_overlap(a, b, tmp_path) is overlap
    assert scopes_overlap(b, a, tmp_path) is overlap


@pytest.mark.parametrize(
    ("scope", "normalized"),
    [
        ([], ["."]),
        (["."], ["."]),
        (["./"], ["."]),
        (["./src/"], ["src"]),
        (["src//api/"], ["src/api"]),
        (["src", "./src", "tests/"], ["src", "tests"]),
        (["src/../lib"], ["lib"]),
    ],
)
def test_scope_paths_are_normalized(
    tmp_path: Path, scope: list[str], normalized: list[str]
) -> None:
    assert normalize_scope(scope, tmp_path) == normalized


def test_scope_outside_the_project_stays_absolute(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    assert normalize_scope(["../shared"], root) == [(tmp_path / "shared").as_posix()]
    # `..` is an ancestor of the project, so it overlaps everything in it.
    assert scopes_overlap(normalize_scope([".."], root)[0], "src", root)


def test_symlinked_scope_overlaps_its_target(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "src")
    assert normalize_scope(["link/api"], tmp_path) == ["src/api"]


@pytest.mark.parametrize("entry", ["", "  ", "a\0b"])
def test_scope_entry_must_be_a_path(tmp_path: Path, entry: str) -> None:
    with pytest.raises(LoopDefinitionError) as info:
        normalize_scope([entry], tmp_path)
    assert str(info.value) == f"scope entry {entry!r} is not a path"


def test_acquire_writes_a_record_and_release_removes_it(loops: Path) -> None:
    with acquire_scope("a", ["./src/"], loops) as handle:
        assert handle.scope == ["src"]
        record = json.loads((loops / ".running" / "a.lock").read_text())
        assert (record["loop"], record["pid"], record["scope"]) == ("a", os.getpid(), ["src"])
        assert [r.loop for r in read_scope_locks(loops)] == ["a"]
    assert not (loops / ".running" / "a.lock").exists()
    handle.release()  # twice is fine
    acquire_scope("b", ["src"], loops).release()


def test_overlapping_scope_is_refused_naming_the_holder(loops: Path) -> None:
    held = acquire_scope("a", ["src"], loops)
    with pytest.raises(ScopeConflictError) as info:
        acquire_scope("b", ["tests", "src/api"], loops)
    assert str(info.value) == (
        f"scope 'src/api' of loop 'b' overlaps 'src' held by loop 'a' (pid {os.getpid()});"
        " wait with --queue or stop it with 'll-loop stop a'"
    )
    assert not (loops / ".running" / "b.lock").exists()
    with acquire_scope("c", ["srcx", "tests"], loops) as other:
        assert other.scope == ["srcx", "tests"]
    held.release()


def test_default_scope_claims_the_whole_project(loops: Path) -> None:
    with acquire_scope("a", [], loops), pytest.raises(ScopeConflictError, match="overlaps '.'"):
        acquire_scope("b", ["deep/inside"], loops)


def test_same_loop_twice_is_refused(loops: Path) -> None:
    with acquire_scope("a", ["src"], loops), pytest.raises(ScopeConflictError) as info:
        acquire_scope("a", ["docs"], loops)
    assert str(info.value) == (
        f"loop 'a' is already running (pid {os.getpid()});"
        " wait with --queue or stop it with 'll-loop stop a'"
    )


def test_stale_lock_of_dead_process_is_reclaimed(loops: Path, dead_pid: int) -> None:
    write_record(loops, "a", dead_pid, ["."])
    with acquire_scope("b", ["src"], loops) as handle:
        assert handle.reclaimed == (
            f"reclaimed the scope lock of loop 'a': its process (pid {dead_pid}) is gone",
        )
    assert read_scope_locks(loops) == []


def test_lock_of_a_reused_pid_is_stale(loops: Path) -> None:
    # Our own pid is alive, but with another start time it is not the process that locked.
    write_record(loops, "a", os.getpid(), ["."], pid_start=1)
    with acquire_scope("b", ["src"], loops) as handle:
        assert len(handle.reclaimed) == 1


def test_lock_from_another_host_is_respected(loops: Path, dead_pid: int) -> None:
    write_record(loops, "a", dead_pid, ["src"], hostname="other-box")
    with pytest.raises(ScopeConflictError) as info:
        acquire_scope("b", ["src"], loops)
    assert str(info.value) == (
        f"scope 'src' of loop 'b' overlaps 'src' held by loop 'a' (pid {dead_pid} on other-box);"
        " wait with --queue or stop it with 'll-loop stop a'"
    )


def test_unreadable_lock_record_is_reported(loops: Path) -> None:
    (loops / ".running").mkdir()
    (loops / ".running" / "a.lock").write_text("{not json")
    with pytest.raises(CorruptStateError) as info:
        acquire_scope("b", ["src"], loops)
    assert str(info.value) == (
        ".loops/.running/a.lock: unreadable scope lock (invalid or truncated JSON at line 1"
        " column 2: Expecting property name enclosed in double quotes); delete it if no loop"
        " named 'a' is running"
    )


def test_release_leaves_a_record_that_is_not_ours(loops: Path) -> None:
    handle = acquire_scope("a", ["src"], loops)
    path = write_record(loops, "a", os.getppid(), ["src"])
    handle.release()
    assert path.exists()


CRASHER = """
import os, signal, sys
from little_loops.fsm.runs.locks import acquire_scope
acquire_scope("crashy", ["src"], sys.argv[1])
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_lock_of_a_killed_run_is_reclaimed(loops: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", CRASHER, str(loops)], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert [r.loop for r in read_scope_locks(loops)] == ["crashy"]
    with acquire_scope("next", ["src/api"], loops) as handle:
        assert handle.reclaimed[0].startswith("reclaimed the scope lock of loop 'crashy'")


def test_queue_waits_until_the_scope_is_free(loops: Path) -> None:
    held = acquire_scope("a", ["src"], loops)
    notes: list[str] = []
    waiting = threading.Event()
    result: list[LockHandle] = []

    def on_wait(message: str) -> None:
        notes.append(message)
        waiting.set()

    def start_b() -> None:
        result.append(acquire_scope("b", ["src/api"], loops, queue=True, on_wait=on_wait))

    thread = threading.Thread(target=start_b)
    thread.start()
    assert waiting.wait(scaled(5))
    time.sleep(0.1)  # several polls while still held
    assert result == []
    held.release()
    thread.join(scaled(5))
    assert [h.loop_name for h in result] == ["b"]
    assert notes == [
        f"queued: scope 'src/api' of loop 'b' overlaps 'src' held by loop 'a' (pid {os.getpid()});"
        " waiting for it to finish"
    ]
    result[0].release()


def test_queue_gives_up_after_timeout(loops: Path) -> None:
    with acquire_scope("a", ["src"], loops), pytest.raises(ScopeConflictError) as info:
        acquire_scope("b", ["src"], loops, queue=True, timeout=0.1)
    message = str(info.value)
    assert message.startswith(
        f"scope 'src' of loop 'b' overlaps 'src' held by loop 'a' (pid {os.getpid()});"
        " still held after waiting "
    )


# Each claimer waits at two gates, files the test holds locked (flock) until it opens them:
# blocked in the kernel, the waiting ones burn no CPU the others need to start, and all of
# them wake at once when a gate opens.
STARTER = """
import fcntl, sys
from pathlib import Path
from little_loops.fsm.facts.errors import ScopeConflictError
from little_loops.fsm.runs.locks import acquire_scope
loops, name, scope = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

def wait_at(gate):
    with open(loops / gate, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)

(loops / f"ready-{name}").touch()
wait_at("go")
try:
    handle = acquire_scope(name, [scope], loops)
except ScopeConflictError as exc:
    print("REFUSED", exc, flush=True)
    sys.exit(0)
print("ADMITTED", name, flush=True)
wait_at("release")
handle.release()
"""


def race(loops: Path, scopes: list[str]) -> list[str]:
    """Start one process per scope, let them all claim at once, return their first lines."""
    gates = {}
    for gate in ("go", "release"):
        gates[gate] = open(loops / gate, "wb")  # noqa: SIM115 (closed below)
        fcntl.flock(gates[gate], fcntl.LOCK_EX)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(loops), f"loop-{i}", scope],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, scope in enumerate(scopes)
    ]
    try:
        # Every interpreter has started and waits at the barrier, however busy the machine.
        llproc.wait_for(
            lambda: len(list(loops.glob("ready-*"))) == len(procs), 30, "the claimers to start"
        )
        gates["go"].close()  # unlocked: every claimer claims now
        lines = []
        for proc in procs:
            assert proc.stdout is not None
            lines.append(proc.stdout.readline().strip())
    finally:
        for gate in gates.values():
            gate.close()
        for proc in procs:
            proc.wait(scaled(10))
    return lines


@pytest.mark.reliability
def test_twenty_concurrent_starts_on_one_scope_admit_exactly_one(loops: Path) -> None:
    (loops / ".running").mkdir()
    lines = race(loops, ["src", "./src/", "src/api", "."] * 5)
    admitted = [line for line in lines if line.startswith("ADMITTED")]
    refused = [line for line in lines if line.startswith("REFUSED")]
    assert len(admitted) == 1, lines
    assert len(refused) == 19, lines
    winner = admitted[0].split()[1]
    assert all(f"held by loop '{winner}'" in line for line in refused), lines
    assert read_scope_locks(loops) == []


@pytest.mark.reliability
def test_twenty_concurrent_starts_on_disjoint_scopes_all_run(loops: Path) -> None:
    lines = race(loops, [f"pkg{i}" for i in range(20)])
    assert sorted(lines) == sorted(f"ADMITTED loop-{i}" for i in range(20))


def test_lock_record_nested_too_deeply_is_reported(loops: Path) -> None:
    (loops / ".running").mkdir()
    (loops / ".running" / "a.lock").write_text('{"a":' * 100_000)
    with pytest.raises(CorruptStateError) as info:
        acquire_scope("b", ["src"], loops)
    assert str(info.value).startswith(
        ".loops/.running/a.lock: unreadable scope lock (JSON nested too deeply)"
    )


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ('{"pid": 1, "scope": []}', "missing 'loop'"),
        ('{"loop": "a", "pid": "x", "scope": []}', "a field has the wrong type"),
    ],
)
def test_a_lock_record_of_the_wrong_shape_says_why_in_words(
    loops: Path, record: str, why: str
) -> None:
    (loops / ".running").mkdir()
    (loops / ".running" / "a.lock").write_text(record)
    with pytest.raises(CorruptStateError) as info:
        acquire_scope("b", ["src"], loops)
    assert str(info.value).startswith(f".loops/.running/a.lock: unreadable scope lock ({why});")


def test_runs_in_different_worktrees_do_not_block_each_other(loops: Path) -> None:
    tree_a, tree_b = loops / ".worktrees" / "x@aaaa", loops / ".worktrees" / "x@bbbb"
    tree_a.mkdir(parents=True)
    tree_b.mkdir(parents=True)
    with (
        acquire_scope("x", ["."], loops),  # the main checkout's whole project
        acquire_scope("x@aaaa", ["."], loops, root=tree_a) as first,
        acquire_scope("x@bbbb", ["src"], loops, root=tree_b) as second,
    ):
        assert first.record.root == str(tree_a.resolve())
        assert second.record.scope == ["src"]
        records = {record.loop: record.root for record in read_scope_locks(loops)}
        assert records == {
            "x": None,
            "x@aaaa": str(tree_a.resolve()),
            "x@bbbb": str(tree_b.resolve()),
        }


def test_the_scope_lock_still_refuses_overlaps_in_one_worktree(loops: Path) -> None:
    tree = loops / ".worktrees" / "x@aaaa"
    (tree / "src").mkdir(parents=True)
    with acquire_scope("x@aaaa", ["src"], loops, root=tree):
        with pytest.raises(ScopeConflictError, match="overlaps 'src'"):
            acquire_scope("y@cccc", ["src/deep"], loops, root=tree)
        with pytest.raises(ScopeConflictError, match="already running"):
            acquire_scope("x@aaaa", ["other"], loops, root=tree)


def test_a_worktree_scope_reaching_into_the_project_overlaps_the_project(loops: Path) -> None:
    tree = loops / ".worktrees" / "x@aaaa"
    tree.mkdir(parents=True)
    outside = str(loops.parent.resolve() / "src")  # the main checkout's src/, by its path
    with (
        acquire_scope("y", ["src"], loops),
        pytest.raises(ScopeConflictError, match="held by loop 'y'"),
    ):
        acquire_scope("x@aaaa", [outside], loops, root=tree)


def test_a_waiting_flock_waits_for_its_holder_then_gives_up_with_the_message(
    tmp_path: Path,
) -> None:
    path = tmp_path / "merge.lock"
    with waiting_flock(path, 1.0, "busy"):
        started = time.monotonic()
        with pytest.raises(LoopRuntimeError, match="^busy$"), waiting_flock(path, 0.3, "busy"):
            pass
        assert time.monotonic() - started >= 0.3
    holder = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with waiting_flock(path, 1.0, "busy"):
            holder.set()
            done.wait(scaled(5))

    thread = threading.Thread(target=hold)
    thread.start()
    holder.wait(scaled(5))
    released = threading.Timer(0.2, done.set)
    released.start()
    with waiting_flock(path, scaled(10), "busy"):  # the holder lets go: this one goes ahead
        assert done.is_set()
    thread.join()
    assert path.exists()  # never deleted


def test_parent_links_that_loop_are_followed_once_and_refused(loops: Path) -> None:
    # Hand-edited records naming each other as parent: the resume's claim is refused, no hang.
    write_record(loops, "a", os.getpid(), ["."], parent="b")
    write_record(loops, "b", os.getpid(), ["src"], parent="a")
    with pytest.raises(ScopeConflictError, match="held by loop 'a'"):
        acquire_scope("c", ["."], loops, own_branches=True)


def test_a_resume_is_let_in_beside_its_own_branches_only(loops: Path) -> None:
    write_record(loops, "one", os.getpid(), ["."], parent="fan")
    with pytest.raises(ScopeConflictError, match="held by loop 'one'"):
        acquire_scope("fan", ["."], loops)  # a new run: its old branch still edits the folder
    with pytest.raises(ScopeConflictError, match="held by loop 'one'"):
        acquire_scope("other", ["."], loops, own_branches=True)
    with acquire_scope("fan", ["."], loops, own_branches=True) as held:
        assert held.record.parent is None


def test_the_fan_out_variable_alone_lets_nothing_in(
    loops: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_record(loops, "fan", os.getpid(), ["."])  # our own pid: not our parent's
    monkeypatch.setenv("LL_LOOP_FANOUT_PARENT", str(os.getpid()))
    with pytest.raises(ScopeConflictError, match="held by loop 'fan'"):
        acquire_scope("one", ["."], loops)
    monkeypatch.setenv("LL_LOOP_FANOUT_PARENT", str(os.getppid()))  # a parent with no claim
    with pytest.raises(ScopeConflictError, match="held by loop 'fan'"):
        acquire_scope("one", ["."], loops)
