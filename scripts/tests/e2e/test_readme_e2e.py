"""The README's example loop, run as a user would: `ll-loop run fix-types` with real mypy and
the real Claude Code CLI against the scripted Messages API.

With the slash command the example used to call (it ships nowhere) the run ends in `stuck`
and exits non-zero saying why; with the README's plain prompt the scripted model fixes the
planted type error through Claude Code's Bash tool and the run exits 0."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn, is_judge

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

# The README's example as it was before issue 32, word for word.
README_AS_IT_WAS = """\
name: fix-types
initial: check
states:
  check:
    action: mypy src/
    on_success: done
    on_failure: fix
  fix:
    action: /ll:manage_issue bug fix      # a leading / goes to Claude Code
    route:                                # judged by the LLM evaluator by default
      success: check
      _: check                            # failure, blocked or partial
      _error: stuck                       # Claude could not run
  done:
    terminal: true
  stuck:
    terminal: true
max_iterations: 10
max_cost_usd: 5
"""
# The planted bug: mypy says `Missing return statement`; the fix is `return`, not `print`.
BUGGY = "def double(n: int) -> int:\n    result = n * 2\n    print(result)\n"
FIX = "sed -i 's/print(result)/return result/' src/app.py"
PROMPT = "Run mypy src/ and fix the type errors it reports"


def _readme_example() -> str:
    (found,) = [b for b in all_blocks() if b.starts("README.md", "# yaml-language-server")]
    return found.text


def _project(tmp_path: Path, loop: str) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(BUGGY)
    (root / ".loops").mkdir()
    (root / ".loops" / "fix-types.yaml").write_text(loop)
    return root


def _run(root: Path) -> tuple[int, list[str]]:
    bin_dir = Path(sys.executable).parent  # the test venv's mypy
    env = {**os.environ, "PATH": f"{os.environ['PATH']}{os.pathsep}{bin_dir}"}
    done = llproc.ll_loop(root, "run", "fix-types", "--no-color", timeout=300, env=env)
    return done.returncode, done.stderr.splitlines()


def test_the_old_example_fails_loudly_naming_the_unknown_command(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    judge = fake_anthropic.route("judge", is_judge)
    root = _project(tmp_path, README_AS_IT_WAS)

    code, lines = _run(root)

    # It used to exit 0 with `Loop completed: stuck`.
    assert code == ExitCode.TERMINAL_FAILURE, "\n".join(lines)
    hint = (
        "claude does not know the slash command /ll:manage_issue (is there a"
        " .claude/commands file for it in the loop's project?)"
    )
    assert any(line.startswith(f"       ✗ error ({hint})  ") for line in lines), lines
    assert lines[-1].startswith(
        f"Loop ended in stuck, a failure: reached from state 'fix' on the verdict error: {hint}"
        " (1 iteration, "
    )
    assert (agent.requests, judge.requests) == ([], [])  # Claude Code answered it itself
    assert (root / "src" / "app.py").read_text() == BUGGY


def test_the_readme_example_fixes_the_bug_through_claude_codes_bash_tool(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    judge = fake_anthropic.route("judge", is_judge)
    agent.reply_tool({"command": FIX, "description": "return the result"}, name="Bash")
    agent.reply_text("double() returned nothing; it returns its result now.")
    judge.reply_tool({"verdict": "success", "confidence": 0.92, "reason": "fixed"})
    root = _project(tmp_path, _readme_example())

    code, lines = _run(root)

    assert code == ExitCode.OK, "\n".join(lines)
    assert (root / "src" / "app.py").read_text() == BUGGY.replace("print(result)", "return result")
    assert lines[0] == "[1/10] check → mypy src/"
    assert lines[1].startswith("       ✗ failure (exit 1)  ")
    assert any("error: Missing return statement" in line for line in lines[2:4])
    assert f"[1/10] fix → {PROMPT}" in lines
    assert any(line.startswith("       ✓ success (confidence: 0.92)  ") for line in lines)
    assert "[2/10] check → mypy src/" in lines
    assert lines[-1].startswith("Loop completed: done (2 iterations, ")
    first, after_bash = agent.requests
    assert first.user_text.endswith(PROMPT)  # a plain prompt: no slash command needed
    # Claude Code ran the model's Bash call itself and sent its result back.
    assert len(after_bash.tool_results) == 1
    (verdict_call,) = judge.requests
    assert "returns its result now" in verdict_call.user_text
