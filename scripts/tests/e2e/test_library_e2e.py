"""Every library loop that calls Claude, run end to end with `ll-loop run library:NAME`: real
pytest, ruff, mypy, coverage.py and git; the real Claude Code CLI, whose scripted model edits
the files through Claude Code's own tools; each test checks the loop's real outcome."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.doc_blocks import all_blocks, normalise
from support.fake_anthropic import FakeAnthropic, Route, is_claude_code_turn
from support.fake_github import Check, FakeGitHub
from support.gitrepo import GIT_ENV
from support.programs import needs_gh

from little_loops.fsm.definition.reading.loader import load_file
from little_loops.fsm.paradigms.registry import compile_paradigm
from little_loops.loops import library_loop_path, library_loops

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

BIN = Path(sys.executable).parent  # pytest, ruff, mypy and coverage of the test venv
TESTED = {
    "fix-tests",
    "lint-fix",
    "type-fix",
    "coverage-up",
    "ralph",
    "review-and-fix",
    "fix-ci",
}


def _env() -> dict[str, str]:
    # The loops' own tools run as on a developer's machine: pytest prints longer summaries
    # when it sees CI (or BUILD_NUMBER) set, which would change the documented samples.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    return {**env, "PATH": f"{os.environ['PATH']}{os.pathsep}{BIN}"}


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.ll_loop(root, "run", *args, "--no-color", timeout=300, env=_env())


def _as_documented(result: subprocess.CompletedProcess[str], *args: str) -> None:
    """The run's output is the sample docs/library.md shows for `ll-loop run ARGS`."""
    command = "$ ll-loop run " + " ".join(shlex.quote(arg) for arg in args)
    (block,) = [b for b in all_blocks() if b.starts("docs/library.md", command + "\n")]
    shown = block.text.split("\n", 1)[1]

    def same(text: str) -> str:
        return normalise(re.sub(r"\$\d+\.\d+", "$<COST>", text))

    assert same(shown) == same(result.stderr)


def _ok(root: Path, command: str) -> bool:
    done = subprocess.run(command, shell=True, cwd=root, env=_env(), capture_output=True)
    return done.returncode == 0


def _routes(root: Path, name: str) -> list[tuple[str, str]]:
    history = llproc.ll_loop(root, "history", name, "--json", env=_env())
    return [(e["from"], e["to"]) for e in json.loads(history.stdout) if e["event"] == "route"]


def _agent(fake: FakeAnthropic) -> Route:
    return fake.route("agent", is_claude_code_turn)


def _edit(agent: Route, path: Path, old: str, new: str) -> None:
    """Script Claude Code's Read of *path* (its Edit tool refuses a file not read first),
    then an Edit of it."""
    agent.reply_tool({"file_path": str(path)}, name="Read")
    agent.reply_tool({"file_path": str(path), "old_string": old, "new_string": new}, name="Edit")


def _prompts(agent: Route) -> list[Any]:
    """The first request of each Claude session (the others carry tool results)."""
    return [request for request in agent.requests if not request.tool_results]


def test_every_library_loop_that_calls_claude_is_run_here() -> None:
    calls_claude = set()
    for name in library_loops():
        fsm = compile_paradigm(load_file(library_loop_path(name)).data)
        if any(state.is_prompt() for state in fsm.states.values()):
            calls_claude.add(name)
    assert calls_claude == TESTED


def test_fix_tests(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "test_calc.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
            ),
        },
    )
    agent = _agent(fake_anthropic)
    _edit(agent, root / "calc.py", "a - b", "a + b")
    agent.reply_text("add() subtracted; it adds now.")

    result = _run(root, "library:fix-tests", "python -m pytest -q")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:fix-tests", "python -m pytest -q")
    assert _ok(root, "python -m pytest -q")
    (prompt,) = _prompts(agent)
    assert "assert -1 == 5" in prompt.user_text  # the failing output reached Claude
    assert _routes(root, "fix-tests") == [("test", "fix"), ("fix", "test"), ("test", "done")]
    # The report shows Claude Code's tool calls as `ll-loop logs` does.
    logs = llproc.ll_loop(root, "logs", "fix-tests", "fix", env=_env())
    calls = [line for line in logs.stdout.splitlines() if line.startswith(("→ ", "← "))]
    assert [line.split(" ")[1] for line in calls if line.startswith("→ ")] == ["Read", "Edit"]
    page = tmp_path / "report.html"
    report = llproc.ll_loop(root, "report", "fix-tests", "--html", str(page), env=_env())
    assert report.returncode == 0, report.stderr
    shown = page.read_text()
    assert f'<pre class="tools">{html.escape(chr(10).join(calls))}</pre>' in shown
    assert '<span class="v ok">claude: success</span>' in shown


