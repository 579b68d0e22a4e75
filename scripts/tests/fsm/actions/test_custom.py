"""Custom agents: a user's command as a prompt state's agent, run for real by `ll-loop run`."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from support.forkserver import ll_loop

from little_loops.fsm.actions.custom import AgentDefinition, custom_kind, definition_problems
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import PromptInput

# The agent of the example: a shell script that answers, and says what it spent.
AGENT_SCRIPT = """\
#!/bin/bash
# A stand-in coding agent: reads the prompt ($1, stdin or $LL_PROMPT_FILE), "fixes" the bug.
case "$MODE" in
  stdin) prompt=$(cat) ;;
  file) prompt=$(cat "$LL_PROMPT_FILE") ;;
  *) prompt=$1 ;;
esac
printf '%s' "$prompt" > prompt.seen
echo "args: $#"
sed -i 's/return a - b/return a + b/' calc.txt
echo "fixed calc.txt"
echo "tokens: 120, cost: \\$0.03" >&2
echo "total cost: \\$0.42"
"""

LOOP = """\
name: fixer
initial: test
agent: mine
agents:
  mine:
    command: MODE={mode} ./tools/agent.sh
    prompt: {mode}
    cost_pattern: 'cost: \\$([0-9.]+)'
    limit_pattern: 'usage limit reached'
states:
  test:
    action: bash calc.sh
    on_success: done
    on_failure: fix
  fix:
    action: {prompt}
    action_type: prompt
    evaluate: {{type: exit_code}}
    next: test
  done:
    terminal: true
