"""Metadata keys (description, category, labels, visibility, commands) and the input keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.definition.model.metadata import (
    command_list,
    first_line,
    listed,
    metadata_of,
    reads_context,
    runner_values,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.validate.loopfile import check_document

LOOP = """\
name: described
description: |
  Checks the build.

  Then stops.
category: gate
labels: [ci, fast]
visibility: internal
commands:
  - cmd: ll-loop run described
    comment: run it
input_key: target
required_inputs: [target]
partial_route_ok: true
initial: build
states:
  build:
    description: runs the build
    action: "true"
    next: done
  done:
    terminal: true
"""


def test_the_metadata_is_kept_in_the_model_and_written_back() -> None:
    report = check_document(load_text(LOOP))
    assert report.valid, report.problems()
    fsm = report.fsm
    assert fsm is not None
    assert (fsm.category, fsm.labels, fsm.visibility) == ("gate", ["ci", "fast"], "internal")
    assert fsm.input_key == "target"
    assert fsm.required_inputs == ["target"]
    assert fsm.states["build"].description == "runs the build"
    assert fsm.lint_ok == {"partial_route_ok": True}
    data = fsm.to_dict()
    assert data["description"].startswith("Checks the build.")
    assert data["commands"] == [{"cmd": "ll-loop run described", "comment": "run it"}]
    assert data["partial_route_ok"] is True
    assert data["states"]["build"]["description"] == "runs the build"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("visibility: secret", "visibility: expected one of public, internal, example"),
        ("labels: ci", "labels: expected a list of strings, got 'ci'"),
        ("commands: [{comment: x}]", "commands: a command entry needs cmd"),
        ("input_key: 'a b'", "input_key: expected a context key name"),
        ("partial_route_ok: yes", "partial_route_ok: expected true or false, got 'yes'"),
    ],
)
def test_a_wrong_metadata_value_is_named(line: str, message: str) -> None:
    text = f"name: odd\n{line}\ninitial: done\nstates:\n  done:\n    terminal: true\n"
    found = [str(p) for p in check_document(load_text(text)).errors]
    assert any(message in f for f in found), found


def test_helpers() -> None:
    assert first_line("\n  first \nsecond") == "first"
    assert first_line(None) == ""
    assert listed(("a", "partial_route_ok", "b")) == ["a", "b", "*_ok flags"]
    assert metadata_of({"labels": "x", "visibility": "odd"}) == {
        "description": "",
        "category": "",
        "labels": [],
        "visibility": "public",
    }
    assert command_list([{"cmd": "x", "other": 1}]) is not None


def test_validate_takes_every_metadata_key(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "described.yaml").write_text(LOOP)
    checked = ll_loop(tmp_path, "validate", "described")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_run_adds_the_values_little_loops_runs_start_with_when_read() -> None:
    loop = {
        "states": {"a": {"action": "echo ${context.input_hash} ${context.readiness_threshold}"}}
    }
    added = runner_values({"input": "abc"}, "input", loop)
    assert added == {"readiness_threshold": 85, "input_hash": "ba7816bf8f01"}
    assert runner_values({"readiness_threshold": 90}, "input", loop) == {}
    assert reads_context(loop, "input_hash")
    assert not reads_context(loop, "input")
    assert runner_values({"input": "abc"}, "input", {"states": {}}) == {}


def test_a_run_s_values_encode_the_loop_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The loop is looked through for each runner key (three defaults and the input's hash):
    # a big loop's data is encoded once for all of them, and not at all when the context
    # has every key already.
    import json

    encoded: list[object] = []
    real = json.dumps

    def counting(value: object, **kwargs: object) -> str:
        encoded.append(value)
        return real(value, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "dumps", counting)
    loop = {"states": {"a": {"action": "echo ${context.outcome_threshold}"}}}
    assert runner_values({"input": "abc"}, "input", loop) == {"outcome_threshold": 65}
    assert encoded == [loop]
    full = {**dict.fromkeys(("readiness_threshold", "outcome_threshold")), "input_hash": "x"}
    assert runner_values({**full, "design_tokens_context": ""}, "input", loop) == {}
    assert encoded == [loop]


@pytest.mark.parametrize("key", ["required_inputs", "description", "labels", "category"])
def test_a_metadata_key_set_to_null_keeps_its_default(tmp_path: Path, key: str) -> None:
    (tmp_path / ".loops").mkdir()
    text = (
        f"name: q\n{key}: null\ninitial: a\nstates:\n"
        "  a:\n    action: 'true'\n    next: done\n  done:\n    terminal: true\n"
    )
    (tmp_path / ".loops" / "q.yaml").write_text(text)
    for args in (("validate", "q"), ("run", "q"), ("simulate", "q")):
        result = ll_loop(tmp_path, *args)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 0, result.stdout + result.stderr
