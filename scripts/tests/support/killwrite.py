"""Kill `ll-loop` with SIGKILL exactly at the K-th write() to a run's event log (strace).

`strace -e inject=write:signal=KILL:when=K -P EVENTS` delivers SIGKILL as the K-th write to
that file begins: the write never happens, the log holds the K-1 writes before it, and
nothing of the process runs after (no handler, no flush), as a power cut or the OOM killer.
A run's actions run in their own process groups and never write its log. Each `ll-loop` is
forked from a process that imported it once (support/forkserver.py), strace attached to it
before it begins.

`drive` takes a run to its end as a user would: `run`, then `resume` after each crash,
`approve` when it waits on a question; with a kill at the K-th write of the whole drive
(counted over every process of it), and optionally one more at the J-th write of the
process after it. Side effects are lines of `effects.txt` (each action appends its own).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.runs.store import StatePersistence
from support import forkserver, llproc
from support.slowdown import scaled

STRACE = shutil.which("strace")
EFFECTS = "effects.txt"
KILLED = -9  # subprocess's return code of a process SIGKILL ended (strace dies the same way)
# Keys whose values differ between two runs of the same loop: times, pids, paths, ids.
_VARYING = frozenset({"duration_ms", "output_path", "ts", "started_at", "asked_at", "deadline"})


def events_file(root: Path, name: str) -> Path:
    """The event log of loop *name* run in project *root*."""
    return root / ".loops" / ".running" / f"{name}.events.jsonl"


def ll_loop_traced(
    root: Path,
    name: str,
    kill_at: int | None,
    *args: str,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    fresh: bool = False,
) -> tuple[subprocess.CompletedProcess[str], int]:
    """`ll-loop ARGS...` in *root* under strace (with *env*, else this environment), killed
    as it begins its *kill_at*-th write to *name*'s log (never when None); the result and
    the writes it made to the log.

    The process is forked from one that imported ll-loop once (support/forkserver.py) and
    held until strace has attached to it: what is tested is what a death at a write leaves,
    not start-up, which a drive would otherwise pay in every process of every kill point.
    *fresh* starts `python -m little_loops.cli` under strace instead (support/test_killwrite.py
    shows the two make the same writes)."""
    assert STRACE is not None, "strace is not installed (scripts/dev setup installs it)"
    (root / ".loops" / ".running").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        inject = [] if kill_at is None else ["-e", f"inject=write:signal=KILL:when={kill_at}"]
        strace = [
            STRACE,
            *("-f", "-qq", "-o", str(trace), "-P", str(events_file(root, name))),
            *("-e", "trace=write", *inject),
        ]
        if fresh:
            done = llproc.ll_loop(root, *args, timeout=timeout, env=env, prefix=strace)
        else:
            done = _forked_traced(root, strace, args, timeout, env)
        # Each traced write is one line of the trace; the killed one is there too, unfinished.
        writes = trace.read_text(errors="replace").count("write(")
    return done, writes - (1 if done.returncode == KILLED else 0)


def _forked_traced(
    root: Path, strace: list[str], args: tuple[str, ...], timeout: float, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    """`ll-loop ARGS` forked by support/forkserver.py, run once *strace* (`-p` added) traces it;
    strace has ended (and written its whole trace) when this returns."""
    tracers: list[subprocess.Popen[bytes]] = []

    def attach(pid: int) -> None:
        tracer = subprocess.Popen(
            [*strace, "-p", str(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        tracers.append(tracer)
        deadline = time.monotonic() + scaled(20)
        while _tracer_of(pid) != tracer.pid:  # strace has not attached yet
            if tracer.poll() is not None:
                said = tracer.stderr.read().decode(errors="replace") if tracer.stderr else ""
                raise AssertionError(f"strace -p {pid} ended (exit {tracer.returncode}): {said}")
            if time.monotonic() > deadline:
                raise AssertionError(f"strace did not attach to {pid} within its deadline")
            time.sleep(0.005)

    try:
        return forkserver.ll_loop(root, *args, timeout=timeout, env=env, attach=attach)
    finally:
        for tracer in tracers:  # it ends with the traced processes (all of them: -f)
            try:
                tracer.communicate(timeout=scaled(60))
            except subprocess.TimeoutExpired:
                tracer.kill()
                tracer.communicate()


def _tracer_of(pid: int) -> int:
    """The pid of the process tracing *pid* (0 when none or when it has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((s for s in status.splitlines() if s.startswith("TracerPid:")), "TracerPid: 0")
    return int(line.split()[1])


@dataclass
class Drive:
    """What a drive did: the writes to the log, the kills, and the actions that may run
    twice (one whose `action_start` was the last event written before a kill)."""

    writes: int = 0
    kills: int = 0
    rerun: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    approved: bool = False


def store(root: Path, name: str) -> StatePersistence:
    return StatePersistence(name, root / ".loops")


def drive(
    root: Path,
    name: str,
    kill_at: int | None = None,
    then_at: int | None = None,
    env: dict[str, str] | None = None,
) -> Drive:
    """Run loop *name* in *root* (with *env*) to its end, killed at the *kill_at*-th write
    of the whole drive, and the process after that one at its *then_at*-th write."""
    done = Drive()
    kills = [k for k in (kill_at, then_at) if k is not None]
    for _ in range(10):
        saved = store(root, name).load_state()
        # A crashed run that had asked its question is answered before it is resumed.
        asked = saved is not None and (
            saved.status == Status.AWAITING_APPROVAL
            or (saved.status == Status.RUNNING and saved.approval is not None)
        )
        if saved is not None and asked and not done.approved:
            answer = ll_loop_traced(root, name, None, "approve", name, env=env)[0]
            done.outputs.append(answer.stdout + answer.stderr)
            done.approved = True
        elif saved is not None and saved.status == Status.AWAITING_APPROVAL:
            # A person answers once: until a run has taken the answer (its file is there),
            # it goes on with it; once taken, it must never ask again.
            answer_file = root / ".loops" / ".running" / f"{name}.approval.json"
            assert answer_file.exists(), f"{name}: asked again after its answer:\n{done.outputs}"
        elif saved is not None and saved.status not in (Status.RUNNING, Status.INTERRUPTED):
            return done  # it ended
        command = "run" if saved is None else "resume"
        at = None
        if kills:
            # The first kill counts the writes of the whole drive; the second those of the
            # process after the killed one.
            at = kills[0] - done.writes if done.kills == 0 else kills[0]
        proc, writes = ll_loop_traced(root, name, at, command, name, env=env)
        done.outputs.append(proc.stdout + proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        done.writes += writes
        if proc.returncode == KILLED:
            done.kills += 1
            if kills:  # else killed by the test's own hand, not by strace
                kills.pop(0)
            last = store(root, name).tail_events(1)
            if last and last[0].get("event") == Event.ACTION_START:
                done.rerun.append(str(last[0].get("state")))
    raise AssertionError(f"{name}: no end after 10 runs:\n" + "\n".join(done.outputs[-3:]))


def effects(root: Path) -> list[str]:
    path = root / EFFECTS
    return path.read_text().splitlines() if path.exists() else []


def allowed(reference: list[str], got: list[str], rerun: list[str]) -> bool:
    """*got* is *reference* with at most one more copy of the line of each action in
    *rerun* (its state's name is the line's first word), right after the original."""
    if got == reference:
        return True
    extra = list(rerun)
    i = j = 0
    while i < len(got):
        if j < len(reference) and got[i] == reference[j]:
            i, j = i + 1, j + 1
            continue
        if i > 0 and got[i] == got[i - 1] and got[i].split()[0] in extra:
            extra.remove(got[i].split()[0])
            i += 1
            continue
        return False
    return j == len(reference)


def record(root: Path, name: str) -> dict[str, Any]:
    """The run's end as `ll-loop status --json` says it (its state file), less what varies
    between runs (times, pids, paths), and the routes it took, in order."""
    persistence = store(root, name)
    state = persistence.load_state()
    assert state is not None
    routes = [
        (event.get("loop", name), event.get("from"), event.get("to"), event.get("verdict"))
        for event in persistence.read_events()
        if event.get("event") == Event.ROUTE
    ]
    return {
        "status": state.status,
        "terminated_by": state.terminated_by,
        "error": state.error,
        "current_state": state.current_state,
        "iteration": state.iteration,
        "captured": _steady(state.captured),
        "prev_result": _steady(state.prev_result),
        "last_result": _steady(state.last_result),
        # its counts; the git tree's fingerprint hashes HEAD, a commit of each project's own
        "stall_watch": _steady({k: v for k, v in state.stall_watch.items() if k != "tree"}),
        "caps": state.caps,  # the steps run (max_steps), the state's repeats, a cap's route
        "routes": routes,
    }


def _steady(value: Any) -> Any:
    """*value* without the keys that differ between two runs of the same loop."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in _VARYING}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value
