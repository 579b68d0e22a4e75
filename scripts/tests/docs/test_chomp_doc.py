"""docs/loop-files.md's example of trailing newlines: the evaluator judges every byte of the
output, `${captured.X.output}` has it without its trailing newlines (as `$(...)` gives it),
a context value keeps them; through the console script and real bash."""

from __future__ import annotations

from pathlib import Path

from support.doc_blocks import all_blocks
from support.llproc import ll_loop

from little_loops.fsm.facts.outcomes import ExitCode


def test_the_docs_example_chomps_the_capture_and_judges_every_byte(tmp_path: Path) -> None:
    (block,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: chomped")]
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "chomped.yaml").write_text(block.text)
    done = ll_loop(tmp_path, "run", "chomped")
    assert done.returncode == ExitCode.OK, done.stderr
    assert (tmp_path / "shown.txt").read_text() == "[3]"  # show ran: the pattern matched
    out = tmp_path / ".loops" / ".running" / "chomped.count.out"
    assert out.read_bytes() == b"3\n\n"  # the output file keeps every byte


def test_a_context_value_keeps_its_trailing_newlines(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "v.yaml").write_text(
        "name: v\ninitial: a\ncontext:\n  v: ''\nstates:\n  a:\n"
        "    action: printf '[%s]' ${context.v} > shown.txt\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    (tmp_path / "values.yaml").write_text('v: "x\\n\\n"\n')
    done = ll_loop(tmp_path, "run", "v", "--context-file", "values.yaml")
    assert done.returncode == ExitCode.OK, done.stderr
    assert (tmp_path / "shown.txt").read_text() == "[x\n\n]"