"""


def _project(tmp_path: Path, mode: str, prompt: str = "Fix calc.sh: 1 + 2 must be 3") -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / "tools").mkdir()
    agent = tmp_path / "tools" / "agent.sh"
    agent.write_text(AGENT_SCRIPT)
    agent.chmod(0o755)
    # The planted bug (in calc.txt), fixed when the agent turns `a - b` into `a + b`.
    (tmp_path / "calc.txt").write_text("return a - b\n")
    (tmp_path / "calc.sh").write_text('grep -qF "a + b" calc.txt\n')
    quoted = json.dumps(prompt)
    (tmp_path / ".loops" / "fixer.yaml").write_text(LOOP.format(mode=mode, prompt=quoted))
    return tmp_path


def _status(root: Path) -> dict[str, object]:
    shown = ll_loop(root, "status", "fixer", "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def test_a_shell_script_agent_fixes_the_bug_and_its_cost_is_recorded(tmp_path: Path) -> None:
    root = _project(tmp_path, "argument")
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Loop completed: done" in run.stderr
    assert (root / "prompt.seen").read_text() == "Fix calc.sh: 1 + 2 must be 3"
    status = _status(root)
    # The last match in stdout (its total); stderr's is read only when stdout has none.
    assert status["cost_usd"] == pytest.approx(0.42)
    out = (root / ".loops" / ".running" / "fixer.fix.out").read_text()
    assert "args: 1" in out  # the prompt is one argument, whatever it holds


def test_the_prompt_is_data_never_shell_text(tmp_path: Path) -> None:
    hostile = "Fix it; touch pwned $(touch pwned2) `touch pwned3` \"'"
    root = _project(tmp_path, "argument", hostile)
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "prompt.seen").read_text() == hostile
    assert not list(root.glob("pwned*"))


def test_a_prompt_of_more_than_a_megabyte_reaches_the_agent_on_stdin(tmp_path: Path) -> None:
    big = "x" * (1024 * 1024 + 4096) + " fix calc.sh"
    root = _project(tmp_path, "stdin", big)
    run = ll_loop(root, "run", "fixer", timeout=90)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "prompt.seen").read_text() == big
    out = (root / ".loops" / ".running" / "fixer.fix.out").read_text()
    assert "args: 0" in out
    # Kept beside the output file, as the output is.
    assert (root / ".loops" / ".running" / "fixer.fix.prompt").read_text() == big


def test_the_prompt_reaches_the_agent_in_the_file_named_by_ll_prompt_file(tmp_path: Path) -> None:
    root = _project(tmp_path, "file", "Fix calc.sh, 'please'")
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "prompt.seen").read_text() == "Fix calc.sh, 'please'"


def test_output_matching_limit_pattern_is_a_usage_limit_waited_out(tmp_path: Path) -> None:
    root = _project(tmp_path, "argument")
    # Out of quota the first time, working the second.
    (root / "tools" / "agent.sh").write_text(
        "#!/bin/bash\n"
        "if [ ! -e tried ]; then touch tried; echo 'Error: usage limit reached'; exit 1; fi\n"
        + AGENT_SCRIPT.split("\n", 1)[1]
    )
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(loop.read_text() + "rate_limit:\n  ladder: [1]\n")
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    events = (root / ".loops" / ".running" / "fixer.events.jsonl").read_text().splitlines()
    waits = [json.loads(line) for line in events if '"rate_limit' in line]
    assert waits, events
    assert "usage" in json.dumps(waits)


def test_argv_puts_the_prompt_after_the_command_as_one_argument() -> None:
    kind = custom_kind("mine", AgentDefinition(command="./agent --fast"))
    request = ActionRequest(action="a b; c", timeout=1, kind="mine")
    assert kind.argv(request, kind.program) == [
        "bash",
        "-c",
        './agent --fast "$@"',
        "mine",
        "a b; c",
    ]
    on_stdin = custom_kind("mine", AgentDefinition("./agent", PromptInput.STDIN))
    assert on_stdin.argv(request, on_stdin.program) == ["bash", "-c", "./agent", "mine"]
    assert on_stdin.prompt_input is PromptInput.STDIN
    assert on_stdin.action_types == ()
    assert on_stdin.judge is None
    assert "cannot" in on_stdin.no_judge


def test_cost_is_the_last_match_in_stdout_else_in_stderr() -> None:
    kind = custom_kind("mine", AgentDefinition("x", cost_pattern=r"\$([0-9.]+)"))
    result = ActionResult("spent $1.5 then $2", "and $0.25", 0, 1)
    assert kind.finish(result, ActionRequest("p", 1, "mine")).cost_usd == 2
    on_stderr = ActionResult("no money", "$0.5 and $0.25", 0, 1)
    assert kind.finish(on_stderr, ActionRequest("p", 1, "mine")).cost_usd == 0.25
    nothing = custom_kind("mine", AgentDefinition("x"))
    assert nothing.finish(ActionResult("$3", "", 0, 1), ActionRequest("p", 1, "m")).cost_usd is None


def test_limit_pattern_gives_a_usage_limit() -> None:
    kind = custom_kind("mine", AgentDefinition("x", limit_pattern="quota (gone|over)"))
    limit = kind.usage_limit(ActionResult("", "your quota gone", 1, 1))
    assert limit is not None
    assert limit.kind == "usage_limit"
    assert kind.usage_limit(ActionResult("fine", "", 0, 1)) is None


@pytest.mark.parametrize(
    ("name", "data", "problems"),
    [
        (
            "mine",
            {"prompt": "stdin"},
            [((), "missing required key 'command' (the command that runs the agent)")],
        ),
        (
            "mine",
            {"command": "x", "prompt": "pipe"},
            [(("prompt",), "expected one of argument, stdin, file, got 'pipe'")],
        ),
        (
            "mine",
            {"command": "x", "cost_pattern": "cost"},
            [
                (
                    ("cost_pattern",),
                    "expected a regular expression with one group (the dollars spent)",
                )
            ],
        ),
        (
            "mine",
            {"command": "x", "limit_pattern": "("},
            [
                (
                    ("limit_pattern",),
                    "not a regular expression: missing ), unterminated subpattern at position 0",
                )
            ],
        ),
        (
            "mine",
            {"command": "x", "comand": "y"},
            [(("comand",), "unknown key (did you mean command?)")],
        ),
        (
            "claude",
            {"command": "x"},
            [((), "'claude' is a built-in agent: give the custom one another name")],
        ),
        ("mine", "x", [((), "expected a mapping with a command, got 'x'")]),
    ],
)
def test_definition_problems(name: str, data: object, problems: list[object]) -> None:
    assert list(definition_problems(name, data, ("claude",))) == problems


def test_definition_round_trips() -> None:
    data = {"command": "x", "prompt": "file", "cost_pattern": "(1)", "timeout": 30}
    assert AgentDefinition.from_dict(data).to_dict() == data
    assert custom_kind("m", AgentDefinition.from_dict(data)).default_timeout == 30


def test_a_custom_agent_runs_in_the_run_folder(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        name: where
        initial: ask
        agents:
          here: {command: "pwd > seen.txt; echo ok"}
        states:
          ask:
            {action: hi, action_type: prompt, agent: here, evaluate: {type: exit_code}, next: done}
          done: {terminal: true}
        """
    )
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "where.yaml").write_text(text)
    run = ll_loop(tmp_path, "run", "where", timeout=60, env={**os.environ})
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "seen.txt").read_text().strip() == str(tmp_path.resolve())


