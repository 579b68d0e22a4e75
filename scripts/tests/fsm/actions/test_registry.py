"""The action kinds by name, which kind an action is, and the documented way to add one."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import REPO

import little_loops
from little_loops.fsm.actions import claude_code, registry, shell
from little_loops.fsm.actions.registry import (
    ACTION_TYPE_NAMES,
    BY_ACTION_TYPE,
    KINDS,
    kind_of,
    recorded,
)
from little_loops.fsm.definition.model.typed import ACTION_TYPES, APPROVAL
from little_loops.fsm.evaluators.registry import SPECS

DOC = REPO / "docs" / "architecture.md"


@pytest.mark.parametrize(
    ("action_type", "action", "kind"),
    [
        ("prompt", "Fix the bug", claude_code.SPEC),
        ("slash_command", "/fix", claude_code.SPEC),
        ("shell", "/usr/bin/true", shell.SPEC),
        (None, "/fix the bug", claude_code.SPEC),
        (None, "make test", shell.SPEC),
        (None, None, shell.SPEC),
        (APPROVAL, "/ship it?", shell.SPEC),  # a question is no action kind's
    ],
)
def test_which_kind_an_action_is(action_type: str | None, action: str | None, kind: object) -> None:
    assert kind_of(action_type, action) is kind


def test_the_action_types_are_the_kinds_then_the_state_kinds_in_the_documented_order() -> None:
    assert ACTION_TYPE_NAMES == ("prompt", "slash_command", "shell", "mcp_tool")
    assert (*ACTION_TYPE_NAMES, APPROVAL) == ACTION_TYPES
    assert APPROVAL not in BY_ACTION_TYPE


def test_each_kind_is_listed_by_its_name_and_its_defaults_exist() -> None:
    for name, spec in KINDS.items():
        assert spec.name == name
        assert spec.default_evaluator in SPECS
        assert spec.action_types or spec.agent, name  # an agent other than claude: none


def test_a_recorded_step_names_its_kind_by_its_first_action_type() -> None:
    assert recorded("prompt") is claude_code.SPEC
    assert recorded("shell") is shell.SPEC
    assert recorded("loop") is None
    assert recorded(None) is None
    assert registry.get("claude") is claude_code.SPEC


# -- the worked example of docs/architecture.md --------------------------------------


def _doc_block(marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n *```python\n(.*?)\n *```", DOC.read_text(), re.S)
    assert match is not None, f"docs/architecture.md has no {marker} block"
    return textwrap.dedent(match.group(1))


SHELL_ENTRY = '        Entry("shell", "shell", ("shell",), interpolation=Interpolation.SHELL),\n'


def _with_entry(source: str, entry: str) -> str:
    """registry.py's *source* with *entry* (one line of ENTRIES) after the shell kind's."""
    assert SHELL_ENTRY in source
    return source.replace(SHELL_ENTRY, f"{SHELL_ENTRY}{entry}\n")


def _with_echo_kind(copy: Path) -> None:
    """The package at *copy* with the doc's echo module and registry entry, nothing else."""
    actions = copy / "little_loops" / "fsm" / "actions"
    (actions / "echo.py").write_text(_doc_block("echo-kind") + "\n")
    (entry,) = (line for line in _doc_block("echo-registry").splitlines() if line)
    source = _with_entry((actions / "registry.py").read_text(), "        " + entry.strip())
    (actions / "registry.py").write_text(source)


