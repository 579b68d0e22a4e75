"""The learning state kind: targets proven from the registry, /ll:explore-api for the rest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.definition.model.learning import LearningConfig
from little_loops.fsm.engine.kinds.learning import resolved
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.values.interpolation import InterpolationContext

# In little-loops' spelling (on_yes, on_blocked, failure: true), as its
# ready-to-implement-gate writes it; `explorer` stands in for Claude Code running
# /ll:explore-api: it writes the target's record with the status in $EXPLORE_STATUS.
GATE = """\
name: gate
initial: prove
agent: explorer
agents:
  explorer:
    command: ./tools/explore
context:
  targets: "Acme SDK streaming, pathlib"
  max_retries: "1"
states:
  prove:
    type: learning
    learning:
      targets_csv: "${context.targets}"
      max_retries_expr: "${context.max_retries}"
    on_yes: done
    on_blocked: blocked
  done:
    terminal: true
  blocked:
    action: 'echo "blocked on ${result.target}: ${result.reason}"'
    terminal: true
    failure: true
"""
EXPLORE = """\
#!/bin/bash
target="${1#/ll:explore-api }"
echo "exploring $target" >> explored.txt
[ -n "$EXPLORE_STATUS" ] || exit 0
slug=$(printf %s "$target" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 -]//g; s/[ -][ -]*/-/g')
printf -- '---\\ntarget: %s\\ndate: "%s"\\nstatus: %s\\n---\\n' "$target" "$(date +%F)" \\
  "$EXPLORE_STATUS" > ".ll/learning-tests/$slug.md"
"""
PROVEN = '---\ntarget: pathlib\ndate: "2026-01-01"\nstatus: proven\n---\n'


def _project(tmp_path: Path, loop: str = GATE) -> Path:
    files = {
        ".loops/gate.yaml": loop,
        "tools/explore": EXPLORE,
        ".ll/learning-tests/pathlib.md": PROVEN,
    }
    root = loops_project(tmp_path, files)
    (root / "tools/explore").chmod(0o755)
    return root


def _run(root: Path, status: str = "", path: str | None = None) -> tuple[int, str]:
    env = {**os.environ, "EXPLORE_STATUS": status}
    if path is not None:
        env["PATH"] = path
    check = ll_loop(root, "validate", "gate", env=env)
    assert check.returncode == 0, check.stderr + check.stdout
    run = ll_loop(root, "run", "gate", env=env)
    return run.returncode, run.stdout + run.stderr


def test_a_missing_target_is_explored_then_proven(tmp_path: Path) -> None:
    root = _project(tmp_path)
    code, out = _run(root, "proven")
    assert code == ExitCode.OK, out
    assert "/ll:explore-api Acme SDK streaming" in out
    assert "→ done" in out
    # pathlib had a record: it was not explored
    assert (root / "explored.txt").read_text() == "exploring Acme SDK streaming\n"
    assert (root / ".ll/learning-tests/acme-sdk-streaming.md").is_file()


def test_a_refuted_target_blocks(tmp_path: Path) -> None:
    code, out = _run(_project(tmp_path), "refuted")
    assert code == ExitCode.TERMINAL_FAILURE, out
    assert "→ blocked" in out
    assert "blocked on Acme SDK streaming: refuted" in out


def test_a_target_still_unproven_after_its_retries_blocks(tmp_path: Path) -> None:
    root = _project(tmp_path, GATE.replace('max_retries: "1"', 'max_retries: "2"'))
    code, out = _run(root, "")  # the explorer writes no record
    assert code == ExitCode.TERMINAL_FAILURE, out
    assert (root / "explored.txt").read_text().count("exploring") == 2
    assert "blocked on Acme SDK streaming: retries_exhausted" in out


def test_all_proven_runs_without_any_agent(tmp_path: Path) -> None:
    loop = GATE.replace('"Acme SDK streaming, pathlib"', '"pathlib"').replace(
        "agent: explorer\n", ""
    )
    code, out = _run(_project(tmp_path, loop), path="/usr/bin:/bin")
    assert code == ExitCode.OK, out
    assert "→ done" in out


def test_without_the_explore_command_one_line_names_what_is_missing(tmp_path: Path) -> None:
    if shutil.which("claude", path="/usr/bin:/bin"):
        pytest.skip("claude is installed in /usr/bin or /bin")
    root = _project(tmp_path, GATE.replace("agent: explorer\n", ""))
    code, out = _run(root, "proven", path="/usr/bin:/bin")
    assert code == ExitCode.FAILED, out
    assert "Traceback" not in out
    assert "learning state 'prove' cannot run /ll:explore-api for 'Acme SDK streaming'" in out
    assert "claude: command not found" in out


def test_simulate_routes_the_scripted_verdicts(tmp_path: Path) -> None:
    root = _project(tmp_path)
    walk = ll_loop(root, "simulate", "gate", "--verdicts", "prove=blocked")
    assert walk.returncode == ExitCode.TERMINAL_FAILURE, walk.stdout + walk.stderr
    assert "→ blocked" in walk.stdout + walk.stderr


def test_targets_and_retries_are_filled_in_when_the_state_runs() -> None:
    ctx = InterpolationContext(context={"t": " a, b ,,c", "n": "3"})
    config = LearningConfig(targets_csv="${context.t}", max_retries_expr="${context.n}")
    assert resolved(config, ctx) == (["a", "b", "c"], 3)
    assert resolved(LearningConfig(targets=["x"]), ctx) == (["x"], 2)
    with pytest.raises(ValueError, match="max_retries_expr"):
        resolved(LearningConfig(targets=["x"], max_retries_expr="${context.t}"), ctx)


MARKED = """\
name: marked
initial: poll
states:
  poll:
    type: learning
    action: 'echo poll >> polls; [ "$(wc -l < polls)" -ge 4 ]'
    throttle:
      hard_max: 2
    on_success: done
    on_failure: poll
    on_throttle_hard: gave_up
  gave_up:
    terminal: true
  done:
    terminal: true
"""


@pytest.mark.parametrize(("marker", "end"), [("    type: learning\n", "done"), ("", "gave_up")])
def test_the_bare_marker_exempts_a_state_from_the_throttle(
    tmp_path: Path, marker: str, end: str
) -> None:
    root = loops_project(
        tmp_path, {".loops/marked.yaml": MARKED.replace("    type: learning\n", marker)}
    )
    check = ll_loop(root, "validate", "marked")
    assert check.returncode == 0, check.stderr + check.stdout
    run = ll_loop(root, "run", "marked")
    assert f"→ {end}" in run.stdout + run.stderr, run.stdout + run.stderr
