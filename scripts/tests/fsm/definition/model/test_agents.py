"""`agent:` resolved (names, lists, references) and `.loops/agents.yaml` seen by every loop."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.actions.registry import AGENTS, DEFAULT_AGENT
from little_loops.fsm.definition.model.agents import filled_names, project_agents_file
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.validate.loopfile import load_and_validate


def _loop(tmp_path: Path, text: str, name: str = "demo") -> FSMLoop:
    (tmp_path / ".loops").mkdir(exist_ok=True)
    path = tmp_path / ".loops" / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return load_and_validate(path)


TWO_AGENTS = """\
    name: demo
    initial: ask
    agent: ${context.agent}
    parameters:
      agent: {type: string, default: mine}
    agents:
      mine: {command: "echo mine"}
      other: {command: "echo other", prompt: stdin}
    states:
      ask: {action: Ask, action_type: prompt, next: check}
      check: {action: "/check", agent: [other, claude], next: run}
      run: {action: make, next: done}
      done: {terminal: true}
"""


def test_agents_for_gives_the_state_list_the_loop_default_or_claude(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, TWO_AGENTS)
    assert [k.name for k in fsm.agents_for(fsm.states["ask"])] == ["mine"]
    assert [k.name for k in fsm.agents_for(fsm.states["check"])] == ["other", "claude"]
    assert fsm.agents_for(fsm.states["run"]) == []
    assert fsm.agents_for(fsm.states["done"]) == []
    assert fsm.kind_for(fsm.states["run"]).name == "shell"
    assert fsm.kind_for(fsm.states["check"]).name == "other"
    # The state's own method keeps its old meaning for scripts: Claude for a prompt.
    assert fsm.states["ask"].action_kind() is DEFAULT_AGENT
    fsm.agent = None
    assert fsm.agents_for(fsm.states["ask"]) == [AGENTS["claude"]]


def test_a_parameter_picks_the_agent_and_a_list_value_is_a_fallback_list(tmp_path: Path) -> None:
    fsm = _loop(tmp_path, TWO_AGENTS)
    fsm.context = {"agent": "other,claude"}
    assert [k.name for k in fsm.agents_for(fsm.states["ask"])] == ["other", "claude"]
    fsm.context = {"agent": ["claude", "mine"]}
    assert [k.name for k in fsm.agents_for(fsm.states["ask"])] == ["claude", "mine"]
    fsm.context = {"agent": "nope"}
    with pytest.raises(LoopDefinitionError, match=r"unknown agent 'nope' \(agents: claude"):
        fsm.agents_for(fsm.states["ask"])


def test_filled_names() -> None:
    assert filled_names("claude", {}) == ["claude"]
    assert filled_names(["a", "${context.x}", "a"], {"x": "b, c"}) == ["a", "b", "c"]
    assert filled_names(None, {}) == []


def test_the_project_file_is_beside_the_loop_file(tmp_path: Path) -> None:
    assert (
        project_agents_file(tmp_path / ".loops" / "x.yaml") == tmp_path / ".loops" / "agents.yaml"
    )


PROJECT_LOOP = """\
name: {name}
initial: ask
agent: shared
states:
  ask: {{action: "Say {name}", action_type: prompt, evaluate: {{type: exit_code}}, next: done}}
  done: {{terminal: true}}
"""


def test_the_project_agents_file_is_seen_by_two_loops_and_a_loop_entry_wins(
    tmp_path: Path,
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "agents.yaml").write_text(
        "agents:\n  shared:\n    command: 'f() { echo \"project agent: $1\" >> said.txt; }; f'\n"
    )
    for name in ("one", "two"):
        (tmp_path / ".loops" / f"{name}.yaml").write_text(PROJECT_LOOP.format(name=name))
    (tmp_path / ".loops" / "three.yaml").write_text(
        PROJECT_LOOP.format(name="three")
        + "agents:\n  shared:\n    command: 'f() { echo \"own agent: $1\" >> said.txt; }; f'\n"
    )
    for name in ("one", "two", "three"):
        run = ll_loop(tmp_path, "run", name, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "said.txt").read_text().splitlines() == [
        "project agent: Say one",
        "project agent: Say two",
        "own agent: Say three",
    ]


def test_the_project_agents_file_is_no_loop(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "agents.yaml").write_text("agents:\n  mine: {command: x}\n")
    (tmp_path / ".loops" / "one.yaml").write_text(PROJECT_LOOP.format(name="one"))
    listed = ll_loop(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    assert "one" in listed.stdout
    assert "agents" not in listed.stdout


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_fifo_or_a_device_as_the_project_agents_file_is_one_line_not_a_hang(
    tmp_path: Path, command: str
) -> None:
    import os

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "one.yaml").write_text(PROJECT_LOOP.format(name="one"))
    agents = tmp_path / ".loops" / "agents.yaml"
    os.mkfifo(agents)  # nobody writes to it: reading it waits for ever
    done = ll_loop(tmp_path, command, "one", timeout=30)
    assert done.returncode != 0
    assert "agents.yaml" in done.stdout + done.stderr
    assert "not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    agents.unlink()
    agents.symlink_to("/dev/zero")
    done = ll_loop(tmp_path, command, "one", timeout=30)
    assert done.returncode != 0
    assert "not a regular file" in done.stdout + done.stderr


@pytest.mark.parametrize("value", ["", " , "])
def test_an_agent_reference_filled_with_no_name_stops_the_run_not_runs_claude(
    tmp_path: Path, value: str
) -> None:
    # `--set agent=` must not quietly run the default agent (Claude Code, and its bill).
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "pick.yaml").write_text(
        textwrap.dedent(TWO_AGENTS).replace("name: demo", "name: pick")
    )
    values = tmp_path / "values.json"
    values.write_text(f'{{"agent": "{value}"}}')
    run = ll_loop(tmp_path, "run", "pick", "--context-file", str(values), timeout=30)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "names no agent" in lines[0]
    assert "claude" not in lines[0]
    assert not (tmp_path / ".loops" / ".running" / "pick.events.jsonl").exists()
