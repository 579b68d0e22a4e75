"""The preflight: which agent CLIs a run calls, from which states, and what stops them here."""

from __future__ import annotations

import dataclasses
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from support.fake_claude import shell_claude
from support.llproc import ll_loop

from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopSetupError
from little_loops.fsm.runs.preflight import (
    CHECKS,
    Machine,
    agent_problem,
    needs,
    problems,
    require,
)
from little_loops.fsm.validate.loopfile import load_and_validate

INSTALL = "install Claude Code: npm install -g @anthropic-ai/claude-code"
ROOT = (
    "claude refuses --dangerously-skip-permissions as root; "
    "set IS_SANDBOX=1 in a sandbox, or run as a normal user"
)

FIXER = """\
    name: fixer
    initial: test
    states:
      test:
        action: "false"
        on_success: done
        on_failure: fix
      fix:
        action: Fix the failing test
        action_type: prompt
        next: test
      done:
        terminal: true
"""


def _loop(tmp_path: Path, text: str, name: str = "loop") -> FSMLoop:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return load_and_validate(path)


def _machine(*, on_path: bool = True, root: bool = False, **env: str) -> Machine:
    """A machine whose Claude Code is logged in (a key), unless *env* says otherwise."""
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", **env}
    return Machine(env, root, lambda program: f"/bin/{program}" if on_path else None)


def _states(fsm: FSMLoop) -> list[tuple[str, str | None, str]]:
    return [(u.state, u.subloop, u.what) for u in needs(fsm).get("claude", [])]


def test_claude_code_is_the_one_check_so_far() -> None:
    assert [check.program for check in CHECKS] == ["claude"]


def test_a_prompt_state_needs_claude_with_the_flags_it_runs_with(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, FIXER)
    (use,) = needs(fsm)["claude"]
    assert (use.state, use.subloop, use.what) == ("fix", None, "runs a Claude Code prompt")
    assert use.args == ("--dangerously-skip-permissions",)
    assert use.where == "state 'fix' runs a Claude Code prompt"


def test_a_loop_of_shell_steps_needs_nothing(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, FIXER.replace("action_type: prompt", "action_type: shell"))
    assert needs(fsm) == {}
    assert problems(fsm, machine=_machine(on_path=False, root=True)) == {}


def test_a_state_no_run_can_enter_is_not_counted(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, FIXER.replace("on_failure: fix", "on_failure: done"))
    assert needs(fsm) == {}
    assert [use.state for use in needs(fsm, start="fix")["claude"]] == ["fix"]  # a resume's


