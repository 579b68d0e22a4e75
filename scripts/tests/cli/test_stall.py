"""Stall breakers through the console script: same_result, no_change_passes, max_visits."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit and a `.loops/` folder."""
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "tests@example.com")
    _git(tmp_path, "config", "user.name", "Tests")
    (tmp_path / "notes.txt").write_text("start\n")
    _git(tmp_path, "add", "notes.txt")
    _git(tmp_path, "commit", "-qm", "start")
    (tmp_path / ".loops").mkdir()
    return tmp_path


def _write(root: Path, name: str, text: str) -> None:
    (root / ".loops" / f"{name}.yaml").write_text(textwrap.dedent(text))


# A fix step whose command is FIX, then a check that passes once `fixed` exists.
FIX_LOOP = """\
    name: fixer
    initial: fix
    stall:
      no_change_passes: 2
      on_stall: gave_up
    states:
      fix:
        action: {fix}
        next: check
      check:
        action: test -e fixed
        on_success: done
        on_failure: fix
      done:
        terminal: true
      gave_up:
        terminal: true
"""


def test_a_fix_step_that_changes_nothing_ends_at_the_stall_route(repo: Path) -> None:
    _write(repo, "fixer", FIX_LOOP.format(fix='"true"'))
    result = llproc.console(repo, "run", "fixer", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    final = json.loads(result.stdout)
    # Passes 1 and 2 change nothing: the third pass begins with the stall.
    assert (final["final_state"], final["iterations"]) == ("gave_up", 3)
    assert "⊘ stall: no_change_passes → gave_up" in result.stderr
    stalls = [e for e in llproc.events(repo, "fixer") if e["event"] == "stall"]
    assert [(e["detector"], e["count"], e["to"]) for e in stalls] == [
        ("no_change_passes", 2, "gave_up")
    ]


def test_a_fix_step_that_changes_the_tree_is_no_stall(repo: Path) -> None:
    # Each pass adds a line to a tracked file; the fourth makes the check pass.
    fix = "'echo x >> notes.txt; [ $(wc -l < notes.txt) -ge 4 ] && touch fixed; true'"
    _write(repo, "fixer", FIX_LOOP.format(fix=fix))
    result = llproc.console(repo, "run", "fixer", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert json.loads(result.stdout)["final_state"] == "done"
    assert "stall" not in result.stderr


NO_ROUTE = """\
    name: spin
    initial: check
    stall:
      same_result: 3
    states:
      check:
        action: echo same
        evaluate:
          type: output_contains
          pattern: never
        on_success: done
        on_failure: check
      done:
        terminal: true
"""


def test_same_result_without_a_route_ends_the_run_with_its_own_code(repo: Path) -> None:
    _write(repo, "spin", NO_ROUTE)
    result = llproc.console(repo, "run", "spin", "--json")
    assert result.returncode == ExitCode.STALL == 8, result.stderr
    final = json.loads(result.stdout)
    assert final["terminated_by"] == "stall"
    assert final["stall"] == {"detector": "same_result", "state": "check", "limit": 3, "count": 3}
    assert result.stderr.splitlines()[-1].startswith(
        "Loop stalled in check: stall (same_result: 3): state 'check' gave the same verdict "
        "on the same output 3 times in a row (3 iterations"
    )
    status = llproc.console(repo, "status", "spin", "--json")
    assert json.loads(status.stdout)["status"] == "failed"
    # A run ended by a stall is finished: nothing to resume.
    resumed = llproc.console(repo, "resume", "spin")
    assert resumed.returncode == ExitCode.FAILED
    assert "nothing to resume" in resumed.stderr


def test_a_changing_output_is_not_the_same_result(repo: Path) -> None:
    counting = NO_ROUTE.replace("echo same", "date +%N")
    _write(repo, "spin", counting.replace("same_result: 3", "same_result: 2"))
    result = llproc.console(repo, "run", "spin", "-n", "4")
    assert result.returncode == ExitCode.MAX_ITERATIONS, result.stderr


VISITS = """\
    name: visits
    initial: poke
    states:
      poke:
        action: "false"
        stall:
          max_visits: 3
          on_stall: report
        on_success: done
        on_failure: poke
      report:
        action: echo reported
        next: done
      done:
        terminal: true
"""


def test_max_visits_routes_the_state_to_its_on_stall(repo: Path) -> None:
    _write(repo, "visits", VISITS)
    result = llproc.console(repo, "run", "visits", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    routes = [(e["from"], e["to"]) for e in llproc.events(repo, "visits") if e["event"] == "route"]
    # Entered three times, routed back a third time: the fourth entry is the stall.
    assert routes == [("poke", "poke")] * 3 + [("poke", "report"), ("report", "done")]
    stall = next(e for e in llproc.events(repo, "visits") if e["event"] == "stall")
    assert (stall["detector"], stall["count"], stall["limit"]) == ("max_visits", 4, 3)


def test_the_counts_survive_a_resume(repo: Path) -> None:
    _write(repo, "visits", VISITS.replace("on_stall: report", "on_stall: done"))
    first = llproc.console(repo, "run", "visits", "-n", "2")
    assert first.returncode == ExitCode.MAX_ITERATIONS, first.stderr
    resumed = llproc.console(repo, "resume", "visits", "-n", "10", "--json")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    # Entered twice before the resume: the fourth entry (iteration 4) is the stall; a
    # resume that forgot the count would go on to iteration 6.
    assert json.loads(resumed.stdout)["iterations"] == 4


def test_no_change_passes_outside_a_git_repository_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    _write(tmp_path, "fixer", FIX_LOOP.format(fix='"true"'))
    result = llproc.console(tmp_path, "run", "fixer")
    assert result.returncode == ExitCode.FAILED
    assert result.stderr.splitlines()[-1].startswith(
        f"Loop failed in fix: stall: no_change_passes needs a git repository, and {tmp_path}"
        " is not in one"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("on_stall: gave_up", "on_stall: gave_upp"),
            "loop 'fixer' > stall > on_stall: 'gave_upp' is not a state (did you mean gave_up?)",
        ),
        (
            ("        next: check", "        next: check\n        stall: {no_change_passes: 1}"),
            "loop 'fixer' > states > fix > stall > no_change_passes: only at the loop level",
        ),
        (
            ("  no_change_passes: 2", "  no_change_pases: 2"),
            "loop 'fixer' > stall > no_change_pases: unknown key (did you mean no_change_passes?)",
        ),
        (
            ("        next: check", "        next: check\n        stall: {on_stall: nowhere}"),
            "loop 'fixer' > states > fix > stall > on_stall: 'nowhere' is not a state",
        ),
    ],
)
def test_validate_checks_the_stall_keys_and_targets(
    repo: Path, change: tuple[str, str], message: str
) -> None:
    _write(repo, "fixer", FIX_LOOP.format(fix='"true"').replace(*change))
    result = llproc.console(repo, "validate", "fixer")
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert message in result.stdout + result.stderr