LOOP = """\
name: greet
initial: say
context:
  who: loop
states:
  say:
    action: "hello ${context.who}"
    action_type: echo
    capture: said
    next: check
  check:
    action: test "${captured.said.output}" = "hello loop"
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""


def test_the_documented_echo_kind_is_one_module_and_one_registry_entry(tmp_path: Path) -> None:
    copy = tmp_path / "package"
    shutil.copytree(
        Path(little_loops.__file__).parent,
        copy / "little_loops",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    _with_echo_kind(copy)
    project = tmp_path / "project"
    (project / ".loops").mkdir(parents=True)
    (project / ".loops" / "greet.yaml").write_text(LOOP)
    env = {**os.environ, "PYTHONPATH": str(copy), "NO_COLOR": "1"}

    def ll_loop(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "little_loops.cli", *args]
        return subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=60
        )

    checked = ll_loop("validate", "greet")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    plan = ll_loop("run", "greet", "--dry-run")
    assert "action (echo): hello ${context.who}" in plan.stdout, plan.stdout + plan.stderr
    ran = ll_loop("run", "greet")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "hello loop" in ran.stderr
    # The copy was the one imported: the installed package has no echo kind.
    assert "echo" not in KINDS


# -- a kind with its own options block: one module and one registry line, nothing else -----

ECHOOPTS = """\
from __future__ import annotations

from collections.abc import Sequence

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.spec import ActionKindSpec, KindOption
from little_loops.fsm.values.value_checks import string


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    prefix = (request.options or {}).get("prefix", "")
    return [*program, f"{prefix}{request.action}"]


SPEC = ActionKindSpec(
    name="echoopts",
    summary="the action's text printed after a prefix",
    action_types=("echoopts",),
    argv=argv,
    program=("printf", "%s"),
    options_key="echoopts",
    options={"prefix": KindOption(None, string, "Text printed before the action.")},
    state_keys=("echoopts",),
    options_doc="Echoopts options.",
    loop_options_doc="Echoopts options of every echoopts state.",
    state_options_doc="Echoopts options of this state, over the loop's.",
)
"""

OPTIONS_LOOP = """\
name: greet
initial: say
echoopts:
  prefix: "loop: "
states:
  say:
    action: "hello"
    action_type: echoopts
    echoopts: {prefix: "hi, "}
    capture: said
    next: check
  check:
    action: test "${captured.said.output}" = "hi, hello"
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""


