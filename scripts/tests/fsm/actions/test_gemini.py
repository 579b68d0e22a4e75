"""The Gemini CLI kind: its command line, what it reads from a session, limits and readiness.

The outputs in `test_gemini_recorded/` were printed by the real Gemini CLI 0.61.0 against
the scripted API (support/fake_gemini.py): stdout as it was, stderr without the stack
trace lines (`    at ...`) and with the temporary paths shortened.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from little_loops.fsm.actions import gemini
from little_loops.fsm.actions.gemini import (
    DEFAULT_APPROVAL_MODE,
    GEMINI_OPTIONS,
    SPEC,
    argv,
    finish,
    gemini_flags,
    lost_session,
    ready,
    usage_limit,
)
from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.ratelimit import OVERLOADED, RATE_LIMIT, USAGE_LIMIT
from little_loops.fsm.actions.registry import KINDS
from little_loops.fsm.actions.request import ActionRequest, ActionResult

RECORDED = Path(__file__).parent / "test_gemini_recorded"


def recorded(name: str, exit_code: int = 0, *, with_file: bool = False) -> ActionResult:
    """The result the runner hands `finish` for the recorded run *name*."""
    out = RECORDED / f"{name}.out"
    err = RECORDED / f"{name}.err"
    return ActionResult(
        output=out.read_text() if out.exists() else "",
        stderr=err.read_text() if err.exists() else "",
        exit_code=exit_code,
        duration_ms=10,
        output_path=str(out) if with_file else None,
    )


def request(action: str = "Fix it", **options: object) -> ActionRequest:
    return ActionRequest(action, 60, "gemini", options=options)


# --- the command line ---------------------------------------------------------------


def test_the_command_line_asks_for_stream_json_without_approvals_and_the_prompt_last() -> None:
    assert argv(request(), ["gemini"]) == [
        "gemini",
        "--approval-mode",
        "yolo",
        "--output-format",
        "stream-json",
        "--prompt=Fix it",
    ]
    assert DEFAULT_APPROVAL_MODE == "yolo"


def test_a_prompt_that_looks_like_a_flag_stays_one_argument() -> None:
    line = argv(request("--version\n-m x"), ["gemini"])
    assert line[-1] == "--prompt=--version\n-m x"
    assert "--version" not in line


def test_each_option_becomes_its_flag_and_resume_names_the_session() -> None:
    options = {
        "model": "gemini-2.5-flash",
        "approval_mode": "auto_edit",
        "sandbox": True,
        "include_directories": ["../lib", "/a,b"],
        "allowed_tools": ["run_shell_command(git status)"],
        "policy": ["p.toml"],
        "extensions": ["none"],
        "extra_args": ["--debug"],
    }
    req = dataclasses.replace(request(**options), resume_session="abc-123")
    assert argv(req, ["gemini"]) == [
        "gemini",
        "--approval-mode",
        "auto_edit",
        "--model",
        "gemini-2.5-flash",
        "--include-directories",
        "../lib",
        "--include-directories",
        "/a,b",
        "--allowed-tools",
        "run_shell_command(git status)",
        "--policy",
        "p.toml",
        "--extensions",
        "none",
        "--sandbox",
        "--debug",
        "--output-format",
        "stream-json",
        "--resume",
        "abc-123",
        "--prompt=Fix it",
    ]
    assert gemini_flags({"sandbox": False})[-1] == "--sandbox=false"


def test_every_option_has_a_check_and_a_doc() -> None:
    for name, option in GEMINI_OPTIONS.items():
        assert option.doc.endswith("."), name
        assert option.check is not None
    assert option_names() == [
        "model",
        "approval_mode",
        "sandbox",
        "include_directories",
        "allowed_tools",
        "policy",
        "extensions",
        "extra_args",
    ]


def option_names() -> list[str]:
    return list(GEMINI_OPTIONS)


# --- what a session said ----------------------------------------------------------------


@pytest.mark.parametrize("with_file", [False, True])
def test_a_finished_session_gives_its_answer_tokens_cost_session_and_tool_calls(
    with_file: bool,
) -> None:
    result = finish(recorded("tool", with_file=with_file), request())
    assert result.error is None
    assert result.exit_code == 0
    assert result.output == "I will check.\nFixed the constant."
    assert result.session_id == "b0b8710e-94fe-4b65-9f01-986f950cd214"
    # 2200 prompt tokens of which 400 cached; 30 answer + 30 thinking (total - prompt).
    assert result.usage == {
        "input_tokens": 1800,
        "output_tokens": 60,
        "cache_read_input_tokens": 400,
    }
    expected = (1800 * 0.30 + 400 * 0.30 * 0.1 + 60 * 2.50) / 1_000_000
    assert result.cost_usd == pytest.approx(expected)
    assert result.model_costs == {"gemini-2.5-flash": pytest.approx(expected)}
    assert result.tool_calls == [
        '→ run_shell_command {"command": "printf \'one\\\\ntwo\\\\n\'; exit 3", "description": '
        '"Show two lines"}',
        "← one (+1 lines)",
    ]


def test_a_quota_error_becomes_the_error_and_its_limit() -> None:
    result = finish(recorded("daily", 1), request())
    assert result.error == (
        "gemini reported an error: [API Error: You have exhausted your daily quota on this model.]"
    )
    assert result.output == ""
    assert result.usage == {"input_tokens": 0, "output_tokens": 0}
    limit = usage_limit(result)
    assert limit is not None
    assert limit.kind == USAGE_LIMIT
    assert limit.resets_at is None


def test_a_rate_limit_resets_when_the_api_said_to_retry() -> None:
    result = finish(recorded("minute", 1), request())
    limit = usage_limit(result, now=1000.0)
    assert limit is not None
    assert limit.kind == RATE_LIMIT
    assert limit.resets_at == 1030.0
    assert limit.message.startswith("[API Error: You exceeded your current quota")


def test_an_overloaded_model_is_an_overload() -> None:
    limit = usage_limit(finish(recorded("overloaded", 1), request()))
    assert limit is not None
    assert limit.kind == OVERLOADED


def test_a_finished_session_or_another_error_is_no_limit() -> None:
    assert usage_limit(finish(recorded("tool"), request())) is None
    assert usage_limit(finish(recorded("lost", 42), request())) is None


def test_a_session_it_cannot_resume_is_lost_and_says_why() -> None:
    result = finish(recorded("lost", 42), request())
    assert lost_session(result)
    assert result.error == (
        "gemini exited with status 42: Error resuming session: Invalid session identifier "
        '"0000dead-7ec5-492f-a58b-70bdcee1b798".'
    )
    assert not lost_session(finish(recorded("tool"), request()))


def test_an_untrusted_folder_says_how_to_trust_it() -> None:
    result = finish(recorded("untrusted", 55), request())
    assert result.error == gemini.UNTRUSTED_ERROR
    assert usage_limit(result) is None


def test_output_that_is_not_stream_json_is_kept_and_a_silent_exit_zero_did_not_finish() -> None:
    plain = ActionResult("just text\n", "", 0, 5)
    assert finish(plain, request()).output == "just text\n"
    started = RECORDED.joinpath("tool.out").read_text().splitlines()[:3]
    cut = finish(ActionResult("\n".join(started), "", 0, 5), request())
    assert cut.error == "gemini ended without its final report (the session did not finish)"
    assert cut.exit_code == 1
    assert cut.output == "I will check."
    crashed = finish(ActionResult("", "Warning: 256-color x\nboom\n", 3, 5), request())
    assert crashed.error == "gemini exited with status 3: boom"


# --- readiness ------------------------------------------------------------------------------


def machine(
    tmp_path: Path,
    env: dict[str, str] | None = None,
    version: str = "0.61.0",
    *,
    trusted: bool = True,
    cwd: Path | None = None,
    args: tuple[str, ...] = (),
) -> Machine:
    """A machine with *tmp_path* as home; the folder trusted by the environment (unless
    not *trusted*)."""
    given = {"GEMINI_CLI_TRUST_WORKSPACE": "true"} if trusted else {}
    return Machine(
        {**given, **(env or {})},
        False,
        lambda name: f"/bin/{name}",
        tmp_path,
        lambda program: version,
        cwd or tmp_path,
        args,
    )


def test_an_untrusted_folder_is_not_ready_unless_a_rule_or_flag_trusts_it(tmp_path: Path) -> None:
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    key = {"GEMINI_API_KEY": "k"}
    assert ready(machine(tmp_path, key, trusted=False, cwd=project)) == gemini.UNTRUSTED_ERROR
    assert "\x1b" not in gemini.UNTRUSTED_ERROR
    assert ready(machine(tmp_path, key, trusted=False, cwd=project, args=("--skip-trust",))) is None
    refused = {**key, "GEMINI_CLI_TRUST_WORKSPACE": "false"}
    assert ready(machine(tmp_path, refused, trusted=False, cwd=project)) == gemini.UNTRUSTED_ERROR
    rules = tmp_path / ".gemini" / "trustedFolders.json"
    rules.parent.mkdir(parents=True)
    rules.write_text(json.dumps({str(project / "x"): "TRUST_PARENT"}))
    assert ready(machine(tmp_path, key, trusted=False, cwd=project)) is None
    # The longest rule that holds the folder wins.
    rules.write_text(
        json.dumps({str(tmp_path / "work"): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"})
    )
    assert ready(machine(tmp_path, key, trusted=False, cwd=project)) == gemini.UNTRUSTED_ERROR
    rules.write_text(json.dumps({str(tmp_path / "work"): "TRUST_FOLDER"}))
    assert ready(machine(tmp_path, key, trusted=False, cwd=project)) is None
    settings = tmp_path / ".gemini" / "settings.json"
    rules.unlink()
    settings.write_text('{"security": {"folderTrust": {"enabled": false}}}')
    assert ready(machine(tmp_path, key, trusted=False, cwd=project)) is None


def test_ready_with_a_key_in_the_environment(tmp_path: Path) -> None:
    assert ready(machine(tmp_path, {"GEMINI_API_KEY": "k"})) is None
    assert ready(machine(tmp_path, {"GOOGLE_GENAI_USE_VERTEXAI": "true"})) is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".gemini/oauth_creds.json", "{}"),
        (".gemini/.env", "export GEMINI_API_KEY=abc\n"),
        (".gemini/settings.json", '{"security": {"auth": {"selectedType": "oauth-personal"}}}'),
    ],
)
def test_ready_with_a_login_or_key_in_its_home(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    assert ready(machine(tmp_path)) is None


def test_not_ready_without_key_or_login_or_when_too_old(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OTHER=1\nGEMINI_API_KEY=\n")
    assert ready(machine(tmp_path)) == (
        "gemini has no API key or login: set GEMINI_API_KEY (a key from "
        "https://aistudio.google.com/apikey), or run gemini once and choose Login with Google"
    )
    old = ready(machine(tmp_path, {"GEMINI_API_KEY": "k"}, version="0.9.1"))
    assert old == (
        "gemini 0.9.1 is too old (ll-loop needs 0.30.0 or newer): "
        "npm install -g @google/gemini-cli@latest"
    )


# --- the spec -----------------------------------------------------------------------------


def test_the_spec_is_the_gemini_agent_with_no_action_type_and_no_judge() -> None:
    assert KINDS["gemini"] is SPEC
    assert (SPEC.name, SPEC.options_key, SPEC.agent) == ("gemini", "gemini", "Gemini")
    assert SPEC.action_types == ()
    assert SPEC.program == ("gemini",)
    assert SPEC.sessions
    assert SPEC.judge is None
    assert "schema" in SPEC.no_judge
    assert SPEC.install_hint == "install Gemini CLI: npm install -g @google/gemini-cli"
    assert SPEC.ready is gemini.ready
    assert SPEC.quiet_seconds == 120
