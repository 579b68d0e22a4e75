"""The run archive through the console script: `runs`, `history --run`, `logs --run`, retention."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_claude import shell_claude
from support.project import LoopProject

from little_loops.fsm.facts.layout import HISTORY_DIR, RUN_SUMMARY, archive_dir, running_dir
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.archive import list_runs

# Each step prints the next number (kept in `n` between runs) and fails on 2 and 3: run 1
# ends done, run 2 fails twice and ends at max_iterations, run 3 (number 4) ends done.
COUNTED = """\
    name: counted
    initial: step
    max_iterations: 2
    states:
      step:
        action: >-
          n=$(( $(cat n 2>/dev/null || echo 0) + 1 )); echo $n > n;
          echo "run $n"; echo "err $n" >&2; [ $n != 2 ] && [ $n != 3 ]
        on_success: done
        on_failure: step
      done:
        terminal: true
"""


def _runs(root: Path, *args: str) -> list[dict[str, Any]]:
    result = llproc.console(root, "runs", *args, "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    runs = json.loads(result.stdout)
    assert isinstance(runs, list)
    return runs


def test_three_runs_are_listed_with_their_outcomes(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    codes = [llproc.console(loop_project.root, "run", "counted").returncode for _ in range(3)]
    assert codes == [ExitCode.OK, ExitCode.MAX_ITERATIONS, ExitCode.OK]
    runs = _runs(loop_project.root, "counted")
    assert [run["outcome"] for run in runs] == ["terminal", "max_iterations", "terminal"]
    assert [run["passes"] for run in runs] == [1, 2, 1]
    assert [run["final_state"] for run in runs] == ["done", "step", "done"]
    assert len({run["run_id"] for run in runs}) == 3
    table = llproc.console(loop_project.root, "runs", "counted").stdout.splitlines()
    assert table[0].split() == ["RUN", "STARTED", "DURATION", "OUTCOME", "PASSES", "COST"]
    assert [line.split()[0] for line in table[1:]] == [run["run_id"] for run in runs]
    everything = llproc.console(loop_project.root, "runs").stdout.splitlines()
    assert everything[0].split()[0] == "LOOP"
    assert len(everything) == 4


# A Claude step that costs $0.0003, then a check that exits as the file `code` says: 0 ends
# in `done`, 2 (the verdict error) in `stuck`.
CHEAP = """\
    name: cheap
    initial: work
    states:
      work:
        action_type: prompt
        action: Say hello
        next: check
      check:
        action: exit $(cat code 2>/dev/null || echo 0)
        on_success: done
        on_error: stuck
      done:
        terminal: true
      stuck:
        terminal: true