def test_a_sub_loop_runs_its_own_and_the_projects_custom_agents(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "agents.yaml").write_text(
        "agents:\n  shared: {command: 'f() { echo \"shared: $1\" >> said.txt; }; f'}\n"
    )
    (loops / "parent.yaml").write_text(
        "name: parent\ninitial: sub\nstates:\n"
        "  sub: {loop: child, on_success: done, on_failure: done}\n"
        "  done: {terminal: true}\n"
    )
    (loops / "child.yaml").write_text(
        textwrap.dedent(
            """\
            name: child
            initial: a
            agents:
              own: {command: 'f() { echo "own: $1" >> said.txt; }; f', prompt: argument}
            states:
              a: {action: one, action_type: prompt, agent: own, evaluate: {type: exit_code},
                  next: b}
              b: {action: two, action_type: prompt, agent: shared, evaluate: {type: exit_code},
                  next: done}
              done: {terminal: true}
            """
        )
    )
    run = ll_loop(tmp_path, "run", "parent", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "said.txt").read_text().splitlines() == ["own: one", "shared: two"]


@pytest.mark.parametrize("printed", ["-5", "nan", "inf", "1e400"])
def test_a_cost_that_is_no_amount_of_dollars_is_not_recorded(tmp_path: Path, printed: str) -> None:
    # A negative cost would lower the run's spend under max_cost_usd, and NaN or inf make
    # the report and the budget meaningless: such a match is not a cost (stderr's is read).
    root = _project(tmp_path, "argument")
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(loop.read_text().replace("[0-9.]+", "[-0-9.a-z]+"))
    script = root / "tools" / "agent.sh"
    script.write_text(script.read_text().replace("\\$0.42", f"\\${printed}"))
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _status(root)["cost_usd"] == pytest.approx(0.03)
    report = ll_loop(root, "report", "fixer")
    assert report.returncode == 0, report.stderr
    assert f"${printed}" not in report.stdout + report.stderr
    assert "$0.0300" in report.stdout
    assert "warning" not in report.stderr


def test_finish_skips_a_match_that_is_not_a_finite_cost_of_zero_or_more() -> None:
    kind = custom_kind("mine", AgentDefinition("x", cost_pattern=r"\$([-0-9.a-z]+)"))
    for spent in ("$-1", "$nan", "$inf", "$1e400"):
        result = ActionResult(f"$0.5 then {spent}", "", 0, 1)
        assert kind.finish(result, ActionRequest("p", 1, "mine")).cost_usd == 0.5


