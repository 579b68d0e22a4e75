"""The Codex kind: its command line, readiness, judge and spec."""

from __future__ import annotations

import json
from pathlib import Path

from little_loops.fsm.actions import codex, registry
from little_loops.fsm.actions.codex import (
    BYPASS_FLAG,
    SPEC,
    argv,
    judge_argv,
    judge_verdict,
    ready,
    strict_schema,
)
from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.request import ActionRequest, ActionResult


def request(action: str, resume: str | None = None, **options: object) -> ActionRequest:
    return ActionRequest(action, 60, "codex", options=options, resume_session=resume)


def test_a_prompt_is_the_last_argument_after_the_options_end() -> None:
    assert argv(request("--version please", model="o3"), ["codex"]) == [
        "codex",
        "exec",
        BYPASS_FLAG,
        "--model",
        "o3",
        "--json",
        "--skip-git-repo-check",
        "--",
        "--version please",
    ]


def test_session_continue_resumes_the_thread() -> None:
    line = argv(request("again", resume="t-1", sandbox="workspace-write"), ["/bin/codex"])
    assert line == [
        "/bin/codex",
        "exec",
        "resume",
        "-c",
        'sandbox_mode="workspace-write"',
        "--json",
        "--skip-git-repo-check",
        "--",
        "t-1",
        "again",
    ]


def machine(tmp_path: Path, env: dict[str, str], version: str | None) -> Machine:
    return Machine(env, False, lambda name: None, tmp_path, lambda program: version)


def test_ready_wants_a_supported_version_and_a_key_or_login(tmp_path: Path) -> None:
    assert ready(machine(tmp_path, {"OPENAI_API_KEY": "k"}, "codex-cli 0.171.0")) is None
    assert ready(machine(tmp_path, {"CODEX_API_KEY": "k"}, "codex-cli 0.172.3")) is None
    assert ready(machine(tmp_path, {}, "codex-cli 0.171.0")) == (
        "codex has no key and no login: log in to Codex: run `codex login`, or set OPENAI_API_KEY"
    )
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert ready(machine(tmp_path, {}, "codex-cli 0.171.0")) is None
    assert ready(machine(tmp_path, {}, "codex-cli 0.98.0")) == (
        "codex 0.98.0 is older than 0.171.0: npm install -g @openai/codex"
    )
    assert ready(machine(tmp_path, {}, None)) == (
        "codex --version does not run: install Codex: npm install -g @openai/codex"
    )


def test_the_judge_asks_read_only_with_a_closed_schema(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["verdict"],
    }
    strict = strict_schema(schema)
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["verdict", "reason"]
    assert "additionalProperties" not in schema  # the loop's schema is left as it is
    line = judge_argv("-judge", tmp_path / "s.json", {}, ["codex"])
    assert line[:2] == ["codex", "exec"]
    assert line[-2:] == ["--", "-judge"]
    assert "--output-schema" in line
    assert "--ephemeral" in line
    assert "read-only" in line
    assert "--model" in judge_argv("q", tmp_path / "s.json", {"model": "o3"}, ["codex"])
    answer = ActionResult(json.dumps({"verdict": "success"}), "", 0, 1)
    assert judge_verdict(answer) == {"verdict": "success"}
    assert judge_verdict(ActionResult("not json", "", 0, 1)) is None


def test_the_spec_is_an_agent_chosen_by_agent_with_its_options_block() -> None:
    assert registry.KINDS["codex"] is SPEC
    assert registry.AGENTS["codex"] is SPEC
    assert registry.BY_OPTIONS_KEY["codex"] is SPEC
    assert SPEC.action_types == ()
    assert (SPEC.agent, SPEC.program, SPEC.sessions) == ("Codex", ("codex",), True)
    assert SPEC.judge is not None
    assert SPEC.judge.own_model
    assert registry.can_judge(SPEC)
    assert SPEC.install_hint == "install Codex: npm install -g @openai/codex"
    assert SPEC.quiet_seconds == codex.CODEX_QUIET_SECONDS
