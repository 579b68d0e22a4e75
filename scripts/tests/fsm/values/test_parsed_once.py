"""A run parses each of its texts once: a step fills the references in without scanning
the text for them again (issue 42, a lean step). Counted in a fresh `ll-loop run` process
through the reference pattern every scan goes through."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.slowdown import scaled

# Every scan for references (finditer, fullmatch ...) and every scan of a reference's path,
# counted; then `ll-loop run` in this process. Prints the exit code and the two counts.
PROBE = """\
import contextlib, io, sys
from little_loops.fsm.values import references

scans = {"text": 0, "path": 0}

class Counted:
    def __init__(self, pattern, kind):
        self.pattern, self.kind = pattern, kind
    def __getattr__(self, name):
        method = getattr(self.pattern, name)
        def counted(*args, **kwargs):
            scans[self.kind] += 1
            return method(*args, **kwargs)
        return counted

pattern, segment = references.reference_pattern(), references._segment()
references.reference_pattern = lambda: Counted(pattern, "text")
references._segment = lambda: Counted(segment, "path")
from little_loops.cli import main_loop
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main_loop(["run", "tpl", "--quiet"])
print(code, scans["text"], scans["path"])
"""

LOOP = """\
name: tpl
initial: work
max_iterations: {n}
context:
  word: hello
  greeting: "say ${{context.word}}"
  items: [a, b]
states:
  work:
    action: >-
      echo "${{context.greeting}} ${{context.items.1}}
      ${{captured.last.output:default=none}}"
    capture: last
    evaluate:
      type: output_contains
      pattern: "${{context.word}}"
    on_success: $current
    on_failure: $current
  done:
    terminal: true
"""


def scans_of(tmp_path: Path, steps: int) -> tuple[int, int]:
    root = tmp_path / f"p{steps}"
    (root / ".loops").mkdir(parents=True)
    (root / ".loops/tpl.yaml").write_text(LOOP.format(n=steps))
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert done.returncode == 0, done.stderr
    code, text, path = map(int, done.stdout.split())
    assert code == 3, done.stdout  # max_iterations: every step ran
    return text, path


def test_a_run_scans_its_texts_for_references_once_not_at_every_step(tmp_path: Path) -> None:
    few = scans_of(tmp_path, 2)
    many = scans_of(tmp_path, 12)
    # The probe sees the scans (the loop has references), and 10 more steps add none.
    assert few[0] > 0
    assert few[1] > 0
    assert many == few, f"10 more steps scanned again: {few} -> {many}"


def test_a_text_too_long_to_keep_is_filled_in_all_the_same() -> None:
    """A text over the kept size (a context value holding a file) is scanned each time,
    with the same result as a short one."""
    from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

    ctx = InterpolationContext(context={"x": "1", "big": "b" * 70_000 + "${context.x}"})
    long = "a" * 70_000 + "${context.x} $${x}"
    assert interpolate(long, ctx) == "a" * 70_000 + "1 ${x}"
    assert interpolate("${context.big}", ctx) == "b" * 70_000 + "1"
