"""How each doc output sample is checked; blocks are named by (doc, the start of their text)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypeVar

from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.runs.state import LoopState
from support.doc_blocks import Block

T = TypeVar("T")
Key = tuple[str, str]

HELLO = """\
name: hello
initial: check
states:
  check:
    action: test -f flag && echo present || { echo missing; exit 1; }
    on_success: done
    on_failure: fix
  fix:
    action: touch flag && echo fixed
    next: check
  done:
    terminal: true
max_iterations: 5
"""


# The state file of a run of hello that crashed at `check`: `list --running` lists it.
CRASHED = json.dumps(
    LoopState("hello", "check", status=Status.RUNNING, pid=2**22 + 1).to_dict()  # never alive
)


def sample_loop(name: str, typo: bool = False) -> str:
    """A loop with `on_sucess` on line 9 (typo) or else an unreachable state on line 14."""
    return f"""\
# yaml-language-server: $schema=../scripts/little_loops/fsm/fsm-loop-schema.json
name: {name}
initial: check
max_iterations: 10
states:
  check:
    action: mypy src/
    on_failure: fix
    {"on_sucess" if typo else "on_success"}: done
  fix:
    action: /ll:manage_issue bug fix
    next: check
  done: {{terminal: true}}
  spare:
    action: echo never
    next: done
"""


TYPO = sample_loop("fix-types", typo=True)
BROKEN = "name: broken\ninitial: check\nstates:\n  check:\n    next: done\n    action: echo: b\n"
PLAN = """\
name: plan
initial: make
context:
  target: out.txt
scope: [src]
backoff: 2
max_iterations: 4
llm:
  enabled: false
states:
  make:
    action: touch ${context.target}
    capture: made
    on_success: review
    on_failure: make
  review:
    action: /review the change
    route:
      success: done
      _: make
  done:
    terminal: true
