"""`ll-loop run NAME "free text"`: input_key and required_inputs, with real bash."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.llproc import ll_loop

LOOP = """\
name: ask
input_key: topic
required_inputs: [topic]
context:
  topic: ""
  depth: 1
initial: say
states:
  say:
    action: 'echo "topic=${context.topic} depth=${context.depth}"'
    next: done
  done:
    terminal: true
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "ask.yaml").write_text(LOOP)
    (tmp_path / ".loops" / "plain.yaml").write_text(
        LOOP.replace("name: ask", "name: plain")
        .replace("input_key: topic\n", "")
        .replace("required_inputs: [topic]\n", "")
        .replace("context.topic", "context.input")
    )
    return tmp_path


def said(run: subprocess.CompletedProcess[str]) -> str:
    """The action's output line (the progress shows the command first, then its output)."""
    rows = [row.strip() for row in run.stderr.splitlines()]
    return next((row for row in rows if row.startswith("topic=")), run.stderr)


def test_a_free_value_goes_to_the_input_key_as_data(project: Path) -> None:
    ran = ll_loop(project, "run", "ask", "rust; echo $HOME ${env.HOME}", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert said(ran) == "topic=rust; echo $HOME ${env.HOME} depth=1"


def test_a_json_object_fills_the_context_keys_it_names(project: Path) -> None:
    ran = ll_loop(project, "run", "ask", '{"topic": "go", "depth": 3}', "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert said(ran) == "topic=go depth=3"


def test_the_default_input_key_is_input(project: Path) -> None:
    assert ll_loop(project, "validate", "plain").returncode == 0
    ran = ll_loop(project, "run", "plain", "hello", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert said(ran) == "topic=hello depth=1"


def test_a_missing_required_input_is_one_line_and_runs_nothing(project: Path) -> None:
    ran = ll_loop(project, "run", "ask")
    assert ran.returncode != 0
    assert ran.stderr.strip() == (
        "ll-loop: error: loop 'ask' requires input 'topic' but none was provided "
        "(give it: ll-loop run ask VALUE)"
    )
    assert not (project / ".loops" / ".running" / "ask.events.jsonl").exists()
    empty = ll_loop(project, "run", "ask", "")
    assert "requires input 'topic'" in empty.stderr


def test_set_gives_the_input_too_and_two_values_are_refused(project: Path) -> None:
    ran = ll_loop(project, "run", "ask", "--set", "topic=named", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert said(ran) == "topic=named depth=1"
    two = ll_loop(project, "run", "ask", "a", "b")
    assert two.returncode != 0
    assert "takes one free-form value (context 'topic'), got 2" in two.stderr


def test_the_input_hash_and_the_gate_defaults_are_in_the_context(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "gate.yaml").write_text(
        "name: gate\ninitial: a\nstates:\n  a:\n"
        "    action: 'echo \"topic=${context.input} ${context.input_hash} "
        "${context.readiness_threshold}/${context.outcome_threshold}\"'\n"
        "    next: done\n  done:\n    terminal: true\n"
    )
    assert ll_loop(tmp_path, "validate", "gate").returncode == 0
    ran = ll_loop(tmp_path, "run", "gate", "abc", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert said(ran) == "topic=abc ba7816bf8f01 85/65"