"""


def test_outcome_names_the_terminal_and_a_small_cost_is_not_zero(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = '{"type": "result", "result": "Hello", "total_cost_usd": 0.0003}'
    shell_claude(loop_project.root, monkeypatch, f"echo '{report}'")
    loop_project.write("cheap", CHEAP)
    assert llproc.console(loop_project.root, "run", "cheap").returncode == ExitCode.OK
    (loop_project.root / "code").write_text("2\n")
    failed = llproc.console(loop_project.root, "run", "cheap")
    assert failed.returncode == ExitCode.TERMINAL_FAILURE, failed.stderr
    table = llproc.console(loop_project.root, "runs", "cheap").stdout.splitlines()
    rows = [[cell.strip() for cell in line.split("  ") if cell.strip()] for line in table]
    assert rows[0] == ["RUN", "STARTED", "DURATION", "OUTCOME", "PASSES", "COST"]
    # The terminal's name and whether it is a success (both were `terminal`), and $0.0003
    # (it was $0.00).
    assert [(row[3], row[4], row[5]) for row in rows[1:]] == [
        ("done (success)", "1", "$0.0003"),
        ("stuck (failure)", "1", "$0.0003"),
    ]
    runs = _runs(loop_project.root, "cheap")
    assert [(r["outcome"], r["status"], r["final_state"]) for r in runs] == [
        ("terminal", "completed", "done"),
        ("terminal_failure", "failed", "stuck"),
    ]


def test_history_and_logs_show_an_archived_run(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    for _ in range(3):
        llproc.console(loop_project.root, "run", "counted")
    first, second, _ = (run["run_id"] for run in _runs(loop_project.root, "counted"))
    logs = llproc.console(loop_project.root, "logs", "counted", "--run", first)
    assert logs.returncode == ExitCode.OK, logs.stderr
    assert "run 1" in logs.stdout
    assert "err 1" in logs.stdout
    assert f".history/counted/{first}/counted.step.out" in logs.stdout
    history = llproc.console(loop_project.root, "history", "counted", "--run", second, "--json")
    events = json.loads(history.stdout)
    assert events[-1]["event"] == "loop_complete"
    assert events[-1]["terminated_by"] == "max_iterations"
    # The current run's log is the third run's; the archive's own copy is unchanged by it.
    current = llproc.console(loop_project.root, "logs", "counted").stdout
    assert "run 4" in current
    assert "run 1" not in current


def test_a_wrong_run_id_is_one_line_naming_the_latest(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    (run_id,) = (run["run_id"] for run in _runs(loop_project.root, "counted"))
    result = llproc.console(loop_project.root, "history", "counted", "--run", "1999")
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1
    assert "no run '1999'" in result.stderr
    assert run_id in result.stderr
    follow = llproc.console(loop_project.root, "logs", "counted", "--run", "last", "-f")
    assert follow.returncode != 0
    assert "--follow" in follow.stderr


def test_retention_drops_the_oldest(loop_project: LoopProject) -> None:
    keep_two = COUNTED.replace("max_iterations: 2", "archive: {keep: 2}")
    loop_project.write("counted", keep_two.replace("[ $n != 2 ] && [ $n != 3 ]", "true"))
    for _ in range(4):
        llproc.console(loop_project.root, "run", "counted")
    runs = _runs(loop_project.root, "counted")
    assert len(runs) == 2
    logs = [
        llproc.console(loop_project.root, "logs", "counted", "--run", run["run_id"]).stdout
        for run in runs
    ]
    assert "run 3" in logs[0]
    assert "run 4" in logs[1]
    folders = [p.name for p in archive_dir(loop_project.loops, "counted").iterdir()]
    assert sorted(f for f in folders if not f.startswith(".")) == sorted(r["run_id"] for r in runs)


def test_keep_zero_archives_nothing(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED.replace("max_iterations: 2", "archive: {keep: 0}"))
    llproc.console(loop_project.root, "run", "counted")
    assert _runs(loop_project.root, "counted") == []
    assert not archive_dir(loop_project.loops, "counted").exists()


def test_a_corrupt_entry_is_skipped_with_a_warning(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    for _ in range(2):
        llproc.console(loop_project.root, "run", "counted")
    first = _runs(loop_project.root, "counted")[0]["run_id"]
    summary = archive_dir(loop_project.loops, "counted") / first / RUN_SUMMARY
    summary.write_text('{"run_id": "2026')
    result = llproc.console(loop_project.root, "runs", "counted")
    assert result.returncode == ExitCode.OK
    assert len(result.stdout.splitlines()) == 2  # the heading and the sound entry
    assert "warning:" in result.stderr
    assert f"{first}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_crashed_run_is_archived_when_the_loop_starts_again(loop_project: LoopProject) -> None:
    loop_project.write(
        "slow",
        """\
        name: slow
        initial: wait
        states:
          wait:
            action: "echo started; sleep 30"
            next: done
          done:
            terminal: true
        """,
    )
    process = llproc.start(loop_project.root, "run", "slow")
    try:
        llproc.wait_for(lambda: llproc.state(loop_project.root, "slow").get("iteration") == 1)
        llproc.wait_for(
            lambda: "started" in _read(running_dir(loop_project.loops) / "slow.wait.out")
        )
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    assert _runs(loop_project.root, "slow") == []  # nothing archived a run that never ended
    loop_project.write("slow", "name: slow\ninitial: done\nstates:\n  done:\n    terminal: true\n")
    assert llproc.console(loop_project.root, "run", "slow").returncode == ExitCode.OK
    crashed, finished = _runs(loop_project.root, "slow")
    assert (crashed["outcome"], crashed["final_state"]) == ("crashed", "wait")
    assert finished["outcome"] == "terminal"
    logs = llproc.console(loop_project.root, "logs", "slow", "--run", crashed["run_id"]).stdout
    assert "started" in logs


def test_a_resumed_run_keeps_its_entry(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    llproc.console(loop_project.root, "run", "counted")  # ends at max_iterations 2
    assert llproc.console(loop_project.root, "resume", "counted", "-n", "5").returncode == 0
    runs = _runs(loop_project.root, "counted")
    assert [run["outcome"] for run in runs] == ["terminal", "terminal"]  # replaced, not added
    assert runs[1]["passes"] == 3


def test_a_killed_archiver_leaves_no_half_entry(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    folder = archive_dir(loop_project.loops, "counted")
    (run_id,) = (run["run_id"] for run in _runs(loop_project.root, "counted"))
    # What a writer killed between its two renames leaves: the entry moved aside, and a
    # writer killed while copying: a partial folder. Neither is listed; the next archive
    # of the loop puts the first back and removes the second.
    os.rename(folder / run_id, folder / f".partial-{run_id}.999999.old")
    (folder / ".partial-20990101-000000.999998").mkdir()
    assert _runs(loop_project.root, "counted") == []
    llproc.console(loop_project.root, "run", "counted")
    runs, warnings = list_runs(loop_project.loops, "counted")
    assert [run.run_id for run in runs][0] == run_id
    assert len(runs) == 2
    assert warnings == []
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".partial")) == []


def test_the_archive_is_ignored_by_git(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    assert (loop_project.loops / HISTORY_DIR / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_linked_history_folder_is_refused(loop_project: LoopProject, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (loop_project.loops / HISTORY_DIR).symlink_to(elsewhere)
    loop_project.write("counted", COUNTED)
    result = llproc.console(loop_project.root, "run", "counted")
    assert result.returncode == ExitCode.OK  # the run's own outcome is unchanged
    assert "could not be archived" in result.stderr
    assert "symbolic link" in result.stderr
    assert list(elsewhere.iterdir()) == []


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def test_runs_older_than_max_age_are_dropped(loop_project: LoopProject) -> None:
    loop_project.write(
        "counted", COUNTED.replace("max_iterations: 2", "archive: {max_age_days: 1}")
    )
    llproc.console(loop_project.root, "run", "counted")
    (old,) = _runs(loop_project.root, "counted")
    summary = archive_dir(loop_project.loops, "counted") / old["run_id"] / RUN_SUMMARY
    data = json.loads(summary.read_text())
    summary.write_text(json.dumps({**data, "ended_at": "2000-01-01T00:00:00.000+00:00"}))
    llproc.console(loop_project.root, "run", "counted")
    assert [run["run_id"] for run in _runs(loop_project.root, "counted")] != [old["run_id"]]
    assert len(_runs(loop_project.root, "counted")) == 1


def test_an_entry_holds_only_its_own_runs_outputs(loop_project: LoopProject) -> None:
    loop_project.write(
        "branch",
        """\
        name: branch
        initial: a
        states:
          a:
            action: "echo a; test -f seen"
            on_success: done
            on_failure: b
          b:
            action: "echo b; touch seen"
            next: done
          done:
            terminal: true
        """,
    )
    for _ in range(2):
        llproc.console(loop_project.root, "run", "branch")
    first, second = (run["run_id"] for run in _runs(loop_project.root, "branch"))
    folder = archive_dir(loop_project.loops, "branch")
    assert (folder / first / "branch.b.out").read_text() == "b\n"
    assert (folder / second / "branch.a.out").read_text() == "a\n"
    assert not (folder / second / "branch.b.out").exists()  # the first run's, left in .running


def test_an_entry_whose_cost_is_not_a_number_is_skipped(loop_project: LoopProject) -> None:
    """json.loads takes NaN: `runs --json` printed it back, which is not JSON."""
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    entry = _runs(loop_project.root, "counted")[0]
    summary = archive_dir(loop_project.loops, "counted") / entry["run_id"] / RUN_SUMMARY
    summary.write_text(json.dumps({**entry, "cost_usd": float("nan")}))
    result = llproc.console(loop_project.root, "runs", "counted", "--json")
    assert result.returncode == ExitCode.OK
    assert json.loads(result.stdout) == []
    assert "'cost_usd' is not a finite number" in result.stderr


def test_an_entry_is_named_by_its_folders_not_its_run_json(loop_project: LoopProject) -> None:
    loop_project.write("counted", COUNTED)
    llproc.console(loop_project.root, "run", "counted")
    (run,) = _runs(loop_project.root, "counted")
    summary = archive_dir(loop_project.loops, "counted") / run["run_id"] / RUN_SUMMARY
    data = json.loads(summary.read_text())
    summary.write_text(json.dumps({**data, "loop": "../../etc", "run_id": "19990101-000000"}))
    (shown,) = _runs(loop_project.root, "counted")
    assert (shown["loop"], shown["run_id"]) == ("counted", run["run_id"])
