"""`library:fix-each` with real `ll-loop`, git and bash on a repository with three failing
tests: each is fixed by library:fix-tests in its own worktree (a custom agent that fixes
what it can), the two that went green are merged, the one it cannot fix is not."""

from __future__ import annotations

from pathlib import Path

from support import fanout
from support.gitrepo import branches, git, loops_project
from support.llproc import ll_loop, state

# The project: lib/NAME.sh is what tests/NAME.sh checks; `run-tests` runs the tests given,
# or every test, saying `FAILED tests/NAME.sh` for each that fails (with --failed, only the
# failing tests' names).
RUN_TESTS = """#!/bin/bash
status=0
tests=("$@")
[ "$1" = --failed ] && tests=()
[ ${#tests[@]} -gt 0 ] || tests=(tests/*.sh)
for t in "${tests[@]}"; do
  if bash "$t"; then said="passed $t"; else said="FAILED $t"; status=1; fi
  [ "$1" = --failed ] || echo "$said"
  [ "$1" != --failed ] || [ "$status" = 0 ] || [ "${said#FAILED }" = "$said" ] || echo "$t"
done
exit $status
"""
LIBS = {"add": "echo $(($1 - $2))", "mul": "echo $(($1 + $2))", "neg": "echo $1", "one": "echo 1"}
TESTS = {
    "add": '[ "$(bash lib/add.sh 2 3)" = 5 ]',
    "mul": '[ "$(bash lib/mul.sh 2 3)" = 6 ]',
    "neg": '[ "$(bash lib/neg.sh 4)" = -4 ]',
    "one": '[ "$(bash lib/one.sh)" = 1 ]',
}
# A custom agent that fixes add and mul (each in its own file) and cannot fix neg.
FIXER = """#!/bin/bash
printf '%s\\n' "$1" >> ../fixer.prompts
case "$1" in
  *tests/add.sh*) echo 'echo $(($1 + $2))' > lib/add.sh ;;
  *tests/mul.sh*) echo 'echo $(($1 * $2))' > lib/mul.sh ;;
esac
echo 'cost: $0.01'
"""


def _project(tmp_path: Path) -> Path:
    files = {"run-tests": RUN_TESTS, "tools/fixer": FIXER}
    files.update({f"lib/{name}.sh": f"{body}\n" for name, body in LIBS.items()})
    files.update({f"tests/{name}.sh": f"{body}\n" for name, body in TESTS.items()})
    files[".loops/agents.yaml"] = (
        "agents:\n  fixer:\n    command: ./tools/fixer\n    cost_pattern: 'cost: \\$([0-9.]+)'\n"
    )
    root = loops_project(tmp_path, files)
    (root / "run-tests").chmod(0o755)
    (root / "tools" / "fixer").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable")
    return root


def test_fix_each_fixes_every_failing_test_in_its_own_worktree_and_merges_the_green_ones(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    args = (
        "library:fix-each",
        "--set",
        "agent=fixer",
        "--set",
        "test_command=./run-tests",
        "--set",
        "list_command=./run-tests --failed",
    )
    done = ll_loop(root, "run", *args, timeout=300)
    assert done.returncode == 7, done.stdout + done.stderr  # neg could not be fixed: failed
    fanout.sample_run("docs/library.md", args, done.stderr, root)  # what it printed
    run = state(root, "fix-each")
    assert run["current_state"] == "failed"
    result = run["captured"]["fix"]
    by_item = {b["item"]: b for b in result["branches"]}
    assert sorted(by_item) == [f"./run-tests tests/{n}.sh" for n in ("add", "mul", "neg")]
    verdicts = {item: b["verdict"] for item, b in by_item.items()}
    assert verdicts == {
        "./run-tests tests/add.sh": "success",
        "./run-tests tests/mul.sh": "success",
        "./run-tests tests/neg.sh": "failure",
    }
    assert sorted(result["merged"]) == sorted(
        by_item[f"./run-tests tests/{n}.sh"]["key"] for n in ("add", "mul")
    )
    # Merged: the two fixes; the project's tests now fail only on neg.
    assert (root / "lib" / "add.sh").read_text() == "echo $(($1 + $2))\n"
    assert (root / "lib" / "mul.sh").read_text() == "echo $(($1 * $2))\n"
    assert (root / "lib" / "neg.sh").read_text() == "echo $1\n"
    assert git(root, "status", "--porcelain") == ""
    # Each child was library:fix-tests on its own branch; the agent was told its one test.
    assert all(b["loop"] == "fix-tests" for b in by_item.values())
    prompts = (root / ".loops" / ".worktrees" / "fixer.prompts").read_text()
    assert "`./run-tests tests/add.sh`" in prompts
    assert "tests/one.sh" not in prompts  # the passing test was never given out
    neg = by_item["./run-tests tests/neg.sh"]
    assert neg["outcome"] == "stall"  # the same failure three times: stopped, not merged
    assert neg["branch"] not in branches(root)  # it changed nothing: nothing kept
    said = (root / ".loops" / ".running" / "fix-each.partly.out").read_text()
    assert said.startswith("fixed and merged: ")


def test_fix_each_given_its_tests_fixes_those_and_a_list_command_that_fails_ends_it(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    given = ("--set", "agent=fixer", "--set", "test_command=./run-tests")
    done = ll_loop(
        root, "run", "library:fix-each", *given, "--set", "tests=tests/add.sh tests/one.sh"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    items = [b["item"] for b in state(root, "fix-each")["captured"]["fix"]["branches"]]
    assert items == ["./run-tests tests/add.sh", "./run-tests tests/one.sh"]
    assert (root / "lib" / "add.sh").read_text() == "echo $(($1 + $2))\n"
    # A list command that cannot run is a failed run, not "every test fixed".
    done = ll_loop(root, "run", "library:fix-each", *given, "--set", "list_command=no-such-lister")
    assert done.returncode == 7, done.stdout + done.stderr
    assert "the list command failed (exit 127)" in done.stderr
    assert state(root, "fix-each")["current_state"] == "failed"
