"""`ll-loop report` and `export` through the console script: figures equal the events' sums."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_claude import fake_claude
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

# A Claude step (a fake `claude` that reports $0.0125 and its tokens) and a shell check that
# fails until the third pass.
PAID = """\
    name: paid
    initial: check
    max_iterations: 6
    states:
      check:
        action: 'n=$(cat n 2>/dev/null || echo 0); echo "check $n"; [ "$n" -ge 2 ]'
        on_success: done
        on_failure: fix
      fix:
        action_type: prompt
        action: "Fix the check"
        evaluate:
          type: exit_code
        on_success: bump
        on_failure: done
      bump:
        action: 'echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n'
        next: check
      done:
        terminal: true
"""
COST = 0.0125


@pytest.fixture
def paid(loop_project: LoopProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake_claude(tmp_path, monkeypatch, COST)
    loop_project.write("paid", PAID)
    result = llproc.console(loop_project.root, "run", "paid")
    assert result.returncode == ExitCode.OK, result.stderr
    return loop_project.root


def _events(root: Path, run_id: str) -> list[dict[str, Any]]:
    history = llproc.console(root, "history", "paid", "--run", run_id, "--json")
    events = json.loads(history.stdout)
    assert isinstance(events, list)
    return events


def _ms(start: str, end: str) -> int:
    return round(
        (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() * 1000
    )


def _expected(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's figures worked out here, independently, from the raw events."""
    states: dict[str, dict[str, Any]] = {}
    entered: tuple[str, str] | None = None
    cost = 0.0
    for event in events:
        kind = event["event"]
        if kind == "state_enter":
            entered = (event["state"], event["ts"])
            figures = states.setdefault(event["state"], {"visits": 0, "verdicts": {}, "ms": 0})
            figures["visits"] += 1
        elif kind == "evaluate":
            verdicts = states[event["state"]]["verdicts"]
            verdicts[event["verdict"]] = verdicts.get(event["verdict"], 0) + 1
        elif kind == "route" and entered is not None and event["from"] == entered[0]:
            states[entered[0]]["ms"] += _ms(entered[1], event["ts"])
            entered = None
        cost += event.get("cost_usd", 0) if kind in ("action_complete", "evaluate") else 0
    passes = len({e["iteration"] for e in events if e["event"] == "state_enter"})
    return {"states": states, "cost": cost, "passes": passes}