def test_lint_fix(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    source = "import os\nimport sys\n\n\ndef one():\n    return 1\n"
    root = _project(tmp_path, {"app.py": source})
    assert not _ok(root, "ruff check .")
    agent = _agent(fake_anthropic)
    _edit(agent, root / "app.py", "import os\nimport sys\n\n\n", "")
    agent.reply_text("Removed the two unused imports.")

    result = _run(root, "library:lint-fix")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:lint-fix")
    assert _ok(root, "ruff check .")
    (prompt,) = _prompts(agent)
    assert "reports 2 problem(s)" in prompt.user_text
    assert _routes(root, "lint-fix") == [
        ("measure", "fix"),
        ("fix", "measure"),
        ("measure", "done"),
    ]


def test_lint_fix_stops_when_a_pass_changes_nothing(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    root = _project(tmp_path, {"app.py": "import os\n"})
    _agent(fake_anthropic).reply_text("I could not decide what to change.")

    result = _run(root, "library:lint-fix")

    assert result.returncode == 7, result.stderr  # `stalled` ends in failure (outcome: failure)
    assert _routes(root, "lint-fix")[-1] == ("measure", "stalled")


def test_type_fix(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = _project(tmp_path, {"shapes.py": "def label(n: int) -> str:\n    return n\n"})
    assert not _ok(root, "mypy .")
    agent = _agent(fake_anthropic)
    _edit(agent, root / "shapes.py", "return n", "return str(n)")
    agent.reply_text("label() returns a str now.")

    result = _run(root, "library:type-fix")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:type-fix")
    assert _ok(root, "mypy .")
    assert _routes(root, "type-fix")[-1] == ("measure", "done")


def test_coverage_up(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "sign.py": "def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n"
            "        return -1\n    return 0\n",
            "test_sign.py": "from sign import sign\n\n\ndef test_positive():\n"
            "    assert sign(5) == 1\n",
        },
    )
    more = (
        "from sign import sign\n\n\ndef test_negative():\n    assert sign(-2) == -1\n\n\n"
        "def test_zero():\n    assert sign(0) == 0\n"
    )
    agent = _agent(fake_anthropic)
    agent.reply_tool({"file_path": str(root / "test_sign_more.py"), "content": more}, name="Write")
    agent.reply_text("Added tests for negative numbers and zero.")

    result = _run(root, "library:coverage-up", "100")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:coverage-up", "100")
    total = subprocess.run(
        "coverage report --format=total",
        shell=True,
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert total.stdout.strip() == "100"
    (prompt,) = _prompts(agent)
    assert "the target is 100" in prompt.user_text


def test_ralph(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = _project(tmp_path, {"PROMPT.md": "Write hello.txt saying hello.\n"})
    agent = _agent(fake_anthropic)
    agent.reply_tool({"file_path": str(root / "hello.txt"), "content": "hello\n"}, name="Write")
    agent.reply_text("Wrote hello.txt.\n<promise>DONE</promise>")

    result = _run(root, "library:ralph")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:ralph")
    assert (root / "hello.txt").read_text() == "hello\n"
    (prompt,) = _prompts(agent)
    assert "Write hello.txt saying hello.\n\nYou are working in a loop" in prompt.user_text


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_review_and_fix(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "even.py": "def is_even(n):\n    return n % 2 == 0\n",
            "test_even.py": "from even import is_even\n\n\ndef test_even():\n"
            "    assert is_even(2)\n    assert not is_even(3)\n",
        },
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    _git(root, "checkout", "-qb", "feature")
    (root / "even.py").write_text("def is_even(n):\n    return n % 2 == 1\n")  # the bug
    agent = _agent(fake_anthropic)
    agent.reply_text("PROBLEM: even.py:2: is_even returns True for odd numbers")
    _edit(agent, root / "even.py", "n % 2 == 1", "n % 2 == 0")
    agent.reply_text("Fixed is_even.")

    result = _run(root, "library:review-and-fix", "main", "python -m pytest -q")

    assert result.returncode == 0, result.stderr
    _as_documented(result, "library:review-and-fix", "main", "python -m pytest -q")
    assert (root / "even.py").read_text() == "def is_even(n):\n    return n % 2 == 0\n"
    review, fix = _prompts(agent)
    assert "-    return n % 2 == 0" in review.user_text  # the diff against main
    assert set(review.tool_names) == {"Read", "Grep", "Glob"}  # read-only
    assert "Edit" in fix.tool_names
    assert "is_even returns True for odd numbers" in fix.user_text
    assert _routes(root, "review-and-fix") == [
        ("diff", "review"),
        ("review", "fix"),
        ("fix", "test"),
        ("test", "done"),
    ]


@needs_gh
def test_fix_ci(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    """The real Claude Code fixes what the failing check's log names; the fix is pushed and
    merged once its checks are green (real git and gh against the GitHub stand-in)."""
    failed_log = "test_calc.py::test_add FAILED"
    with FakeGitHub(tmp_path / "remote.git") as forge:
        root = forge.checkout(tmp_path / "work")
        (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        for args in (["add", "calc.py"], ["commit", "-qm", "add()"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, env={**_env(), **GIT_ENV})
        forge.script_checks(
            "fix", [[Check("test", "failed", log=failed_log)]], [[Check("test", "passed")]]
        )
        agent = _agent(fake_anthropic)
        _edit(agent, root / "calc.py", "a - b", "a + b")
        agent.reply_text("add() subtracted; it adds now.")
        # gh reaches the stand-in through its HTTP_PROXY; Claude Code its API directly.
        env = {**_env(), **GIT_ENV, **forge.env(tmp_path / "gh-config"), "NO_PROXY": "127.0.0.1"}

        run = llproc.ll_loop(
            root,
            "run",
            "library:fix-ci",
            "--set",
            "title=Fix add",
            "--no-color",
            timeout=300,
            env=env,
        )

        assert run.returncode == 0, run.stderr
        (prompt,) = _prompts(agent)
        assert "checks failed: test" in json.dumps(prompt.body)
        assert failed_log in json.dumps(prompt.body)
        assert forge.prs[1].state == "MERGED"
        (merge,) = forge.merges()
        assert merge.checks_then == (("test", "passed"),)
        pushed = subprocess.run(
            ["git", "--git-dir", str(tmp_path / "remote.git"), "show", "fix:calc.py"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "return a + b" in pushed.stdout
