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