def test_a_command_ending_in_a_newline_gets_the_prompt_as_its_argument(tmp_path: Path) -> None:
    # `command: |` (a YAML block) ends in a newline: `"$@"` on a line of its own would run
    # the prompt as a command. Here the prompt names a program that must not run.
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {tmp_path / 'evil.ran'}\n")
    evil.chmod(0o755)
    root = _project(tmp_path, "argument", str(evil))
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(
        loop.read_text().replace(
            "command: MODE=argument ./tools/agent.sh\n",
            "command: |\n      MODE=argument ./tools/agent.sh\n",
        )
    )
    ll_loop(root, "run", "fixer", "--max-iterations", "2", timeout=60)
    assert not (tmp_path / "evil.ran").exists()
    assert (root / "prompt.seen").read_text() == str(evil)


@pytest.mark.parametrize("command", ["./agent --fast;", "./agent &", "./agent |", "./a # fast"])
def test_a_command_the_prompt_cannot_end_as_an_argument_is_refused(command: str) -> None:
    problems = list(definition_problems("mine", {"command": command}, ()))
    assert len(problems) == 1, problems
    assert problems[0][0] == ("command",)
    assert "last argument" in problems[0][1]
    # With the prompt on stdin or in a file, nothing is added to the command.
    assert not list(definition_problems("mine", {"command": command, "prompt": "stdin"}, ()))


@pytest.mark.parametrize("command", ["./a --fast", "f() { echo $1; }; f", "find . -exec x {} \\;"])
def test_a_command_that_ends_in_a_program_or_its_arguments_is_fine(command: str) -> None:
    assert not list(definition_problems("mine", {"command": command}, ()))


def test_a_catastrophic_cost_pattern_does_not_hang_the_run(tmp_path: Path) -> None:
    # (?:a+)+ backtracks without end on "aaaa…!": the match is abandoned after
    # REGEX_TIME_LIMIT seconds, the cost is not read, and the run goes on to its end.
    root = _project(tmp_path, "argument")
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(loop.read_text().replace("'cost: \\$([0-9.]+)'", "'(?:a+)+\\$([0-9])'"))
    script = root / "tools" / "agent.sh"
    script.write_text(script.read_text() + f"echo {'a' * 40}!\n")
    run = ll_loop(root, "run", "fixer", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _status(root)["cost_usd"] == 0
    events = (root / ".loops" / ".running" / "fixer.events.jsonl").read_text().splitlines()
    done = [json.loads(line) for line in events if '"action_complete"' in line]
    assert "mine's cost_pattern took longer than 10s" in done[-2]["stderr"], done


def test_slow_patterns_are_abandoned_within_their_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setattr("little_loops.fsm.values.regex_limit.REGEX_TIME_LIMIT", 0.3)
    slow = "(?:a+)+b"
    kind = custom_kind("mine", AgentDefinition("x", limit_pattern=slow, cost_pattern=f"{slow}(1)"))
    result = ActionResult("a" * 40 + "!", "", 0, 1)
    started = time.monotonic()
    assert kind.usage_limit(result) is None
    done = kind.finish(result, ActionRequest("p", 1, "mine"))
    assert time.monotonic() - started < 10
    assert done.cost_usd is None
    assert "cost_pattern took longer than 0.3s" in done.stderr


@pytest.mark.parametrize("name", ["a,b", " x", "x ", "${context.x}", "a\nb", "\x1b[31mred", ""])
def test_a_name_agent_cannot_name_is_refused_where_it_is_declared(name: str) -> None:
    # `agent:` splits on commas, strips blanks and fills in ${...}: such a custom agent
    # could never be chosen, and a control character would rewrite the display.
    problems = list(definition_problems(name, {"command": "x"}, ()))
    assert len(problems) == 1, problems
    assert problems[0][0] == ()


@pytest.mark.parametrize("name", ["../x", "a b", "ünï—😀", "n" * 300, "-rf", "my.agent_2"])
def test_an_odd_but_usable_name_is_fine(name: str) -> None:
    assert not list(definition_problems(name, {"command": "x"}, ()))


def test_validate_refuses_a_custom_agent_whose_name_agent_cannot_give(tmp_path: Path) -> None:
    root = _project(tmp_path, "argument")
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(loop.read_text().replace("  mine:\n", '  "mine,2":\n', 1))
    checked = ll_loop(root, "validate", "fixer")
    assert checked.returncode != 0
    assert "agents > mine,2: " in checked.stdout, checked.stdout
    assert "comma" in checked.stdout


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("", "expected a command, got an empty one"),
        ("  \n", "expected a command, got an empty one"),
        ("echo a\0b", "a command cannot hold a NUL byte"),
    ],
)
def test_an_empty_command_or_one_with_a_nul_is_refused(command: str, problem: str) -> None:
    # An empty command would run the prompt itself as the command (`bash -c ' "$@"'`).
    for mode in ("argument", "stdin"):
        assert list(definition_problems("mine", {"command": command, "prompt": mode}, ())) == [
            (("command",), problem)
        ]