"""


@dataclass(frozen=True)
class Run:
    """An `ll-loop` call whose output a sample shows (argv empty: the session's own line)."""

    argv: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    stream: str = "out"
    code: int = 0
    lines: tuple[int | None, int | None] = (None, None)  # the sample's lines compared
    printed: tuple[int | None, int | None] | None = None  # the call's (default: the same)
    bare: bool = False  # a project with no other loops
    before: tuple[str, ...] = ()  # an ll-loop call to make first
    times: int = 1  # how many times to make it
    cwd: str = "."


SPIN = """\
name: spin
initial: check
stall: {same_result: 3}
states:
  check:
    action: echo same
    evaluate: {type: output_contains, pattern: never}
    on_success: done
    on_failure: check
  done: {terminal: true}
"""
GATE = """\
name: gate
initial: gate
states:
  gate: {action_type: approval, action: Ship it?, on_success: done, on_failure: done}
  done: {terminal: true}
"""
CONVERGENCE = "paradigm: convergence\nname: c\ncheck: echo 1\nusing: echo\n"
INVARIANTS = """\
paradigm: invariants
name: i
constraints:
  - {name: a, check: "true", fix: "true"}
  - {name: b, check: "true", fix: [x]}
"""
UNKNOWN = "paradigm: convergance\nname: u\n"
# Fails until the third pass: check, fix, check, fix, check.
FIX = """\
name: fix
initial: check
states:
  check:
    action: 'n=$(cat n 2>/dev/null || echo 0); echo "check $n"; [ "$n" -ge 2 ]'
    on_success: done
    on_failure: fix
  fix:
    action: 'sleep 0.15; echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n'
    next: check
  done:
    terminal: true
"""
FIX_ISSUE = {".loops/fix-issue.yaml": "@docs/guide.md|name: fix-issue"}
RELEASE = {  # a parent running a sub-loop twice; NOTES.md is there, VERSION is not
    ".loops/gate.yaml": "@docs/guide.md|name: gate",
    ".loops/release.yaml": "@docs/guide.md|name: release",
    "NOTES.md": "notes\n",
}

# Samples compared, volatile parts normalised, to what the call prints in a project holding
# this repository's .loops/ and scripts/tests/data/doc_loops/.
# A loop in little-loops' spelling (docs/cli.md migrate, docs/little-loops.md, test_migrate.py).
LINT_THEIRS = """\
# lint until clean
name: lint
initial: check
max_iterations: 4
states:
  check:
    action: "test -f clean"  # the check
    on_yes: done
    on_no: fix
    on_error: error
  fix:
    action: "touch clean"
    route:
      yes: check
      "no": failed
  failed:
    terminal: true
    failure: true
  error:
    terminal: true
  done:
    terminal: true
"""

COMPARED: dict[Key, Run | tuple[Run, ...]] = {
    ("docs/cli.md", ".loops/lint.yaml:8: on_yes"): Run(
        ("migrate", "lint"), {".loops/lint.yaml": LINT_THEIRS}
    ),
    ("docs/little-loops.md", "--- a/.loops/lint.yaml"): Run(
        ("migrate", "lint", "--diff"), {".loops/lint.yaml": LINT_THEIRS}
    ),
    ("docs/cli.md", "[1/5] check → test -f flag"): Run(
        ("run", "hello", "--no-color"), {".loops/hello.yaml": HELLO}, stream="err"
    ),
    ("docs/guide.md", "[1/5] check → test -f greeting.txt"): Run(
        ("run", "tutorial", "--no-color"),
        {".loops/tutorial.yaml": "@docs/guide.md|name: tutorial"},
        "err",
    ),
    ("docs/guide.md", "$ ll-loop fix-issue 123 -v"): Run(files=FIX_ISSUE, stream="err"),
    ("docs/guide.md", "$ ll-loop release"): Run(files=RELEASE, stream="err", code=7),
    ("docs/guide.md", "ll-loop: error: loop 'fix-issue': missing"): (
        Run(("fix-issue",), FIX_ISSUE, "err", 2, (0, 1)),
        Run(("fix-issue", "12a"), FIX_ISSUE, "err", 2, (1, 2), (0, 1)),
    ),
    ("docs/guide.md", "parameters of fix-issue"): Run(
        ("fix-issue", "--help"), FIX_ISSUE, printed=(-5, None)
    ),
    ("docs/loop-files.md", "ll-loop: error: loop 'release'"): Run(
        ("release", "2.1.0", "--set", "targets=pip"),
        {".loops/release.yaml": "@docs/loop-files.md|name: release"},
        "err",
        2,
    ),
    ("docs/loop-files.md", "parameters:\n  version = "): Run(
        ("run", "release", "--dry-run", "2.1.0", "--set", "targets=pypi,docs"),
        {".loops/release.yaml": "@docs/loop-files.md|name: release"},
        lines=(None, None),
        printed=(6, 14),
    ),
    ("docs/cli.md", "ll-loop: using "): Run(("list",), stream="err", cwd="sub"),
    ("docs/cli.md", "NAME       PARADIGM"): Run(("list",), lines=(0, 1)),
    ("docs/cli.md", "LOOP       STATUS"): Run(
        ("list", "--running"),
        {".loops/hello.yaml": HELLO, ".loops/.running/hello.state.json": CRASHED},
        lines=(0, 1),
    ),
    ("docs/cli.md", "2026-01-15T10:30:00.001+00:00 loop_start"): Run(
        ("history", "hello"), {".loops/hello.yaml": HELLO}, before=("run", "hello"), lines=(0, 6)
    ),
    ("docs/cli.md", "==> .loops/.running/typo.fix.out"): Run(
        ("logs", "typo"),
        {
            ".loops/typo.yaml": "name: typo\ninitial: fix\nstates:\n  fix:\n"
            "    action: echo building; Fix\n    next: done\n  done:\n    terminal: true\n"
        },
        before=("run", "typo"),
    ),
    ("docs/cli.md", "RUN                STARTED"): Run(
        ("runs", "hello"), {".loops/hello.yaml": HELLO}, before=("run", "hello"), times=2
    ),
    ("docs/cli.md", "loop fix · run"): Run(
        ("report", "fix"), {".loops/fix.yaml": FIX}, before=("run", "fix")
    ),
    ("docs/cli.md", "ll-loop: error: junk.tar.gz"): Run(
        ("report", "--from", "junk.tar.gz"), {"junk.tar.gz": "\0" * 10240}, "err", code=1
    ),
    ("docs/cli.md", "ll-loop: error: loop 'x' has no saved run"): Run(
        ("resume", "x"), {".loops/x.yaml": HELLO.replace("hello", "x")}, "err", 1, (0, 1)
    ),
    ("docs/cli.md", "ll-loop: loop 'slow' is not running"): Run(
        ("stop", "slow"),
        {".loops/slow.yaml": HELLO.replace("hello", "slow")},
        "err",
        1,
        (2, 3),
        (0, 1),
    ),
    ("docs/cli.md", "ll-loop: error: .loops/ is set up already"): Run(
        ("init",), stream="err", code=1, bare=True, before=("init",)
    ),
    ("docs/cli.md", "ll-loop: error: .loops/hello.yaml exists already"): Run(
        ("new", "hello", "--from", "hello"), {".loops/hello.yaml": HELLO}, "err", 1
    ),
    ("docs/cli.md", "ll-loop: error: .loops/.running/ok.state.json"): Run(
        ("status", "ok"),
        {
            ".loops/ok.yaml": HELLO.replace("hello", "ok"),
            # Cut short: the string `"runn` begins at column 52.
            ".loops/.running/ok.state.json": '{"schema_version": 1, "loop_name": "ok", '
            '"status": "runn',
        },
        "err",
        1,
    ),
    ("docs/cli.md", "loop: plan"): Run(("run", "plan", "--dry-run"), {".loops/plan.yaml": PLAN}),
    ("docs/guide.md", "$ ll-loop validate tutorial"): Run(
        files={".loops/tutorial.yaml": "@docs/guide.md|name: tutorial"}
    ),
    ("docs/analysis.md", "$ ll-loop simulate fix-types"): Run(),
    ("docs/cli.md", "$ ll-loop new --list"): Run(),
    ("docs/cli.md", "[1/50] fix → Fix the build"): Run(
        ("run", "typo", "--no-color"),
        {
            ".loops/typo.yaml": "name: typo\ninitial: fix\nstates:\n  fix:\n"
            "    action: Fix the build\n    on_success: done\n    on_failure: done\n"
            "    on_error: done\n  done:\n    terminal: true\n"
        },
        stream="err",
        code=7,  # `done` reached on the verdict error: a failure
        lines=(0, 5),
        printed=(1, 6),  # after validate's warning, said once before the first step
    ),
    ("docs/cli.md", "$ ll-loop new my-first --from hello"): Run(),
    ("docs/guide.md", "[3/50] check → echo same"): Run(
        ("run", "spin", "--no-color"), {".loops/spin.yaml": SPIN}, "err", 8, printed=(-7, None)
    ),
    ("docs/guide.md", "[1/50] gate → (approval)"): Run(
        ("run", "gate", "--no-color"), {".loops/gate.yaml": GATE}, "err", 9
    ),
    ("docs/analysis.md", "flowchart TD"): Run(("graph", "fix-types")),
    ("docs/analysis.md", ".loops/fix-types.yaml:10: warning:"): Run(
        ("validate", "fix-types"), code=0, lines=(0, 1)
    ),
    ("docs/loop-files.md", ".loops/fix-types.yaml:9: error:"): Run(
        ("validate", "fix-types", "extra", "broken", "ok"),
        {
            ".loops/fix-types.yaml": TYPO,
            ".loops/extra.yaml": sample_loop("extra"),
            ".loops/broken.yaml": BROKEN,
            ".loops/ok.yaml": HELLO.replace("hello", "ok"),
        },
        code=2,
    ),
    ("docs/cli.md", ".loops/fix.yaml:9: error:"): Run(
        ("validate", "fix", "probe", "ok"),
        {
            ".loops/fix.yaml": sample_loop("fix", typo=True),
            ".loops/probe.yaml": sample_loop("probe"),
            ".loops/ok.yaml": HELLO.replace("hello", "ok"),
        },
        code=2,
    ),
    ("docs/cli.md", "ll-loop: error: no loop named 'helo'"): Run(
        ("run", "helo"), {".loops/hello.yaml": HELLO}, "err", code=2, bare=True
    ),
    ("docs/paradigms.md", "ll-loop: error: paradigm 'convergence'"): (
        Run(("compile", ".loops/c.yaml"), {".loops/c.yaml": CONVERGENCE}, "err", 2, (0, 1)),
        Run(("compile", ".loops/i.yaml"), {".loops/i.yaml": INVARIANTS}, "err", 2, (1, 2), (0, 1)),
        Run(("compile", ".loops/u.yaml"), {".loops/u.yaml": UNKNOWN}, "err", 2, (2, 3), (0, 1)),
    ),
}

# Samples whose wording is checked against the code's messages (test_doc_messages.py): they
# need a crashed run, a full disk, a second process or similar to reproduce. The value: the
# words where the message is put together from parts (a state name, a joined piece).
MESSAGES: dict[Key, str] = {
    ("docs/analysis.md", "loop 'demo' > states > check > route > sucess"): "exit_code success",
    ("docs/analysis.md", ".loops/demo.yaml:13: warning:"): "done",
    ("docs/analysis.md", "loop 'demo' > states > report > action: ${captured.errors"): "fails",
    ("docs/analysis.md", "loop 'demo' > states > report > action: ${captured.lint.output}"): "",
    ("docs/analysis.md", "loop 'demo' > states > report > action: ${captured.lint}:"): (
        "allowed eval"
    ),
    ("docs/cli.md", "$ ll-loop run fix-types --background"): "",
    ("docs/cli.md", "loop:         fix-types"): "",
    ("docs/cli.md", "ll-loop: error: .loops/goal.fsm.yaml is older"): "",
    ("docs/cli.md", "stopping loop 'slow'"): "",
    ("docs/cli.md", "stopping loop 'work'"): "stopped",
    ("docs/cli.md", "ll-loop: error: scope 'src/api'"): "",
    ("docs/cli.md", "ll-loop: queued: scope"): "",
    ("docs/loop-files.md", ".loops/a.yaml:5:1: error: YAML syntax error"): '"',
    ("docs/evaluators.md", "llm_skipped:"): "",
    ("docs/persistence.md", "loop name '../etc'"): "",
    ("docs/persistence.md", "ll-loop: error: .loops/.running/fix.events.jsonl"): "is",
    ("docs/persistence.md", "Loop failed in a:"): "a",
    ("docs/persistence.md", "status:       crashed"): "",
    ("docs/persistence.md", "ll-loop: .loops/.running/steps.events.jsonl"): "",
    ("docs/persistence.md", ".loops/.running/fix-types.state.json: corrupt"): "",
    ("docs/persistence.md", "ll-loop: error: scope 'src/api'"): "",
    ("docs/persistence.md", "queued: scope"): "",
    ("docs/notifications.md", "ll-loop: notify: the webhook"): "tries",
}

# Blocks checked by a test of their own in test_doc_outputs.py.
CUSTOM: set[Key] = {
    # Checked by actionlint and run by act (its github.com steps left out) in
    # package/test_action.py.
    ("docs/github-actions.md", "# .github/workflows/fix-issues.yml"),
    # Run under real bubblewrap and compared in docs/test_sandbox_doc.py.
    ("docs/sandbox.md", "$ ll-loop run offline-checks --dry-run"),
    ("docs/sandbox.md", "[1/50] tidy →"),
    ("docs/sandbox.md", "[1/50] peek →"),
    ("docs/sandbox.md", "ll-loop: error: state 'test' runs in a sandbox"),
    ("docs/sandbox.md", "#!/bin/sh\n# .loops/in-podman.sh"),
    # The reuse examples, written into a project and run in docs/test_reuse_doc.py.
    ("docs/reuse.md", ".loops/lib/checks.yaml:7: error:"),
    ("docs/reuse.md", "# .loops/lib/checks.yaml"),
    ("docs/reuse.md", "# .loops/greet-moon.yaml"),
    # A live fan-out's branches and a wrong --branch, in docs/test_fanout_doc.py.
    ("docs/cli.md", "branches:     3 (ll-loop logs fix-each"),
    ("docs/cli.md", "ll-loop: error: run 'fix-each' has no branch"),
    ("docs/cli.md", "FAN-OUT  BRANCH"),
    ("docs/cli.md", "$ ll-loop simulate fix-each"),
    ("docs/loop-files.md", "flowchart TD\n    %% loop: fix-each"),
    # A live fan-out in `watch`, in a real tmux pane: cli/watch/test_fanout.py.
    ("docs/watch.md", " LOOP               RUN"),
    # The view itself at 80x24, rendered headless and compared in docs/test_watch_doc.py.
    ("docs/watch.md", " LOOP       RUN"),
    ("docs/watch.md", "fix-types  run k3f9"),
    # The refusal of a budget that cannot be kept: e2e/test_budget_e2e.py, with real Codex.
    ("docs/cli.md", "ll-loop: error: the budget $5 (max_cost_usd"),
    # A step whose spend was not counted stops a budgeted run: fsm/runs/test_spend_check.py.
    ("docs/cli.md", "Loop stopped in fix: the budget $1 (max_cost_usd"),
    # The custom agent example, run for real in docs/test_custom_agent_doc.py.
    ("docs/agents/custom.md", "#!/bin/bash\n# tools/my-agent"),
    ("docs/agents/custom.md", "name: fix-calc"),
    ("docs/agents/custom.md", "$ ll-loop run fix-calc"),
    # The agents' index and the Claude page: docs/test_agents_index_doc.py.
    ("docs/agents/README.md", "ll-loop: error: state 'fix'"),
    ("docs/agents/claude.md", "npm install -g @anthropic-ai/claude-code"),
    # The Gemini command line and install command: fsm/actions/test_gemini_doc.py.
    ("docs/agents/gemini.md", "gemini --approval-mode yolo"),
    ("docs/agents/gemini.md", "npm install -g @google/gemini-cli"),
    # Compared with the real run in e2e/test_library_e2e.py (the real Claude Code CLI).
    ("docs/library.md", "$ ll-loop run library:fix-tests"),
    ("docs/library.md", "$ ll-loop run library:lint-fix"),
    ("docs/library.md", "$ ll-loop run library:type-fix"),
    ("docs/library.md", "$ ll-loop run library:coverage-up"),
    ("docs/library.md", "$ ll-loop run library:ralph"),
    ("docs/library.md", "$ ll-loop run library:review-and-fix"),
    ("docs/library.md", "$ ll-loop run library:fix-ci"),  # loops/test_fix_ci.py
    ("docs/library.md", "$ ll-loop run library:best-of"),  # loops/test_best_of.py
    ("docs/library.md", "$ ll-loop run library:fix-each"),  # loops/test_fix_each.py
    ("docs/guide.md", "jobs:\n  loop:"),
    ("docs/cli.md", "ll-loop: error: loop 'count' has no run"),  # cli/test_run_ids.py
    ("docs/worktrees.md", "$ ll-loop run fix-issue 7"),  # cli/test_worktree_runs.py
    ("docs/worktrees.md", "ll-loop: note: run fix@ab12 was killed"),  # cli/test_worktree_startup
    # The parallel-runs story, replayed on a real git repo in docs/test_guide_worktrees.py.
    ("docs/guide.md", "$ ll-loop list\nNAME         PARADIGM"),
    ("docs/guide.md", "$ ll-loop worktree list\nRUN               BRANCH"),
    ("docs/guide.md", "$ ll-loop worktree diff patch-issue@k3x9"),
    ("docs/guide.md", "$ ll-loop worktree merge patch-issue@k3x9"),
    ("docs/guide.md", "$ ll-loop worktree merge patch-issue@m2p7"),
    ("docs/guide.md", "$ ll-loop worktree discard patch-issue@q8r4"),
    # Compared with two live runs in cli/test_worktree_runs.py.
    ("docs/cli.md", "ll-loop: error: loop 'slow' has 2"),
    ("README.md", "$ ll-loop fix-types"),
    ("docs/guide.md", "repos:"),
    (
        "docs/loop-files.md",
        "# yaml-language-server: $schema=../scripts/little_loops/fsm/fsm-loop-schema.json\n",
    ),
    ("docs/evaluators.md", "type: object"),
    ("docs/notifications.md", '{\n  "run_id"'),
    # Compared on a real git repository in docs/test_worktrees_doc.py.
    ("docs/worktrees.md", "ll-loop: kept worktree .loops/.worktrees/fix@ab12"),
    ("docs/worktrees.md", "$ ll-loop worktree list"),
    ("docs/worktrees.md", "$ ll-loop worktree diff fix@ab12 --stat"),
    ("docs/worktrees.md", "$ ll-loop worktree diff fix@cd34"),
    ("docs/worktrees.md", "$ ll-loop worktree merge fix@ab12"),
    ("docs/worktrees.md", "$ ll-loop worktree merge fix\n"),
    ("docs/worktrees.md", "$ ll-loop worktree discard fix"),
}

# Blocks no check covers, and why.
UNCHECKED: dict[Key, str] = {
    ("docs/evaluators.md", "result:"): "the shape of a result, not loop YAML",
    (
        "docs/persistence.md",
        "ll-loop: error: .loops/.running/fill.lock",
    ): "a path and the OS's words",
    ("docs/persistence.md", ".loops/\n├──"): "a directory tree",
    ("docs/cli.md", '"yaml.schemas"'): "a setting of an editor, not of ll-loop",
}


def keyed(block: Block, table: dict[Key, T] | set[Key]) -> T | Key | None:
    """The entry of *table* for *block* (the key itself for a set), or None."""
    for key in table:
        if block.starts(*key):
            return table[key] if isinstance(table, dict) else key
    return None
