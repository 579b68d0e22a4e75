"""A corpus of corrupt state and event files against `status`, `resume`, `stop`, `list`, `history`.

Every file in `data/corrupt_state/` is put under `.loops/.running/` of loop `victim`; each
command answers with its data or one line naming the problem (non-zero exit), never a
traceback. Expected messages are listed per file below, word for word where users read them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.project import LoopProject, RunResult
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.reliability

CORPUS = Path(__file__).parents[1] / "data" / "corrupt_state"
STATE_FILES = sorted(CORPUS.glob("*.state.json"))
EVENT_FILES = sorted(CORPUS.glob("*.events.jsonl"))

VICTIM = """\
    name: victim
    initial: check
    states:
      check:
        action: "true"
        on_success: done
        on_failure: check
      done:
        terminal: true
"""

# What `status victim` says in parentheses after "corrupt state file" for each corrupt file.
CORRUPT = {
    "binary": "not UTF-8 text",
    "bom": "invalid or truncated JSON at line 1 column 1: Unexpected UTF-8 BOM (decode using "
    "utf-8-sig)",
    "captured_list": "'captured' should be an object, found a list",
    "context_string": "'context' should be an object, found a string",
    "continuation_list": "'continuation_prompt' should be a string or null, found a list",
    "cost_400_digits": "'cost_usd' should be a finite number, found a 401-digit number",
    "cost_negative": "'cost_usd' cannot be negative and 'usage' holds token counts",
    "deep": "JSON nested too deeply",
    "duplicate_keys": "'iteration' should be an integer, found a string",
    "empty": "empty",
    "float_overflow": "'cost_usd' should be a finite number, found inf",
    "huge_digits": "a number with too many digits",
    "iteration_bool": "'iteration' should be an integer, found a boolean",
    "iteration_float": "'iteration' should be an integer, found a number",
    "iteration_negative": "'iteration' and 'elapsed_ms' cannot be negative",
    "iteration_string": "'iteration' should be an integer, found a string",
    "list": "expected a JSON object, found a list",
    "missing_current_state": "missing 'current_state'",
    "nan_cost": "'cost_usd' should be a finite number, found nan",
    "not_utf8": "not UTF-8 text",
    "null": "expected a JSON object, found null",
    "other_loop": "it belongs to loop 'lint'",
    "pass_states_mixed": "'pass_states' should be a list of strings",
    "prev_result_string": "'prev_result' should be an object or null, found a string",
    "schema_future": "schema_version 99 is newer than this ll-loop reads (1)",
    "scope_numbers": "'scope' should be a list of strings",
    "started_at_number": "'started_at' should be a string, found an integer",
    "status_number": "'status' should be a string, found an integer",
    "status_unknown": "unknown status 'runing'",
    "string": "expected a JSON object, found a string",
    "truncated": "invalid or truncated JSON at line 9 column 4: Expecting ',' delimiter",
    "usage_strings": "'cost_usd' cannot be negative and 'usage' holds token counts",
    "whitespace": "empty",
}
# Odd but readable: shown by status, resumable (or refused by resume with one line).
READABLE = {
    "current_state_unknown": "cannot resume: saved state 'no-such-state' is not a state of loop "
    "'victim' (the loop file changed?)",
    "huge_elapsed": None,
    "huge_iteration": None,
    "huge_pid": None,
    "loop_path_missing_file": None,
    "negative_pid": None,
    "zero_pid": None,
}
# Event files: None when `history` shows them; else the parenthesised problem and line.
EVENTS = {
    "binary": (1, "invalid or truncated JSON at line 1 column 1: Expecting value"),
    "blank_lines": None,
    "deep": (2, "JSON nested too deeply"),
    "empty": None,
    "huge_digits": (2, "a number with too many digits"),
    "huge_numbers": None,
    "not_object": (2, "expected a JSON object, found a list"),
    "not_utf8": (2, "not UTF-8 text"),
    "nul_bytes": (2, "invalid or truncated JSON at line 1 column 1: Expecting value"),
    "only_torn": None,
    "torn_last": None,
    "torn_middle": (
        2,
        "invalid or truncated JSON at line 1 column 11: Unterminated string starting at",
    ),
    "wrong_types": None,
}
STATE_PATH = ".loops/.running/victim.state.json"
EVENTS_PATH = ".loops/.running/victim.events.jsonl"
FIX = "delete it, or start the loop over with 'll-loop run victim'"


def stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


def test_the_corpus_is_all_listed() -> None:
    assert {stem(p) for p in STATE_FILES} == set(CORRUPT) | set(READABLE)
    assert {stem(p) for p in EVENT_FILES} == set(EVENTS)


def one_line_error(result: RunResult) -> str:
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


@pytest.fixture
def victim(loop_project: LoopProject) -> LoopProject:
    loop_project.write("victim", VICTIM)
    (loop_project.loops / ".running").mkdir()
    return loop_project


@pytest.mark.parametrize("path", STATE_FILES, ids=stem)
def test_corrupt_state_file(victim: LoopProject, path: Path) -> None:
    shutil.copy(path, victim.root / STATE_PATH)
    name = stem(path)
    status = victim.run("status", "victim")
    listing = victim.run("list")
    running = victim.run("list", "--running", "--json")
    assert listing.code == ExitCode.OK
    assert running.code == ExitCode.OK
    entries = json.loads(running.out)
    if name in CORRUPT:
        (entry,) = entries  # cannot be told ended: listed, with its error
        message = f"{STATE_PATH}: corrupt state file ({CORRUPT[name]}); {FIX}"
        assert status.code == ExitCode.FAILED
        assert one_line_error(status) == f"ll-loop: error: {message}"
        assert entry["error"] == message
        assert "victim" in listing.out
        assert "corrupt" in listing.out
        for command in ("resume", "stop"):
            result = victim.run(command, "victim")
            assert result.code == ExitCode.FAILED, command
            assert one_line_error(result) == f"ll-loop: error: {message}"
        assert (victim.root / STATE_PATH).read_bytes() == path.read_bytes()  # left as it was
    else:
        assert status.code == ExitCode.OK, status.err
        going = json.loads(path.read_text())["status"] == "running"
        assert [e["loop"] for e in entries] == (["victim"] if going else [])  # the runs going on
        assert all("error" not in entry for entry in entries)
        stop = victim.run("stop", "victim")
        assert stop.code == ExitCode.FAILED  # nothing runs: no signal sent to any pid
        assert one_line_error(stop).startswith("ll-loop: loop 'victim' is not running")
        resume = victim.run("resume", "victim")
        if READABLE[name] is None:
            assert resume.code == ExitCode.OK, resume.err
            assert json.loads((victim.root / STATE_PATH).read_text())["status"] == "completed"
        else:
            assert resume.code == ExitCode.FAILED
            assert resume.err.splitlines()[-1] == f"ll-loop: error: {READABLE[name]}"


def interrupted_state(project: LoopProject) -> None:
    """A valid state of a run of `victim` interrupted in `check`."""
    assert project.run("run", "victim").code == ExitCode.OK
    path = project.root / STATE_PATH
    data = json.loads(path.read_text())
    data.update(status="interrupted", current_state="check", terminated_by="interrupted")
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("path", EVENT_FILES, ids=stem)
def test_corrupt_event_file(victim: LoopProject, path: Path) -> None:
    interrupted_state(victim)
    shutil.copy(path, victim.root / EVENTS_PATH)
    name = stem(path)
    history = victim.run("history", "victim")
    as_json = victim.run("history", "victim", "--json")
    assert victim.run("status", "victim").code == ExitCode.OK
    if EVENTS[name] is None:
        assert "Traceback" not in history.err
        assert history.code in (ExitCode.OK, ExitCode.FAILED)  # 1: no events
        events = json.loads(as_json.out)
        assert len(history.out.splitlines()) == len(events)
        assert (history.code == ExitCode.OK) == bool(events)
    else:
        line, problem = EVENTS[name]
        message = f"ll-loop: error: {EVENTS_PATH}:{line}: corrupt event line ({problem})"
        assert history.code == as_json.code == ExitCode.FAILED
        assert one_line_error(history) == message
        assert one_line_error(as_json) == message
    # The run resumes from its state file whatever the log holds, and appends whole lines.
    assert victim.run("resume", "victim").code == ExitCode.OK
    lines = [line for line in (victim.root / EVENTS_PATH).read_bytes().split(b"\n") if line]
    resumed = max(i for i, line in enumerate(lines) if b'"resumed":true' in line)
    checked = lines if name in ("torn_last", "only_torn") else lines[resumed:]
    for line in checked:  # a torn tail is trimmed before appending: then every line parses
        assert isinstance(json.loads(line), dict)
    assert json.loads(lines[-1])["event"] == "loop_complete"


@pytest.mark.parametrize(
    ("kind", "name", "argv"),
    [
        ("state", "deep", ["status", "victim"]),
        ("state", "huge_digits", ["list", "--running"]),
        ("state", "huge_pid", ["stop", "victim"]),
        ("state", "binary", ["resume", "victim"]),
        ("events", "wrong_types", ["history", "victim"]),
        ("events", "deep", ["history", "victim", "--json"]),
    ],
)
def test_no_traceback_from_the_real_command(
    victim: LoopProject, kind: str, name: str, argv: list[str]
) -> None:
    if kind == "events":
        interrupted_state(victim)
        shutil.copy(CORPUS / f"{name}.events.jsonl", victim.root / EVENTS_PATH)
    else:
        shutil.copy(CORPUS / f"{name}.state.json", victim.root / STATE_PATH)
    proc = subprocess.run(
        [sys.executable, "-m", "little_loops.cli", *argv],
        cwd=victim.root,
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) <= 1, proc.stderr
    if proc.returncode != ExitCode.OK:
        assert proc.stderr.startswith("ll-loop: "), proc.stderr
