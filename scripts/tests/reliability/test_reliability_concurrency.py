"""Twenty real `ll-loop run` processes at once: ten share one scope, ten have their own.

The ten that share a scope never run at the same time: without `--queue` exactly one is
admitted and the others are refused naming the holder; with `--queue` all of them finish,
one after another. The ten with disjoint scopes all run at once. Overlap is judged from the
times each action writes (start and end, from the shell), not from ll-loop's own account.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.slowdown import scaled

pytestmark = pytest.mark.reliability

HALF = 10


def loop(name: str, scope: str, seconds: float) -> str:
    return textwrap.dedent(
        f"""\
        name: {name}
        initial: work
        scope: [{scope}]
        states:
          work:
            action: >-
              echo "start $(date +%s.%N)" >> times/{name};
              sleep {seconds};
              echo "end $(date +%s.%N)" >> times/{name}
            next: done
          done:
            terminal: true
        """
    )


def start_all(root: Path, names: list[str], *flags: str) -> dict[str, subprocess.Popen[str]]:
    go = root / "go"
    ready = root / "ready"
    ready.mkdir()
    # Each process says it is ready (imports done), then waits for the same file: once all
    # twenty are ready, `go` makes them start their claims together, however slowly a busy
    # machine brought them up.
    waiter = (
        "import os, sys, time\n"
        "from little_loops.cli import build_parser, main_loop\n"
        "build_parser('run')\n"  # the run command's modules are imported before `ready`
        f"open(os.path.join({str(ready)!r}, sys.argv[2]), 'w').close()\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.002)\n"
        "raise SystemExit(main_loop(sys.argv[1:]))\n"
    )
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", waiter, "run", name, "--quiet", *flags],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for name in names
    }
    limit = scaled(60)
    deadline = time.monotonic() + limit
    try:
        while len(list(ready.iterdir())) < len(names):
            assert time.monotonic() < deadline, f"the runs did not all start within {limit:.0f}s"
            assert all(p.poll() is None for p in procs.values()), "a run ended before go"
            time.sleep(0.01)
    except BaseException:
        for proc in procs.values():  # none may wait for `go` after the test
            proc.kill()
            proc.wait()
        raise
    go.touch()
    return procs


def finish(procs: dict[str, subprocess.Popen[str]]) -> dict[str, tuple[int, str]]:
    return {name: (p.wait(timeout=scaled(60)), p.communicate()[1]) for name, p in procs.items()}


def intervals(root: Path, name: str) -> tuple[float, float]:
    lines = (root / "times" / name).read_text().split()
    assert lines[0] == "start"
    assert lines[2] == "end"
    return float(lines[1]), float(lines[3])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / "times").mkdir()
    return tmp_path


def write_loops(root: Path, shared_s: float, own_s: float) -> tuple[list[str], list[str]]:
    shared = [f"shared-{i}" for i in range(HALF)]
    own = [f"own-{i}" for i in range(HALF)]
    for name in shared:
        (root / ".loops" / f"{name}.yaml").write_text(loop(name, "src", shared_s))
    for name in own:
        (root / ".loops" / f"{name}.yaml").write_text(loop(name, f"pkg/{name}", own_s))
    return shared, own


def test_twenty_runs_without_queue(project: Path) -> None:
    # Twenty processes claim at once on a machine that may have two cores: the actions last
    # long enough (longer on a slower machine) for the last to start before the first ends.
    shared, own = write_loops(project, scaled(1.0), scaled(1.0))
    results = finish(start_all(project, shared + own))
    admitted = [name for name in shared if results[name][0] == 0]
    assert len(admitted) == 1, {name: results[name] for name in shared}
    (holder,) = admitted
    for name in shared:
        if name == holder:
            continue
        code, err = results[name]
        assert code == 1
        assert re.fullmatch(
            rf"ll-loop: error: scope 'src' of loop '{name}' overlaps 'src' held by loop "
            rf"'{holder}' \(pid \d+\); wait with --queue or stop it with 'll-loop stop {holder}'\n",
            err,
        ), err
        assert not (project / "times" / name).exists()  # a refused run ran nothing
    for name in own:
        assert results[name][0] == 0, results[name]
    spans = [intervals(project, name) for name in [holder, *own]]
    # Disjoint scopes (and the one admitted shared run) ran at the same time.
    assert max(start for start, _ in spans) < min(end for _, end in spans)


def test_twenty_runs_with_queue(project: Path) -> None:
    # Each shared run holds 'src' for 0.5 s (longer on a slower machine): the first holds it
    # while all the others claim.
    shared, own = write_loops(project, scaled(0.5), scaled(1.0))
    procs = start_all(project, shared + own, "--queue")
    started = time.monotonic()
    results = finish(procs)
    assert all(code == 0 for code, _ in results.values()), results
    spans = sorted(intervals(project, name) for name in shared)
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert end <= start, f"two runs of scope 'src' overlapped: {spans}"
    waited = [name for name in shared if "queued: scope 'src'" in results[name][1]]
    assert len(waited) >= HALF - 1
    own_spans = [intervals(project, name) for name in own]
    assert max(s for s, _ in own_spans) < min(e for _, e in own_spans)
    locks = {p.name for p in (project / ".loops" / ".running").glob("*.lock")}
    assert locks == {".scopes.lock"}  # every claim released; the mutex file stays
    assert time.monotonic() - started < scaled(30)
