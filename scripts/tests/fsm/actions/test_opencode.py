"""The opencode kind: its command line, its events read (recorded from opencode 1.18.33
against the Chat Completions stand-in), its readiness check and its spec."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.paths import DATA

from little_loops.fsm.actions import opencode
from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.ratelimit import RATE_LIMIT, USAGE_LIMIT
from little_loops.fsm.actions.registry import KINDS, agent_problem
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import PromptInput

RECORDED = DATA / "opencode"
MODEL = {"model": "fake/fake-model"}


def recorded(name: str, exit_code: int, tmp_path: Path | None = None) -> ActionResult:
    """A result as the runner hands it over: what the real CLI printed in *name*'s
    recording, its output file under *tmp_path* when given."""
    out = (RECORDED / f"{name}.stdout").read_text()
    err = (RECORDED / f"{name}.stderr").read_text()
    path = None
    if tmp_path is not None:
        (tmp_path / f"{name}.out").write_text(out)
        path = str(tmp_path / f"{name}.out")
    return ActionResult(out, err, exit_code, 5, output_path=path)


def test_a_log_level_in_extra_args_is_the_only_one_on_the_command_line() -> None:
    # opencode 1.18 fails ("toUpperCase is not a function") on --log-level given twice.
    for given in (["--log-level", "DEBUG"], ["--log-level=WARN"]):
        line = opencode.argv(request(extra_args=given), ("opencode",))
        assert "--print-logs" in line
        assert [arg for arg in line if arg.startswith("--log-level")] == given[:1]
        # Every line of the level it asked for is kept; its retries are still heard.
        own = opencode.SPEC.own_retry_for(request(extra_args=given))  # type: ignore[misc]
        assert own is not None
        assert own.quiet is None
        assert own.retried is not None
    own = opencode.SPEC.own_retry_for(request())  # type: ignore[misc]
    assert own is opencode.OPENCODE_OWN_RETRY
    assert own.quiet is not None


def request(**options: object) -> ActionRequest:
    return ActionRequest("-fix the bug", 10, "opencode", options=options or None)


def test_the_command_line_has_run_json_options_and_the_session_but_not_the_prompt() -> None:
    asked = ActionRequest(
        "-fix", 10, "opencode", options={"model": "openai/gpt-5", "auto": True}, resume_session="s1"
    )
    assert opencode.argv(asked, ("opencode",)) == [
        "opencode",
        "run",
        "--format",
        "json",
        "--print-logs",  # its log on stderr: where its own retries show
        "--log-level",
        "INFO",  # for the line of a retried call; the step keeps the ERROR lines
        "--model",
        "openai/gpt-5",
        "--auto",
        "--session",
        "s1",
    ]
    assert opencode.SPEC.prompt_input is PromptInput.STDIN  # "-fix" goes on stdin, as written


def test_every_option_becomes_its_flag_in_table_order_extra_args_last() -> None:
    options = {
        "extra_args": ["--port", "0"],
        "files": ["a.py", "b.py"],
        "title": "fix",
        "pure": True,
        "thinking": False,
        "auto": True,
        "variant": "high",
        "agent": "build",
        "model": "anthropic/claude-sonnet-4-5",
    }
    assert opencode.flags(options) == [
        "--model",
        "anthropic/claude-sonnet-4-5",
        "--agent",
        "build",
        "--variant",
        "high",
        "--auto",
        "--pure",
        "--title",
        "fix",
        "--file",
        "a.py",
        "--file",
        "b.py",
        "--port",
        "0",
    ]


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("model", "gpt-5", "expected provider/model, e.g. openai/gpt-5, got 'gpt-5'"),
        ("auto", "yes", "expected true or false, got 'yes'"),
        ("files", "a.py", "expected a list of strings, got 'a.py'"),
    ],
)
def test_options_are_checked(name: str, value: object, problem: str) -> None:
    assert opencode.OPENCODE_OPTIONS[name].check(value) == problem
    assert opencode.OPENCODE_OPTIONS["model"].check("openai/gpt-5") is None


def test_finish_reads_answer_tokens_cost_session_and_tool_calls(tmp_path: Path) -> None:
    done = opencode.finish(recorded("tool_fix", 0, tmp_path), request(**MODEL))
    assert done.error is None
    # The words of the last message that said something; the first step's are not the answer.
    assert done.output == "Fixed: ANSWER is 42 now.\nThe check passes."
    assert done.session_id == "ses_de6444ed8ffevf1NizpQjfTE75"
    # Two steps: 1000 and 1200 prompt tokens of which 200 and 900 were cached; 50 and 30
    # completion tokens (10 of them reasoning, billed as output).
    assert done.usage == {
        "input_tokens": 1100,
        "output_tokens": 80,
        "cache_read_input_tokens": 1100,
        "cache_creation_input_tokens": 0,
    }
    assert done.cost_usd == pytest.approx(0.002 + 0.00084)  # the steps' own `cost`
    assert done.model_costs == {"fake/fake-model": pytest.approx(0.00284)}
    assert done.tool_calls == [
        '→ bash {"command": "sed -i \'s/41/42/\' calc.py", "description": "Fix the constant"}',
        "← (no output)",
    ]


def test_a_failing_shell_command_shows_its_exit_status_in_the_tool_calls() -> None:
    done = opencode.finish(recorded("tool_error", 0), request())
    assert done.tool_calls == ['→ bash {"command": "exit 3", "description": "Fail"}',
                               "← (no output) [exit 3]"]  # fmt: skip
    assert (done.output, done.error, done.model_costs) == ("It failed.", None, None)


def test_a_session_that_said_nothing_has_an_empty_answer_and_no_error() -> None:
    done = opencode.finish(recorded("read_no_text", 0), request())
    assert (done.output, done.error, done.exit_code) == ("", None, 0)
    assert done.tool_calls is not None
    assert done.tool_calls[0].startswith('→ read {"filePath": ')


def test_no_cost_reported_is_priced_from_the_tokens_of_a_known_model() -> None:
    line = {
        "type": "step_finish",
        "sessionID": "s",
        "part": {"tokens": {"input": 1_000_000, "output": 0, "reasoning": 0,
                            "cache": {"read": 0, "write": 0}}, "cost": 0},
    }  # fmt: skip
    result = ActionResult(json.dumps(line), "", 0, 1)
    done = opencode.finish(result, request(model="openai/gpt-5"))
    assert done.cost_usd == pytest.approx(1.25)
    assert done.uncounted is None
    # A model ll-loop has no price for, or none named (opencode's config chose it): opencode
    # said 0 for tokens it used, which is no price, not a free call: not counted.
    for options in ({"model": "x/y"}, {}):
        unknown = opencode.finish(ActionResult(json.dumps(line), "", 0, 1), request(**options))
        assert (unknown.cost_usd, unknown.model_costs) == (None, None)
        assert unknown.uncounted == opencode.UNPRICED
    # No tokens used: nothing spent, counted as nothing.
    line["part"]["tokens"]["input"] = 0  # type: ignore[index]
    idle = opencode.finish(ActionResult(json.dumps(line), "", 0, 1), request(model="x/y"))
    assert (idle.cost_usd, idle.uncounted) == (0.0, None)


def test_an_api_error_is_the_error_and_its_limit_is_read_from_the_file(tmp_path: Path) -> None:
    done = opencode.finish(recorded("rate_limit", 1, tmp_path), request())
    assert done.error == (
        "opencode reported an error: APIError: Rate limit reached for requests (HTTP 429)"
    )
    limit = opencode.usage_limit(done)
    assert limit is not None
    assert (limit.kind, limit.message) == (
        RATE_LIMIT,
        done.error.removeprefix("opencode reported an error: "),
    )


def test_a_quota_error_is_a_usage_limit_also_without_an_output_file() -> None:
    done = opencode.finish(recorded("quota", 1), request())
    limit = opencode.usage_limit(done)
    assert limit is not None
    assert limit.kind == USAGE_LIMIT
    assert "exceeded your current quota" in limit.message


def test_a_finished_session_is_never_a_limit() -> None:
    assert opencode.usage_limit(opencode.finish(recorded("tool_fix", 0), request())) is None


def test_a_session_opencode_does_not_know_is_lost() -> None:
    done = opencode.finish(recorded("lost_session", 1), request())
    assert done.error == "opencode exited with status 1: Error: Session not found"
    assert opencode.lost_session(done)
    assert not opencode.lost_session(opencode.finish(recorded("quota", 1), request()))


def test_exit_zero_without_a_step_is_an_error_and_plain_output_is_kept() -> None:
    start = json.dumps({"type": "step_start", "sessionID": "s", "part": {}})
    done = opencode.finish(ActionResult(start, "", 0, 1), request())
    assert done.error == "opencode ended without finishing a step (no answer)"
    assert done.exit_code == 1
    plain = opencode.finish(ActionResult("not json", "", 0, 1), request())
    assert (plain.output, plain.error) == ("not json", None)


def test_a_runner_error_is_kept_and_the_partial_tokens_still_count(tmp_path: Path) -> None:
    result = recorded("tool_fix", -15, tmp_path)
    result.error = "timed out after 10s"
    done = opencode.finish(result, request(**MODEL))
    assert done.error == "timed out after 10s"
    assert done.usage is not None
    assert done.usage["input_tokens"] == 1100


def test_latest_step_is_the_last_tool_call_or_words(tmp_path: Path) -> None:
    path = tmp_path / "a.out"
    lines = (RECORDED / "tool_fix.stdout").read_text().splitlines()
    path.write_text("\n".join(lines[:4]) + "\n")
    assert opencode.latest_step(str(path)) == "bash: sed -i 's/41/42/' calc.py"
    path.write_text("\n".join(lines) + "\n")
    assert opencode.latest_step(str(path)) == "Fixed: ANSWER is 42 now."
    assert opencode.latest_step(str(tmp_path / "missing")) is None


def _machine(tmp_path: Path, env: dict[str, str], *, version: str = "1.18.33") -> Machine:
    return Machine(
        env,
        False,
        lambda name: f"/bin/{name}" if name == "opencode" else None,
        tmp_path,
        lambda program: version,
    )


def test_ready_wants_the_program_a_1x_version_and_a_key_or_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    no_path = Machine({}, False, lambda name: None, tmp_path, lambda p: None)
    assert agent_problem(opencode.SPEC, no_path) == (
        "opencode is not on PATH; install opencode: npm install -g opencode-ai"
    )
    assert opencode.ready(_machine(tmp_path, {}, version="0.9.1")) == (
        "opencode 0.9.1 is too old: ll-loop reads 1.x "
        "(install opencode: npm install -g opencode-ai)"
    )
    assert opencode.ready(_machine(tmp_path, {})) == (
        "opencode has no key or login: run `opencode auth login`, set a provider's key "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), or declare a provider in opencode.json"
    )
    assert opencode.ready(_machine(tmp_path, {"OPENAI_API_KEY": "k"})) is None
    auth = tmp_path / ".local" / "share" / "opencode" / "auth.json"
    auth.parent.mkdir(parents=True)
    auth.write_text("{}")  # an empty login file is no login
    assert opencode.ready(_machine(tmp_path, {})) is not None
    auth.write_text(json.dumps({"openai": {"type": "api", "key": "k"}}))
    assert opencode.ready(_machine(tmp_path, {})) is None


def test_a_project_config_counts_as_a_provider(tmp_path: Path) -> None:
    config = '{// ours\n "provider": {"local": {"options": {"baseURL": "http://x//y"}},},}'
    (tmp_path / "opencode.jsonc").write_text(config)
    assert opencode.logged_in({}, tmp_path / "home", tmp_path)
    assert not opencode.logged_in({}, tmp_path / "home", tmp_path / "elsewhere")


def test_a_config_that_declares_no_provider_is_no_login(tmp_path: Path) -> None:
    # What opencode 1.x writes itself on its first run: it is no provider.
    written = tmp_path / "home" / ".config" / "opencode" / "opencode.jsonc"
    written.parent.mkdir(parents=True)
    written.write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}')
    (tmp_path / "opencode.json").write_text('{"provider": {}}')
    assert not opencode.logged_in({}, tmp_path / "home", tmp_path)
    assert not opencode.logged_in({"OPENCODE_CONFIG_CONTENT": "{}"}, tmp_path / "home", tmp_path)
    content = '{"provider": {"p": {}}}'
    assert opencode.logged_in({"OPENCODE_CONFIG_CONTENT": content}, tmp_path / "home", tmp_path)


def test_the_spec_is_an_agent_chosen_by_agent_with_its_own_options_block() -> None:
    spec = KINDS["opencode"]
    assert spec is opencode.SPEC
    assert (spec.name, spec.options_key, spec.agent, spec.action_types) == (
        "opencode",
        "opencode",
        "opencode",
        (),
    )
    assert spec.program == ("opencode",)
    assert spec.sessions
    assert spec.judge is None
    assert "schema" in spec.no_judge
    assert spec.install_hint == "install opencode: npm install -g opencode-ai"
    assert spec.quiet_seconds == 120
    assert spec.readable is opencode.readable


def test_a_config_named_in_the_environment_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)  # reading it would wait for a writer for ever
    assert not opencode.logged_in({"OPENCODE_CONFIG": str(fifo)}, tmp_path / "home", tmp_path)


@pytest.mark.parametrize(
    ("tokens", "cost", "said"),
    [
        ({"input": "1" + "0" * 400}, "0", "input of a 401-digit number"),
        ({"input": "5", "cache": {"read": "Infinity"}}, "0", "cache.read of inf"),
        ({"input": "5"}, "1" + "0" * 400, "a cost of a 401-digit number"),
        ({"input": "5"}, "1e300", "a cost of $1e+300"),
    ],
)
def test_tokens_or_a_cost_no_step_can_have_are_an_error_never_counted(
    tokens: dict[str, object], cost: str, said: str
) -> None:
    """Skipped as no number, they read as a free step; priced, an overflow. Neither: an
    error of opencode's output, its spend neither counted nor said to be uncounted."""
    part = json.dumps({"tokens": tokens, "cost": "COST"}).replace('"COST"', cost)
    for value in ("1" + "0" * 400, "Infinity"):
        part = part.replace(f'"{value}"', value)
    line = f'{{"type": "step_finish", "sessionID": "s", "part": {part}}}'
    done = opencode.finish(ActionResult(line, "", 0, 1), request(model="openai/gpt-5"))
    assert (done.cost_usd, done.model_costs, done.uncounted) == (None, None, None)
    assert done.error is not None
    assert done.error.startswith(f"opencode reported {said}, outside any plausible range")