def test_the_judge_needs_claude_only_without_an_api_key_and_while_llm_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    judged = FIXER.replace(
        'action: "false"', "action: pytest\n        evaluate:\n          type: llm_structured"
    )
    judge = ("test", None, "is judged through Claude Code (llm_structured, no API key)")
    assert _states(_loop(tmp_path, judged)) == [judge, ("fix", None, "runs a Claude Code prompt")]
    # The judge asks Claude Code without --dangerously-skip-permissions.
    assert "--dangerously-skip-permissions" not in needs(_loop(tmp_path, judged))["claude"][0].args
    off = judged.replace("initial: test", "initial: test\n    llm:\n      enabled: false")
    assert [u[0] for u in _states(_loop(tmp_path, off))] == ["fix"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert [u[0] for u in _states(_loop(tmp_path, judged))] == ["fix"]
    chosen = judged.replace("initial: test", "initial: test\n    llm:\n      backend: claude")
    assert _states(_loop(tmp_path, chosen))[0] == (
        "test",
        None,
        "is judged through Claude Code (llm_structured, llm.backend: claude)",
    )


def test_a_sub_loops_claude_steps_count_and_are_named_with_it(tmp_path: Path) -> None:
    _loop(tmp_path, FIXER, "child")
    parent = _loop(
        tmp_path,
        """\
        name: parent
        initial: work
        states:
          work:
            loop: child
            on_success: done
            on_failure: done
          done:
            terminal: true
        """,
        "parent",
    )
    (use,) = needs(parent)["claude"]
    assert use.where == "state 'fix' of sub-loop 'fixer' runs a Claude Code prompt"
    message = problems(parent, machine=_machine(on_path=False))["claude"]
    assert message.startswith("state 'fix' of sub-loop 'fixer' runs a Claude Code prompt, but")


def test_claude_missing_from_path_names_the_state_and_the_install_command(
    tmp_path: Path,
) -> None:
    fsm = _loop(tmp_path, FIXER)
    assert problems(fsm, machine=_machine(on_path=False)) == {
        "claude": f"state 'fix' runs a Claude Code prompt, but claude is not on PATH; {INSTALL}"
    }
    with pytest.raises(LoopSetupError) as exc:
        require(fsm, machine=_machine(on_path=False))
    assert str(exc.value) == problems(fsm, machine=_machine(on_path=False))["claude"]
    assert problems(fsm, machine=_machine()) == {}


@pytest.mark.parametrize(
    ("claude", "refused"),
    [
        ("", True),  # --dangerously-skip-permissions, the default
        ("permission_mode: bypassPermissions", True),
        ("extra_args: [--allow-dangerously-skip-permissions]", True),
        ("extra_args: [--permission-mode=bypassPermissions]", True),
        ("permission_mode: acceptEdits", False),
    ],
)
def test_as_root_claude_refuses_the_flags_that_skip_permissions_unless_in_a_sandbox(
    tmp_path: Path, claude: str, refused: bool
) -> None:
    options = f"\n    claude:\n      {claude}" if claude else ""
    fsm = _loop(tmp_path, FIXER.replace("initial: test", "initial: test" + options))
    found = problems(fsm, machine=_machine(root=True))
    assert found == (
        {"claude": f"state 'fix' runs a Claude Code prompt as root: {ROOT}"} if refused else {}
    )
    assert problems(fsm, machine=_machine(root=True, IS_SANDBOX="1")) == {}
    assert problems(fsm, machine=_machine(root=True, CLAUDE_CODE_BUBBLEWRAP="1")) == {}
    # Claude Code 2.1 takes "1" only: IS_SANDBOX=yes is refused like no IS_SANDBOX.
    assert problems(fsm, machine=_machine(root=True, IS_SANDBOX="yes")) == found
    assert problems(fsm, machine=_machine(root=False)) == {}


def test_a_path_without_claude_is_a_problem_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin-without-claude"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    found = problems(_loop(tmp_path, FIXER))
    assert found["claude"].endswith(f"claude is not on PATH; {INSTALL}")


def test_a_claude_on_path_is_found_and_as_a_normal_user_or_in_a_sandbox_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell_claude(tmp_path, monkeypatch, "exit 0")
    monkeypatch.setenv("IS_SANDBOX", "1")
    assert problems(_loop(tmp_path, FIXER)) == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the tests run as root in CI")
def test_as_root_without_is_sandbox_a_claude_on_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell_claude(tmp_path, monkeypatch, "exit 0")
    monkeypatch.delenv("IS_SANDBOX", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_BUBBLEWRAP", raising=False)
    assert problems(_loop(tmp_path, FIXER)) == {
        "claude": f"state 'fix' runs a Claude Code prompt as root: {ROOT}"
    }


FALLBACK = """\
    name: fallback
    initial: mark
    agents:
      mine: {command: "echo answered"}
    states:
      mark:
        action: touch ran.txt
        next: fix
      fix:
        action: Fix it
        action_type: prompt
        agent: AGENT
        evaluate: {type: exit_code}
        next: done
      done:
        terminal: true
"""


def _project(tmp_path: Path, agent: str) -> Path:
    (tmp_path / ".loops").mkdir(parents=True)
    (tmp_path / ".loops" / "fallback.yaml").write_text(
        textwrap.dedent(FALLBACK).replace("AGENT", agent)
    )
    return tmp_path


def _no_claude_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has bash and coreutils but no `claude`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "touch", "echo", "cat", "env"):
        found = shutil.which(tool)
        if found is not None:
            (bin_dir / tool).symlink_to(found)
    return {**os.environ, "PATH": str(bin_dir)}


def test_a_missing_agent_cli_is_exit_2_and_nothing_runs(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "[claude]")
    env = _no_claude_path(tmp_path)
    run = ll_loop(root, "run", "fallback", env=env)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines() == [
        "ll-loop: error: state 'fix' runs a Claude Code prompt, but claude is not on PATH; "
        + INSTALL
    ]
    assert not (root / "ran.txt").exists()  # not even the shell step before it
    assert not (root / ".loops" / ".running").exists()  # no run file


def test_a_fallback_list_starts_while_one_of_its_agents_is_ready(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "[claude, mine]")
    run = ll_loop(root, "run", "fallback", env=_no_claude_path(tmp_path), timeout=60)
    assert run.stderr.splitlines()[0] == (
        f"ll-loop: warning: state 'fix' runs a Claude Code prompt, but claude is not on PATH; "
        f"{INSTALL} (claude is skipped: the next agent of the list runs)"
    )
    assert (root / "ran.txt").exists()


def test_agent_problem_asks_the_kinds_readiness_check() -> None:
    def not_logged_in(machine: Machine) -> str | None:
        return "no login: run tool login" if "TOOL_KEY" not in machine.env else None

    spec = dataclasses.replace(AGENTS["claude"], ready=not_logged_in)
    assert agent_problem(spec, _machine()) == "no login: run tool login"
    assert agent_problem(spec, _machine(TOOL_KEY="k")) is None
    assert agent_problem(spec, _machine(on_path=False)) == f"claude is not on PATH; {INSTALL}"


JUDGED_BY_CODEX = """\
    name: judged
    initial: check
    llm: {backend: codex}
    states:
      check:
        action: "true"
        evaluate: {type: llm_structured, prompt: "Did it pass?"}
        on_success: done
        on_failure: done
      done:
        terminal: true
"""


def test_a_judge_through_another_agent_needs_that_agent(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, JUDGED_BY_CODEX)
    uses = needs(fsm)
    assert [(u.state, u.what) for u in uses["codex"]] == [
        ("check", "is judged through Codex (llm_structured)")
    ]
    assert "claude" not in uses
    missing = problems(fsm, machine=_machine(on_path=False))
    assert missing["codex"].startswith(
        "state 'check' is judged through Codex (llm_structured), but codex is not on PATH"
    )
    # With the LLM off (`--no-llm`), nothing judges and nothing is needed.
    fsm.llm.enabled = False
    assert needs(fsm) == {}
