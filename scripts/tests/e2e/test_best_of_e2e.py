"""`library:best-of` with the real Claude Code and Codex CLIs against scripted vendor APIs on
127.0.0.1: both attempt the task at the same time, each in its own worktree (their shell
tool calls wait for each other, and their runs' events overlap), the LLM judge is shown
both diffs and picks Claude's complete one, which alone is merged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    Route,
    is_claude_code_turn,
    is_claude_judge,
    is_judge,
)
from support.fake_openai import FakeOpenAI
from support.gitrepo import git, loops_project
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

TASK = "Make calc.sh add and subtract"
CALC = "case $1 in\n  add) echo $(($2 - $3)) ;;\nesac\n"
# What each agent's shell tool runs: it says it is here, waits (a bounded time) until the
# other is too, then writes its answer. Run one after the other, neither would finish.
MEET = (
    "touch ../{me}.here; i=0; until [ -e ../{other}.here ]; do"
    " i=$((i+1)); [ $i -lt {tries} ] || exit 1; sleep 0.1; done; {work}"
)
COMPLETE = (
    "printf 'case $1 in\\n  add) echo $(($2 + $3)) ;;\\n  sub) echo $(($2 - $3)) ;;\\nesac\\n'"
    " > calc.sh"
)
PARTIAL = "sed -i 's/$2 - $3/$2 + $3/' calc.sh"


def _meet(me: str, other: str, work: str) -> str:
    return MEET.format(me=me, other=other, tries=int(scaled(900)), work=work)


def _spans(root: Path, keys: list[str]) -> list[tuple[str, str]]:
    spans = []
    for key in keys:
        path = root / ".loops" / ".running" / f"{key}.events.jsonl"
        stamps = [json.loads(line)["ts"] for line in path.read_text().splitlines()]
        spans.append((min(stamps), max(stamps)))
    return spans


def _script(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI, pick: str, via_claude: bool = False
) -> tuple[Route, Route]:
    """Claude Code writes the complete change, Codex the partial one, each once the other is
    there too; the judge (the API, or *via_claude* Claude Code's `--json-schema` answer)
    picks *pick*. The routes of Claude Code's turns and the judge."""
    judge = fake_anthropic.route("judge", is_claude_judge if via_claude else is_judge)
    answer = {"verdict": pick, "confidence": 0.9, "reason": "adds sub too"}
    judge.reply_tool(answer, name=STRUCTURED_OUTPUT_TOOL if via_claude else "evaluate")
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_tool(
        {"command": _meet("claude", "codex", COMPLETE), "description": "fix"},
        name="Bash",
        text="Fixing calc.sh.",
    )
    agent.reply_text("calc.sh adds and subtracts now.")
    fake_openai.reply_shell(_meet("codex", "claude", PARTIAL))
    fake_openai.reply_text("Fixed add.")
    return agent, judge


def test_best_of_claude_and_codex_at_once_the_judge_s_pick_is_merged(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    root = loops_project(tmp_path, {"calc.sh": CALC})
    # Codex with a model named, so its spend can be counted (best-of has a budget).
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.write_text('model = "gpt-5-codex"\n' + config.read_text())
    agent, judge = _script(fake_anthropic, fake_openai, "branch_1")

    done = llproc.console(root, "run", "library:best-of", TASK, timeout=300)

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    run = llproc.state(root, "best-of")
    assert run["current_state"] == "done"
    result = run["captured"]["by_judge"]
    claude, codex = result["branches"]
    assert (claude["item"], codex["item"]) == ("claude prompt", "codex prompt")
    assert (claude["verdict"], codex["verdict"]) == ("success", "success")
    # Both ran at once: each one's run began before the other's ended.
    (first, first_end), (second, second_end) = _spans(root, [claude["key"], codex["key"]])
    assert first < second_end
    assert second < first_end
    # Each was given the task, by its own CLI.
    assert fake_openai.requests[0].user_texts[-1] == TASK
    assert any(TASK in json.dumps(r.body) for r in agent.requests)
    # The judge saw both diffs, each under its branch's name, and picked Claude's.
    (asked,) = [r.body["messages"][0]["content"] for r in judge.requests]
    one, two = asked.index('name="branch_1"'), asked.index('name="branch_2"')
    assert one < asked.index("+  sub) echo $(($2 - $3)) ;;") < two
    assert asked.index("+  add) echo $(($2 + $3)) ;;", two) > two  # Codex's diff too
    assert result["picked"] == [claude["key"]]
    assert result["merged"] == [claude["key"]]
    assert "sub) echo $(($2 - $3))" in (root / "calc.sh").read_text()
    assert git(root, "status", "--porcelain") == ""
    # Codex's attempt is kept in its worktree, for a look by hand.
    kept = root / ".loops" / ".worktrees" / codex["key"] / "calc.sh"
    assert kept.read_text() == "case $1 in\n  add) echo $(($2 + $3)) ;;\nesac\n"
    # The spend of both sessions and the judge's call is the run's.
    assert run["cost_usd"] > claude["cost_usd"] + codex["cost_usd"] > 0


@pytest.mark.parametrize("backend", ["api", "claude"])
def test_the_docs_side_by_side_example_runs_both_and_merges_the_judge_s_pick(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    backend: str,
) -> None:
    (block,) = [b for b in all_blocks() if b.starts("docs/loop-files.md", "name: side-by-side")]
    text = block.text.replace("initial: try\n", f"initial: try\nllm: {{backend: {backend}}}\n")
    root = loops_project(tmp_path, {"calc.sh": CALC, ".loops/side-by-side.yaml": text})
    _, judge = _script(fake_anthropic, fake_openai, "branch_2", via_claude=backend == "claude")

    done = llproc.console(root, "run", "side-by-side", timeout=300)

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    result = llproc.state(root, "side-by-side")["captured"]["try"]
    claude, codex = result["branches"]
    assert result["picked"] == [codex["key"]]
    assert result["merged"] == [codex["key"]]
    (request,) = judge.requests
    assert "Which change makes calc.sh add and subtract correctly" in request.all_user_text
    assert '<branch name="branch_2"' in request.all_user_text
    run = llproc.state(root, "side-by-side")
    assert run["cost_usd"] > claude["cost_usd"] + codex["cost_usd"]  # the judge's call too
    assert (root / "calc.sh").read_text() == "case $1 in\n  add) echo $(($2 + $3)) ;;\nesac\n"
    (first, first_end), (second, second_end) = _spans(root, [claude["key"], codex["key"]])
    assert first < second_end
    assert second < first_end