def test_an_answer_that_mentions_the_limit_pattern_is_no_limit(tmp_path: Path) -> None:
    # The task is about usage limits, so the answer says so; the call succeeded (exit 0):
    # as for Claude Code, a call that finished is never read as a limit, not re-run.
    root = _project(tmp_path, "argument")
    script = root / "tools" / "agent.sh"
    script.write_text(script.read_text() + "echo 'handled: usage limit reached is now shown'\n")
    script.write_text(script.read_text().replace("#!/bin/bash\n", "#!/bin/bash\necho x >> calls\n"))
    loop = root / ".loops" / "fixer.yaml"
    loop.write_text(loop.read_text() + "rate_limit:\n  ladder: [1]\n  max_wait: 3\n")
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "calls").read_text() == "x\n"
    events = (root / ".loops" / ".running" / "fixer.events.jsonl").read_text()
    assert "rate_limit_wait" not in events


# An agent that parses its options as programs do (getopts), then takes the prompt.
OPTIONS_AGENT = """\
#!/bin/bash
while getopts "o:" opt; do
  case $opt in o) printf '%s' "$OPTARG" > option.seen ;; esac
done
shift $((OPTIND - 1))
printf '%s' "$1" > prompt.seen
sed -i 's/return a - b/return a + b/' calc.txt
"""
DASHED = "-o pwned: fix calc.sh, 1 + 2 must be 3"


@pytest.mark.parametrize("options_end", [None, "--"], ids=["refused", "after-dashes"])
def test_a_prompt_starting_with_a_dash_never_reaches_the_agent_as_an_option(
    tmp_path: Path, options_end: str | None
) -> None:
    root = _project(tmp_path, "argument", DASHED)
    (root / "tools" / "agent.sh").write_text(OPTIONS_AGENT)
    loop = root / ".loops" / "fixer.yaml"
    extra = "" if options_end is None else f"    options_end: '{options_end}'\n"
    loop.write_text(
        loop.read_text().replace("    prompt: argument\n", f"    prompt: argument\n{extra}")
    )
    assert ll_loop(root, "validate", "fixer").returncode == 0
    run = ll_loop(root, "run", "fixer", "--max-iterations", "2", timeout=60)
    assert not (root / "option.seen").exists()  # never an option
    if options_end is None:
        assert run.returncode != 0
        assert not (root / "prompt.seen").exists()  # the agent did not run
        assert "the prompt starts with '-', which the custom agent mine would take" in run.stderr
    else:
        assert run.returncode == 0, run.stderr
        assert (root / "prompt.seen").read_text() == DASHED


def test_a_cost_outside_any_plausible_range_is_never_counted(tmp_path: Path) -> None:
    root = _project(tmp_path, "argument")
    agent = root / "tools" / "agent.sh"
    agent.write_text(AGENT_SCRIPT.replace("total cost: \\$0.42", "total cost: \\$99999999"))
    run = ll_loop(root, "run", "fixer", timeout=60)
    assert "outside any plausible range" in run.stdout + run.stderr
    assert not _status(root).get("cost_usd")  # neither counted nor priced
