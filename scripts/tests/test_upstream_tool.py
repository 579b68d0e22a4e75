"""`scripts/dev upstream DIR`: a tiny little-loops tree of our own, measured with the real tool."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.slowdown import scaled

REPO = Path(__file__).resolve().parents[2]
GOOD = """\
name: {name}
initial: check
max_iterations: 3
states:
  check:
    action: "test -f clean"
    on_success: done
    on_failure: fix
  fix:
    action: "touch clean"
    next: check
  done:
    terminal: true
"""
# A stand-in for little-loops' own `ll-loop` (never the network in tests): valid, and its
# simulate prints a walk in that tool's summary format; `check` fails once in first-fail.
FAKE_UPSTREAM = """\
#!/bin/bash
[ "$1" = validate ] && exit 0
echo "=== SIMULATION: $2 ($4) ==="
case "$4" in
  all-pass) echo "States visited: check"; moved=done; ended=terminal ;;
  first-fail) echo "States visited: check → fix → check"; moved=done; ended=terminal ;;
  *) echo "States visited: check → fix → check → fix"; moved=check; ended=max_steps ;;
esac
echo "    Transition: check → $moved"
echo "Terminated by: $ended"
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """DIR: built-in loops (one with a key we do not know), lib/ and oracles/, a template,
    and project loops, one of which hides a built-in of its name."""
    loops = tmp_path / "up" / "scripts" / "little_loops" / "loops"
    (loops / "lib").mkdir(parents=True)
    (loops / "oracles").mkdir()
    (loops / "fix.yaml").write_text(GOOD.format(name="fix"))
    (loops / "odd.yaml").write_text(GOOD.format(name="odd") + "flavour: strange\n")
    (loops / "lib" / "common.yaml").write_text("fragments: {}\n")
    (loops / "oracles" / "gate.yaml").write_text(GOOD.format(name="gate"))
    (loops / "skeleton.yaml.tmpl").write_text("name: {{name}}\n")
    project = tmp_path / "up" / ".loops"
    project.mkdir()
    (project / "fix.yaml").write_text(GOOD.format(name="fix"))
    (project / "mine.yaml").write_text(GOOD.format(name="mine"))
    return tmp_path / "up"


def measure(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "upstream" / "measure.py"), *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )


def test_every_loop_is_validated_and_the_figures_printed(tree: Path) -> None:
    result = measure(str(tree))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:6] == [
        "== ll-loop validate",
        "ok    fix",
        "ok    mine",
        "FAIL  odd: loop 'odd' > flavour: unknown key (allowed: name, initial, states, "
        + lines[3].split("initial, states, ", 1)[1],
        "ok    oracles/gate",
        "ok    shadowed/fix",
    ]
    assert "ll-loop validate: 4 of 5 validate with no error" in lines
    assert "     1  unknown key 'flavour': odd" in lines


def test_simulate_compares_the_walks_of_the_loops_valid_in_both(tree: Path, tmp_path: Path) -> None:
    fake = tmp_path / "ll-loop"
    fake.write_text(FAKE_UPSTREAM)
    fake.chmod(0o755)
    result = measure(str(tree), "--simulate", "--upstream-ll-loop", str(fake))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # Ours: all-pass check > done, first-fail check > fix > check > done, and the others
    # start check > fix > check > fix: the fake's walks, but for all-error (an error verdict
    # with no route ends ours at check).
    assert "        all-error: DIFFERENT (theirs check > fix > check > fix; ours check)" in out
    assert "DIFF  fix\n" in out
    # Ours walks with --compat: the loop valid only with it (odd) is compared too.
    assert "against ours with --compat" in out
    assert out.rstrip().endswith(
        "simulate: 0 of 5 loops valid in both walk the same states in all 5 scenarios: -"
    )
    assert "all-pass: DIFFERENT" not in out
    assert "first-fail: DIFFERENT" not in out


def test_scripts_dev_runs_it(tree: Path) -> None:
    venv = Path(sys.executable).parent.parent  # already set up: the stamp matches
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "dev"), "upstream", str(tree)],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env={**os.environ, "LL_VENV": str(venv)},
    )
    assert result.returncode == 0, result.stderr
    assert "ll-loop validate: 4 of 5 validate with no error" in result.stdout


ASK = """\
name: ask
initial: ask
states:
  ask:
    action_type: prompt
    action: "Say done"
    evaluate: {type: output_contains, pattern: "stand-in answer"}
    on_yes: done
    on_no: again
    on_error: again
  again:
    action: "true"
    next: done
  done:
    terminal: true
"""
# little-loops' `ll-loop run NAME` stand-in: the `state_enter` events its run of `fix` and
# `ask` would write (check fails once; ask's answer passes), into its own events file.
FAKE_UPSTREAM_RUN = """\
#!/bin/bash
[ "$1" = validate ] && exit 0
[ "$1" = run ] || exit 1
case "$2" in
  ask) states="ask" ;;
  mine) states="check fix fix" ;;
  odd) states="check" ;;
  *) states="check fix check" ;;
esac
mkdir -p .loops/.running
log=".loops/.running/$2-1.events.jsonl"
for s in $states; do
  echo "{\\"event\\": \\"state_enter\\", \\"state\\": \\"$s\\"}" >> "$log"
done
"""


def test_run_compares_real_runs_with_a_stand_in_claude_answering_the_prompts(
    tree: Path, tmp_path: Path
) -> None:
    (tree / ".loops" / "ask.yaml").write_text(ASK)
    fake = tmp_path / "ll-loop"
    fake.write_text(FAKE_UPSTREAM_RUN)
    fake.chmod(0o755)
    result = measure(
        str(tree), "--run", "--upstream-ll-loop", str(fake), "--only", "ask", "fix", "mine", "odd"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # Our real run of `ask` sent its prompt to the stand-in `claude`, whose answer passed
    # (any other answer, or none, would have gone on to `again`).
    assert "same  ask (1/1 states)" in out
    assert "same  fix (3/3 states)" in out
    assert "DIFF  mine (3/3 states): theirs check > fix > fix; ours check > fix > check" in out
    # Theirs ended by itself after one state where ours went on: not "as far as it went".
    assert "DIFF  odd (1/3 states): theirs check; ours check > fix > check" in out
    assert out.rstrip().endswith("run: 2 of 4 loops valid in both enter the same states: ask, fix")
