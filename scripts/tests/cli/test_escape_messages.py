"""A `$${...}` that gives bash a `${...}` it cannot expand is named for what it is, through
the console script and real bash (it used to be reported as a problem of the action's other
references: bash stops on it with "bad substitution")."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from support.llproc import ll_loop

from little_loops.fsm.facts.outcomes import ExitCode

LOOP = """\
    name: lit
    initial: a
    context:
      v: x
    states:
      a:
        action: |
          ACTION
        next: done
      done:
        terminal: true
"""
NAMED = (
    "$${not.ours}: gives bash ${not.ours}, which bash cannot expand (it stops with "
    "'bad substitution'); in single quotes ('$${not.ours}') bash prints it as written"
)


def _loop(tmp_path: Path, action: str) -> Path:
    (tmp_path / ".loops").mkdir(parents=True, exist_ok=True)
    text = textwrap.dedent(LOOP).replace("ACTION", action)
    (tmp_path / ".loops" / "lit.yaml").write_text(text)
    return tmp_path


def test_an_unexpandable_escape_in_double_quotes_is_named_not_the_references(
    tmp_path: Path,
) -> None:
    root = _loop(tmp_path, 'echo "$${not.ours}" ${context.v} > out.txt')
    done = ll_loop(root, "validate", "lit")
    assert done.returncode == ExitCode.USAGE, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert NAMED in said
    assert "${context.v}" not in said  # the reference is not what is wrong
    # What the message says bash does, bash does.
    bash = subprocess.run(["bash", "-c", 'echo "${not.ours}"'], capture_output=True, text=True)
    assert bash.returncode != 0
    assert "bad substitution" in bash.stderr


def test_the_fix_the_message_gives_runs(tmp_path: Path) -> None:
    root = _loop(tmp_path, "echo '$${not.ours}' ${context.v} > out.txt")
    done = ll_loop(root, "run", "lit")
    assert done.returncode == ExitCode.OK, done.stderr
    assert (root / "out.txt").read_text() == "${not.ours} x\n"


def test_an_escape_alone_is_a_warning_and_a_good_one_is_nothing(tmp_path: Path) -> None:
    root = _loop(tmp_path, 'echo "$${not.ours}"')
    done = ll_loop(root, "validate", "lit")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert f"warning: loop 'lit' > states > a > action: {NAMED}" in done.stdout + done.stderr
    root = _loop(tmp_path / "good", """echo "$${HOME:-x} $${#PATH}" '$${a.b}'""")
    done = ll_loop(root, "validate", "lit")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "warning" not in done.stdout + done.stderr
