"""`library:best-of` with real `ll-loop`, git and three custom agents of different quality
(shell scripts, docs/agents/custom.md): the three attempt the task at once, each in its own
worktree, and the score command, or (separately) the LLM judge against the scripted
Messages API on 127.0.0.1, picks the good one, whose change alone is merged."""

from __future__ import annotations

from pathlib import Path

from support import fanout
from support.fake_anthropic import FakeAnthropic
from support.gitrepo import branches, git, loops_project
from support.llproc import events, ll_loop, state

# The task's project: calc.sh must add, subtract and multiply; check.sh counts what works.
CALC = "#!/bin/bash\ncase $1 in\n  add) echo $(($2 - $3)) ;;\nesac\n"
CHECK = """#!/bin/bash
n=0
[ "$(bash calc.sh add 2 3)" = 5 ] && n=$((n+1))
[ "$(bash calc.sh sub 5 3)" = 2 ] && n=$((n+1))
[ "$(bash calc.sh mul 2 3)" = 6 ] && n=$((n+1))
echo "passing: $n"
"""
GOOD = """cat > calc.sh <<'EOF'
#!/bin/bash
case $1 in
  add) echo $(($2 + $3)) ;;
  sub) echo $(($2 - $3)) ;;
  mul) echo $(($2 * $3)) ;;
esac
EOF
echo "good: fixed add, added sub and mul"
"""
HALF = """sed -i 's/\\$2 - \\$3/$2 + $3/' calc.sh
echo "half: fixed add"
"""
BAD = """echo 'broken' > calc.sh
echo "bad: rewrote calc.sh"
"""
TASK = "Make calc.sh add, subtract and multiply"


def _project(tmp_path: Path) -> Path:
    """A repository with calc.sh, check.sh and three agents: `bad`, `good`, `half`."""
    agents = {"bad": BAD, "good": GOOD, "half": HALF}
    files = {"calc.sh": CALC, "check.sh": CHECK}
    for name, body in agents.items():
        files[f"tools/{name}"] = (
            f'#!/bin/bash\nprintf "%s\\n" "$1" > ../{name}.prompt\n{body}echo "cost: \\$0.01"\n'
        )
    entries = "".join(
        f"  {name}:\n    command: ./tools/{name}\n    cost_pattern: 'cost: \\$([0-9.]+)'\n"
        for name in agents
    )
    files[".loops/agents.yaml"] = f"agents:\n{entries}"
    root = loops_project(tmp_path, files)
    for name in agents:
        (root / "tools" / name).chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable agents")
    return root


def test_best_of_three_agents_the_score_picks_the_good_one_and_merges_it_alone(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    args = (
        "library:best-of",
        TASK,
        "--set",
        "agents=bad,good,half",
        "--set",
        "score=bash check.sh",
    )
    done = ll_loop(root, "run", *args, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    fanout.sample_run("docs/library.md", args, done.stderr, root)  # what it printed
    run = state(root, "best-of")
    assert run["current_state"] == "done"
    assert run["cost_usd"] == 0.03  # the three attempts' spend, each counted
    result = run["captured"]["by_score"]
    starts = {b["index"]: b["key"] for b in result["branches"]}
    assert result["picked"] == [starts[1]]  # good: 3 passing, half: 1, bad: 0
    assert result["merged"] == [starts[1]]
    assert result["reason"] == "score 3"
    assert (root / "calc.sh").read_text().count(") echo") == 3
    assert git(root, "status", "--porcelain") == ""
    # Each agent got the task, in its own worktree; the two others' work is kept in theirs.
    for name in ("bad", "good", "half"):
        assert (root / ".loops" / ".worktrees" / f"{name}.prompt").read_text() == TASK + "\n"
    kept = {b for b in branches(root) if b.startswith("ll/prompt/")}
    assert kept == {f"ll/prompt/{starts[i].split('@')[1]}" for i in (0, 2)}
    assert (root / ".loops" / ".worktrees" / starts[0] / "calc.sh").read_text() == "broken\n"


def test_best_of_three_agents_the_judge_reads_their_diffs_and_its_pick_is_merged(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = _project(tmp_path)
    fake_anthropic.reply_tool({"verdict": "branch_3", "confidence": 0.9, "reason": "complete"})
    done = ll_loop(
        root, "run", "library:best-of", TASK, "--set", "agents=half,bad,good", timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (request,) = fake_anthropic.requests
    asked = request.body["messages"][0]["content"]
    assert asked.startswith("Which attempt does the task best?")
    # Each branch's diff and output, under its own name; the judge may answer only those.
    half, bad, good = (asked.index(f'<branch name="branch_{n}"') for n in (1, 2, 3))
    assert half < asked.index("half: fixed add") < bad < asked.index("+broken") < good
    assert asked.index("+  mul) echo $(($2 * $3)) ;;") > good
    enum = request.body["tools"][0]["input_schema"]["properties"]["verdict"]["enum"]
    assert enum == ["branch_1", "branch_2", "branch_3", "cannot_judge"]
    result = state(root, "best-of")["captured"]["by_judge"]
    good_key = result["branches"][2]["key"]
    assert result["picked"] == [good_key]
    assert result["merged"] == [good_key]
    assert result["reason"] == "complete"
    assert "mul) echo $(($2 * $3))" in (root / "calc.sh").read_text()
    judged = [e for e in events(root, "best-of") if e["event"] == "evaluate"]
    assert judged[-1]["type"] == "fanout"
    assert judged[-1]["cost_usd"] > 0


def test_best_of_when_the_judge_cannot_judge_nothing_is_merged_and_it_ends_undecided(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = _project(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    fake_anthropic.reply_tool({"verdict": "cannot_judge", "confidence": 0.8, "reason": "same"})
    done = ll_loop(root, "run", "library:best-of", TASK, "--set", "agents=good,half", timeout=180)
    assert done.returncode != 0
    run = state(root, "best-of")
    assert run["current_state"] == "undecided"
    result = run["captured"]["by_judge"]
    assert result["verdict"] == "error"
    assert result["merged"] == []
    assert result["reason"] == "the judge could not judge (cannot_judge): same"
    assert git(root, "rev-parse", "HEAD") == head
    # Both attempts are kept on their branches, for a look by hand.
    assert len([b for b in branches(root) if b.startswith("ll/prompt/")]) == 2


def test_best_of_s_dry_run_says_who_picks_and_runs_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = ll_loop(root, "run", "library:best-of", TASK, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "    judge: ${context.question}" in done.stdout
    assert "    score: ${raw:context.score}" in done.stdout
    shown = "as agents, each given the prompt; 8 (the default) at once, join best, merge best"
    assert shown in done.stdout
    assert not (root / ".loops" / ".worktrees").exists()