def test_a_kind_with_its_own_options_block_needs_no_edit_outside_the_kinds(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "package"
    shutil.copytree(
        Path(little_loops.__file__).parent,
        copy / "little_loops",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    actions = copy / "little_loops" / "fsm" / "actions"
    (actions / "echoopts.py").write_text(ECHOOPTS)
    entry = 'Entry("echoopts", "echoopts", ("echoopts",), "echoopts", ("echoopts",)),'
    source = _with_entry((actions / "registry.py").read_text(), f"        {entry}")
    (actions / "registry.py").write_text(source)
    project = tmp_path / "project"
    (project / ".loops").mkdir(parents=True)
    (project / ".loops" / "greet.yaml").write_text(OPTIONS_LOOP)
    (project / ".loops" / "typo.yaml").write_text(
        OPTIONS_LOOP.replace("echoopts: {prefix:", "echoopts: {prefx:").replace(
            "name: greet", "name: typo"
        )
    )
    (project / ".loops" / "elsewhere.yaml").write_text(
        OPTIONS_LOOP.replace("action_type: echoopts", "action_type: shell").replace(
            "name: greet", "name: elsewhere"
        )
    )
    env = {**os.environ, "PYTHONPATH": str(copy), "NO_COLOR": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    checked = run("-m", "little_loops.cli", "validate", "greet")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    typo = run("-m", "little_loops.cli", "validate", "typo")
    assert typo.returncode != 0
    assert (
        "loop 'typo' > states > say > echoopts > prefx: unknown key (did you mean prefix?)"
        in typo.stdout + typo.stderr
    ), typo.stdout + typo.stderr
    # The block is a key of its kind's states only, as `claude:` is.
    elsewhere = run("-m", "little_loops.cli", "validate", "elsewhere")
    assert elsewhere.returncode != 0
    assert "say > echoopts: only " in elsewhere.stdout + elsewhere.stderr
    plan = run("-m", "little_loops.cli", "run", "greet", "--dry-run")
    assert "echoopts: prefix=hi, " in plan.stdout, plan.stdout + plan.stderr
    # The state's option reached the kind's command line: it printed "hi, hello".
    ran = run("-m", "little_loops.cli", "run", "greet")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The JSON Schema of the copy describes the block where it is a key.
    schema = run(
        "-c",
        "import json; from little_loops.fsm.validate.json_schema import build; "
        "print(json.dumps(build()))",
    )
    defs = json.loads(schema.stdout)["$defs"]
    assert defs["echooptsOptions"]["properties"]["prefix"]["description"] == (
        "Text printed before the action."
    )
    assert "echoopts" in defs["stateConfig"]["properties"]
    assert "echoopts" in defs["fsmLoop"]["properties"]
    assert "echoopts" not in KINDS


def test_the_agents_are_the_kinds_with_an_agent_and_claude_is_the_default() -> None:
    from little_loops.fsm.actions import registry

    assert "claude" in registry.AGENTS
    assert all(spec.agent is not None for spec in registry.AGENTS.values())
    assert "shell" not in registry.AGENTS
    assert registry.DEFAULT_AGENT is registry.KINDS["claude"]
    assert registry.is_agent_action("prompt", "x")
    assert registry.is_agent_action(None, "/review")
    assert not registry.is_agent_action(None, "make")
    assert not registry.is_agent_action("approval", "Merge?")
    assert registry.can_judge(registry.DEFAULT_AGENT)
    assert not registry.can_judge(registry.KINDS["shell"])


def test_an_agent_serving_no_action_type_is_recorded_as_a_prompt() -> None:
    import dataclasses

    from little_loops.fsm.actions import registry

    other = dataclasses.replace(registry.DEFAULT_AGENT, name="other", action_types=())
    assert registry.recorded_type(other) == "prompt"
    assert registry.recorded_type(registry.KINDS["shell"]) == "shell"


def test_a_recorded_step_s_kind_is_its_agent_else_its_action_type() -> None:
    from little_loops.fsm.actions import claude_code, shell
    from little_loops.fsm.actions.registry import recorded

    assert recorded("prompt", "claude") is claude_code.SPEC
    assert recorded("prompt") is claude_code.SPEC  # a log from before agents were recorded
    assert recorded("shell") is shell.SPEC
    assert recorded("prompt", "mine") is None  # a loop's own agent: plain text, no reader


def test_each_entry_says_of_its_kind_what_the_kinds_spec_says() -> None:
    # What validation reads before a kind's module is imported must be what its SPEC says.
    for name, entry in registry.ENTRIES.items():
        spec = importlib.import_module(f"little_loops.fsm.actions.{entry.module}").SPEC
        assert spec.name == name
        assert spec.action_types == entry.action_types
        assert spec.options_key == entry.options_key
        assert spec.state_keys == entry.state_keys
        assert (spec.agent is not None) == entry.agent
        assert spec.interpolation is entry.interpolation
        assert spec.default_evaluator == entry.default_evaluator
        assert registry.KINDS[name] is spec
    assert registry.SLASH_KIND is registry.DEFAULT_AGENT is registry.KINDS["claude"]


def test_looking_up_one_kind_imports_only_its_module() -> None:
    probe = (
        "import sys\n"
        "from little_loops.fsm.actions import registry\n"
        "assert 'codex' in registry.AGENTS and list(registry.KINDS)[0] == 'claude'\n"
        "before = {m for m in sys.modules if m.startswith('little_loops.fsm.actions.')}\n"
        "registry.AGENTS['codex']\n"
        "after = {m for m in sys.modules if m.startswith('little_loops.fsm.actions.')}\n"
        "print(' '.join(sorted(after - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "little_loops.fsm.actions.codex" in out
    assert not {
        f"little_loops.fsm.actions.{m}" for m in ("claude_code", "gemini", "opencode")
    } & set(out)
