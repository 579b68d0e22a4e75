"""`ll-loop validate` on agents: names (did-you-mean), custom definitions, options blocks, judge."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.definition.checks.agent_checks import agent_problems

HEAD = """\
name: demo
initial: fix
"""
TAIL = """\
  done:
    terminal: true
"""


def _validate(root: Path, body: str, agents_file: str | None = None) -> tuple[int, list[str]]:
    """`ll-loop validate demo` (for real) on a loop of *body* (its states and settings)."""
    (root / ".loops").mkdir(exist_ok=True)
    (root / ".loops" / "demo.yaml").write_text(HEAD + textwrap.dedent(body) + TAIL)
    if agents_file is not None:
        (root / ".loops" / "agents.yaml").write_text(textwrap.dedent(agents_file))
    run = ll_loop(root, "validate", "demo")
    return run.returncode, [line for line in run.stdout.splitlines() if line.strip()]


PROMPT_STATE = """\
states:
  fix:
    action: Fix the tests
    action_type: prompt
    next: done
"""


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (
            "agent: claud\n" + PROMPT_STATE,
            ".loops/demo.yaml:3: error: loop 'demo' > agent: unknown agent 'claud' "
            "(did you mean claude?)",
        ),
        (
            "agents:\n  mine: {command: ./agent}\n"
            "states:\n  fix: {action: Fix, action_type: prompt, agent: [claude, mien],"
            " next: done}\n",
            ".loops/demo.yaml:6: error: loop 'demo' > states > fix > agent: unknown agent "
            "'mien' (did you mean mine?)",
        ),
        (
            "parameters:\n  agent: {type: string, default: claude, choices: [claude, xyzzy]}\n"
            "agent: ${context.agent}\n" + PROMPT_STATE,
            ".loops/demo.yaml:5: error: loop 'demo' > agent: unknown agent 'xyzzy' "
            f"(agents: {', '.join(AGENTS)})",
        ),
        (
            "agent: ${captured.who}\n" + PROMPT_STATE,
            ".loops/demo.yaml:3: error: loop 'demo' > agent: '${captured.who}': an agent is "
            "chosen before the state runs, so it may read only ${context.NAME} and ${env.NAME}",
        ),
        (
            "states:\n  fix: {action: make, agent: claude, next: done}\n",
            ".loops/demo.yaml:4: error: loop 'demo' > states > fix > agent: only a prompt or "
            "slash-command state runs on an agent",
        ),
        (
            "agents:\n  mine: {command: ./agent}\n"
            "states:\n  fix:\n    action: Fix\n    action_type: prompt\n"
            "    agent: [mine, claude]\n    claude: {modle: opus}\n    next: done\n",
            ".loops/demo.yaml:10: error: loop 'demo' > states > fix > claude > modle: unknown "
            "key (did you mean model?)",
        ),
        (
            "agents:\n  mine: {prompt: stdin}\n" + PROMPT_STATE,
            ".loops/demo.yaml:4: error: loop 'demo' > agents > mine: missing required key "
            "'command' (the command that runs the agent)",
        ),
        (
            "agents:\n  mine: {command: x, prompt: pipe}\n" + PROMPT_STATE,
            ".loops/demo.yaml:4: error: loop 'demo' > agents > mine > prompt: expected one of "
            "argument, stdin, file, got 'pipe'",
        ),
        (
            "agents:\n  mine: {command: x, limit_pattern: '(quota'}\n" + PROMPT_STATE,
            ".loops/demo.yaml:4: error: loop 'demo' > agents > mine > limit_pattern: not a "
            "regular expression: missing ), unterminated subpattern at position 0",
        ),
        (
            "agents:\n  claude: {command: x}\n" + PROMPT_STATE,
            ".loops/demo.yaml:4: error: loop 'demo' > agents > claude: 'claude' is a built-in "
            "agent: give the custom one another name",
        ),
        (
            "agents:\n  mine: {command: x}\nllm: {backend: mine}\n" + PROMPT_STATE,
            ".loops/demo.yaml:5: error: loop 'demo' > llm > backend: the custom agent mine "
            "cannot judge: it answers with no schema-checked JSON",
        ),
    ],
)
def test_each_agent_problem_is_one_line_and_a_failure(tmp_path: Path, body: str, line: str) -> None:
    code, lines = _validate(tmp_path, body)
    assert code != 0
    assert lines == [line]


def test_an_options_block_of_an_agent_the_state_does_not_run_on_is_a_warning(
    tmp_path: Path,
) -> None:
    body = (
        "agents:\n  mine: {command: ./agent}\nclaude: {model: opus}\n"
        "states:\n  fix:\n    action: Fix\n    action_type: prompt\n"
        "    agent: mine\n    claude: {model: sonnet}\n    next: done\n"
    )
    code, lines = _validate(tmp_path, body)
    assert code == 0
    assert lines == [
        ".loops/demo.yaml:5: warning: loop 'demo' > claude: not used: no prompt state runs "
        "on claude",
        ".loops/demo.yaml:11: warning: loop 'demo' > states > fix > claude: not used: this "
        "state runs on mine (add claude to its agent: to use it)",
        ".loops/demo.yaml: ok (2 warnings)",
    ]


def test_agents_of_the_project_file_are_known_to_every_loop(tmp_path: Path) -> None:
    agents = "agents:\n  mine: {command: ./agent, prompt: file}\n"
    code, lines = _validate(tmp_path, "agent: mine\n" + PROMPT_STATE, agents)
    assert (code, lines) == (0, [".loops/demo.yaml: ok"])


@pytest.mark.parametrize(
    ("agents", "problem"),
    [
        (
            "agents:\n  mine: {command: x, prompt: pipe}\n",
            ".loops/agents.yaml:2: agents > mine > prompt: expected one of argument, stdin, "
            "file, got 'pipe'",
        ),
        (
            "agents: [mine]\n",
            ".loops/agents.yaml: expected agents: with a mapping of agents by name",
        ),
        (
            "agents: {mine: {command: x}\n",
            ".loops/agents.yaml:2:1: YAML syntax error: did not find expected ',' or '}'",
        ),
    ],
)
def test_a_broken_project_agents_file_is_one_line_naming_it(
    tmp_path: Path, agents: str, problem: str
) -> None:
    code, lines = _validate(tmp_path, PROMPT_STATE, agents)
    assert code != 0
    assert len(lines) == 1
    assert lines[0].startswith(f".loops/demo.yaml: error: {problem}")


def test_agent_problems_reads_raw_data() -> None:
    data = {"agent": ["claude", "nope"], "states": {}}
    assert list(agent_problems(data, ("mine",))) == [
        (
            ("agent",),
            f"unknown agent 'nope' (agents: {', '.join([*AGENTS, 'mine'])})",
            "error",
            None,
        )
    ]
    assert list(agent_problems({"agent": "mine", "states": {}}, ("mine",))) == []


def _with_parameter(choices: list[str] | None) -> dict[str, object]:
    parameter: dict[str, object] = {"type": "string", "default": "claude"}
    if choices is not None:
        parameter["choices"] = choices
    return {
        "parameters": {"agent": parameter},
        "agent": "${context.agent}",
        "states": {
            "fix": {"action": "Fix it", "action_type": "prompt", "codex": {"model": "m"}},
        },
    }


def test_an_agent_any_run_may_choose_leaves_every_options_block_in_use() -> None:
    # A parameter without choices: `--set agent=codex` may pick codex, so its block is used.
    assert list(agent_problems(_with_parameter(None))) == []
    # With choices that leave codex out, the block can never be used.
    problems = list(agent_problems(_with_parameter(["claude"])))
    assert [(path, level) for path, _, level, _ in problems] == [
        (("states", "fix", "codex"), "warning")
    ]


def test_session_continue_on_an_agent_that_keeps_no_session_is_a_warning() -> None:
    state = {"action": "Fix it", "action_type": "prompt", "session": "continue"}
    custom = {"agents": {"mine": {"command": "./mine"}}, "agent": "mine", "states": {"fix": state}}
    problems = list(agent_problems(custom))
    assert problems == [
        (
            ("states", "fix", "session"),
            "no session to continue: mine keeps none (each visit starts afresh)",
            "warning",
            None,
        )
    ]
    # On a list with an agent that keeps sessions, the session is that agent's.
    assert list(agent_problems({**custom, "agent": ["mine", "claude"]})) == []


def test_an_agent_reference_whose_default_fills_to_no_name_is_an_error(tmp_path: Path) -> None:
    body = "parameters:\n  agent: {type: string, default: ''}\nagent: ${context.agent}\n"
    code, lines = _validate(tmp_path, body + PROMPT_STATE)
    assert code != 0
    assert lines == [
        ".loops/demo.yaml:5: error: loop 'demo' > agent: '${context.agent}' names no agent "
        "once filled in (give it an agent name)"
    ]