def test_report_json_equals_the_sums_of_the_events(paid: Path) -> None:
    result = llproc.console(paid, "report", "paid", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    report = json.loads(result.stdout)
    expected = _expected(_events(paid, report["run_id"]))
    assert report["outcome"] == "terminal"
    assert report["passes"] == expected["passes"] == 3
    assert report["cost_usd"] == pytest.approx(expected["cost"])
    assert report["cost_usd"] == pytest.approx(2 * COST)  # two Claude steps
    assert report["steps"] == sum(s["visits"] for s in expected["states"].values())
    for name, figures in expected["states"].items():
        got = report["states"][name]
        assert got["visits"] == figures["visits"], name
        assert got["verdicts"] == figures["verdicts"], name
        assert got["total_ms"] == figures["ms"], name
    assert report["states"]["fix"]["cost_usd"] == pytest.approx(2 * COST)
    assert report["states"]["fix"]["tokens"] == 2 * (1200 + 80 + 300)
    assert report["costliest_state"] == "fix"
    assert [p["path"] for p in report["last_passes"]] == [
        ["check", "fix", "bump"],
        ["check", "fix", "bump"],
        ["check"],
    ]
    assert {(e["from"], e["to"]): e["count"] for e in report["edges"]}[("check", "fix")] == 2


def test_the_text_report_names_states_passes_and_the_costliest(paid: Path) -> None:
    text = llproc.console(paid, "report", "paid").stdout
    assert text.startswith("loop paid · run ")
    assert "terminal in done (success) · 3 passes · 7 steps" in text
    assert "check → fix → bump" in text
    assert "costliest: fix ($0.0250)" in text
    assert "failure 2, success 1" in text


def test_report_of_an_archived_run_and_of_none(paid: Path) -> None:
    runs = json.loads(llproc.console(paid, "runs", "paid", "--json").stdout)
    by_id = llproc.console(paid, "report", "paid", "--run", runs[0]["run_id"], "--json")
    assert json.loads(by_id.stdout)["run_id"] == runs[0]["run_id"]
    (paid / ".loops" / "never.yaml").write_text(
        "name: never\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    )
    none = llproc.console(paid, "report", "never")
    assert none.returncode == ExitCode.FAILED
    assert none.stderr == "ll-loop: loop 'never' has no run to report yet\n"


def test_export_then_report_from_several_files(paid: Path, tmp_path: Path) -> None:
    first = tmp_path / "a.tar.gz"
    assert llproc.console(paid, "export", "paid", "-o", str(first)).returncode == 0
    (paid / "n").unlink()
    assert llproc.console(paid, "run", "paid").returncode == 0
    second = tmp_path / "b.tar.gz"
    assert llproc.console(paid, "export", "paid", "-o", str(second)).returncode == 0
    result = llproc.console(paid, "report", "--from", str(first), str(second), "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    combined = json.loads(result.stdout)
    assert len(combined["runs"]) == 2
    assert combined["runs"][0]["run_id"] != combined["runs"][1]["run_id"]
    assert combined["totals"]["runs"] == 2
    assert combined["totals"]["cost_usd"] == pytest.approx(4 * COST)
    assert combined["totals"]["steps"] == 14
    html = tmp_path / "all.html"
    assert (
        llproc.console(
            paid, "report", "--from", str(first), str(second), "--html", str(html)
        ).returncode
        == 0
    )
    assert html.read_text().count('<article id="run-') == 2


@pytest.mark.parametrize("reader", ["cat", "gzip -dc"])
def test_report_from_a_process_substitution_reads_the_pipe(
    paid: Path, tmp_path: Path, reader: str
) -> None:
    """`report --from <(...)` was refused as a FIFO: bash gives a pipe, which is read."""
    export = tmp_path / "a.tar.gz"
    assert llproc.console(paid, "export", "paid", "-o", str(export)).returncode == 0
    ll_loop = str(Path(sys.executable).parent / "ll-loop")
    script = f'"$1" report --from <({reader} "$2") --json'
    done = subprocess.run(
        ["bash", "-c", script, "bash", ll_loop, str(export)],
        cwd=paid,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == ExitCode.OK, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert run["cost_usd"] == pytest.approx(2 * COST)


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("../../escaped/20260101-000000/paid.events.jsonl", tarfile.REGTYPE),
        ("/abs/20260101-000000/paid.events.jsonl", tarfile.REGTYPE),
        ("paid/20260101-000000/paid.events.jsonl", tarfile.SYMTYPE),
        ("paid/20260101-000000/paid.events.jsonl", tarfile.CHRTYPE),
    ],
)
def test_a_hostile_export_is_refused_in_one_line(tmp_path: Path, name: str, kind: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = "/etc/passwd"
    bad = _tar(tmp_path / "bad.tar.gz", [(info, b'{"event": "loop_start"}\n')])
    result = llproc.console(tmp_path, "report", "--from", str(bad))
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1
    assert "not a run exported by ll-loop export (no run files in it)" in result.stderr
    assert not (tmp_path.parent / "escaped").exists()


def test_a_file_that_is_not_an_export_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8b not really gzip")
    for path in (junk, tmp_path / "missing.tar.gz"):
        result = llproc.console(tmp_path, "report", "--from", str(path))
        assert result.returncode != 0
        assert result.stderr.count("\n") == 1
        assert str(path) in result.stderr
        assert "Traceback" not in result.stderr


def test_hostile_state_names_are_escaped_in_html(loop_project: LoopProject, tmp_path: Path) -> None:
    loop_project.write(
        "xss",
        """\
        name: xss
        initial: "<script>alert(1)</script>"
        states:
          "<script>alert(1)</script>":
            action: "echo '<img src=x onerror=alert(2)>'"
            next: done
          done:
            terminal: true
        """,
    )
    assert llproc.console(loop_project.root, "run", "xss").returncode == 0
    page = tmp_path / "xss.html"
    assert llproc.console(loop_project.root, "report", "xss", "--html", str(page)).returncode == 0
    text = page.read_text()
    assert "<script" not in text
    assert "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "http://" not in text
    assert "https://" not in text


def test_a_fifo_or_device_named_as_the_output_is_written_to_not_replaced(
    paid: Path, tmp_path: Path
) -> None:
    """`--html /dev/stdout` or `-o /dev/null` must not put a file of ours in /dev (as root,
    the device itself was replaced): a FIFO stands in for a device here."""
    import os
    import stat
    import threading

    for argv in (("report", "paid", "--html"), ("export", "paid", "-o")):
        fifo = tmp_path / f"{argv[0]}.fifo"
        os.mkfifo(fifo)
        got: list[bytes] = []
        # Its reader is there before the command starts (a FIFO nobody reads is refused),
        # and sees the end of the file only once the command is done: a writer of ours
        # (opened read-write, which Linux allows without waiting) is closed after it.
        keeper = os.open(fifo, os.O_RDWR)
        read_end = os.open(fifo, os.O_RDONLY)

        def read_all(fd: int = read_end, into: list[bytes] = got) -> None:
            with os.fdopen(fd, "rb") as pipe:
                into.append(pipe.read())

        reader = threading.Thread(target=read_all, daemon=True)
        reader.start()
        result = llproc.console(paid, *argv, str(fifo))
        os.close(keeper)
        reader.join(scaled(30))
        assert result.returncode == ExitCode.OK, result.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        assert got
        assert got[0][:2] in (b"<!", b"\x1f\x8b")


def test_a_corrupt_event_line_in_an_export_names_the_file_and_member(tmp_path: Path) -> None:
    """It named the temporary folder the export was unpacked in (gone by then)."""
    info = tarfile.TarInfo("paid/20260101-000000/paid.events.jsonl")
    bad = _tar(tmp_path / "bad.tar.gz", [(info, b"{not json\n")])
    result = llproc.console(tmp_path, "report", "--from", str(bad))
    assert result.returncode != 0
    assert result.stderr.startswith(
        f"ll-loop: error: {bad}: paid/20260101-000000/paid.events.jsonl:1: corrupt event line"
    )
    assert result.stderr.count("\n") == 1


def test_a_cost_that_is_not_a_number_in_an_export_still_gives_json(tmp_path: Path) -> None:
    """json.loads takes NaN and Infinity: `report --json` printed them back, which is not JSON."""
    lines = [
        '{"event":"loop_start","ts":"2026-01-01T00:00:00+00:00","loop":"paid"}',
        '{"event":"state_enter","ts":"2026-01-01T00:00:00+00:00","state":"a","iteration":1}',
        '{"event":"action_complete","ts":"2026-01-01T00:00:01+00:00","state":"a","cost_usd":NaN}',
        '{"event":"action_complete","ts":"2026-01-01T00:00:01+00:00","cost_usd":Infinity}',
    ]
    info = tarfile.TarInfo("paid/20260101-000000/paid.events.jsonl")
    export = _tar(tmp_path / "nan.tar.gz", [(info, ("\n".join(lines) + "\n").encode())])
    result = llproc.console(tmp_path, "report", "--from", str(export), "--json")
    assert result.returncode == ExitCode.OK, result.stderr

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    combined = json.loads(result.stdout, parse_constant=refuse)
    assert combined["totals"]["cost_usd"] == 0


def test_an_export_that_would_unpack_too_much_is_refused(tmp_path: Path) -> None:
    # A member's declared size counts even when it is not a run file: skipping it still
    # means unpacking it (a gzip bomb). No member is read past the limit.
    big = tarfile.TarInfo("junk/huge.bin")
    big.size = 2 * 1024 * 1024 * 1024
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(gzip.compress(big.tobuf()))  # only the header: its size is a claim
    result = llproc.console(tmp_path, "report", "--from", str(bomb))
    assert result.returncode != 0
    assert "more than 100,000 files or 1 GiB unpacked" in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_report_finds_its_archive_id_when_the_first_event_is_a_moment_late(
    paid: Path,
) -> None:
    # The state's start and the first event's time are taken a moment apart: under load
    # they differ by a millisecond or more. The report must still name the archived run.
    from little_loops.fsm.facts.layout import run_files

    events = run_files("paid", paid / ".loops").events
    lines = events.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["event"] == "loop_start"
    first["ts"] = "2000-01-01T00:00:00.000+00:00"  # any other time than the state's start
    events.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    runs = json.loads(llproc.console(paid, "runs", "paid", "--json").stdout)
    report = json.loads(llproc.console(paid, "report", "paid", "--json").stdout)
    assert report["run_id"] == runs[-1]["run_id"]


RESUMED = """\
    name: resumed
    initial: check
    states:
      check:
        action: test -e fixed
        on_success: done
        on_failure: fix
      fix:
        action: if [ -e again ]; then touch fixed; else touch again; sleep {marker}; fi
        next: check
      done:
        terminal: true
"""
PAUSE_S = 1.5  # between the stop and the resume: no step's or pass's time may hold it


def test_a_resumed_run_lists_each_pass_once_timed_by_its_steps_own_events(
    loop_project: LoopProject, marker: str
) -> None:
    """Stopped in `fix`, resumed: pass 1 was listed twice, the second time with the time
    from its start to its end, the pause included."""
    loop_project.write("resumed", RESUMED.format(marker=marker))
    root = loop_project.root
    proc = llproc.start(root, "run", "resumed")
    llproc.wait_for(lambda: llproc.sleepers(marker) != [], timeout=30, what="the fix action")
    assert llproc.ll_loop(root, "stop", "resumed", timeout=60).returncode == ExitCode.OK
    proc.communicate(timeout=60)
    time.sleep(PAUSE_S)  # the pause the report must not count
    resumed = llproc.ll_loop(root, "resume", "resumed", timeout=60)
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    report = json.loads(llproc.console(root, "report", "resumed", "--json").stdout)

    # Each step's time from its own events: entered → routed, or → the stop; by pass.
    events = llproc.events(root, "resumed")
    by_state: dict[str, int] = {}
    by_pass: dict[int, int] = {}
    entered: dict[str, Any] | None = None
    for event in events:
        if event["event"] == "state_enter":
            entered = event
        elif event["event"] in ("route", "loop_complete") and entered is not None:
            took = _ms(entered["ts"], event["ts"])
            by_state[entered["state"]] = by_state.get(entered["state"], 0) + took
            by_pass[entered["iteration"]] = by_pass.get(entered["iteration"], 0) + took
            entered = None
    assert [e.get("terminated_by") for e in events if e["event"] == "loop_complete"] == [
        "stopped",
        "terminal",
    ]
    assert [(p["pass"], p["path"], p["duration_ms"]) for p in report["last_passes"]] == [
        (1, ["check", "fix"], by_pass[1]),
        (2, ["check"], by_pass[2]),
    ]
    assert (report["passes"], report["resumed"], report["success"]) == (2, 1, True)
    assert report["states"]["fix"]["visits"] == 1  # the visit the stop cut short, taken up
    assert report["states"]["fix"]["total_ms"] == by_state["fix"]
    wall = _ms(events[0]["ts"], events[-1]["ts"])
    assert by_pass[1] + by_pass[2] <= wall - PAUSE_S * 1000
