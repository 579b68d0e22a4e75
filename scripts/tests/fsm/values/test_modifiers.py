"""Modifiers of a reference: `:default=`, `?`, `:shell`, `:OFFSET:LENGTH`, as a run writes them."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_value,
)
from little_loops.fsm.values.modifiers import to_text

CTX = InterpolationContext(
    context={"x": "it's here", "n": 7, "when": "2026-01-02T03:04:05.123456"},
    captured={"plan": {"output": "p", "exit_code": 0}},
    env={},
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${context.missing:default=dflt v}", "dflt v"),
        ("${context.x:default=unused}", "it's here"),
        ("[${context.missing:default=}]", "[]"),
        ("[${captured.nope?}]", "[]"),
        ("[${captured.plan.stderr?}]", "[]"),
        ("${captured.plan?}", "p"),
        ("${context.x:shell}", "'it'\"'\"'s here'"),
        ("${context.when:0:19}", "2026-01-02T03:04:05"),
        ("${context.when:11}", "03:04:05.123456"),
        ("${env.NOT_SET_HERE:default=none}", "none"),
    ],
)
def test_a_modifier_changes_how_the_value_is_written(text: str, expected: str) -> None:
    assert interpolate(text, CTX) == expected


def test_a_missing_value_without_a_fallback_is_still_an_error() -> None:
    with pytest.raises(InterpolationError, match="undefined variable"):
        interpolate("${context.missing:shell}", CTX)


def test_a_lone_reference_keeps_its_type_unless_sliced() -> None:
    assert interpolate_value("${context.n:default=3}", CTX) == 7
    assert interpolate_value("${context.n:0:1}", CTX) == "7"
    assert to_text(None) == ""


LOOP = """\
name: mods
initial: show
context:
  x: "a b; echo INJECTED"
states:
  show:
    action: |
      printf '%s|' ${context.x:shell} "${context.gone:default=$(echo RAN)}" "[${captured.none?}]"
      printf '%s|' "${loop.started_at:0:4}"
    next: done
  done:
    terminal: true
"""


def test_a_run_writes_each_modifier_and_runs_no_value(tmp_path: Path) -> None:
    """Real bash: `:shell` is one word, a default is data (its `$(...)` does not run), `?`
    is empty, a slice cuts the text; `validate` takes all of them."""
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "mods.yaml").write_text(LOOP)
    checked = ll_loop(tmp_path, "validate", "mods")
    assert checked.returncode == 0, checked.stderr
    ran = ll_loop(tmp_path, "run", "mods", "--verbose")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout + ran.stderr
    assert "a b; echo INJECTED|$(echo RAN)|[]|" in out
    assert "RAN|" not in out.replace("$(echo RAN)|", "")
    year = datetime.date.today().year
    assert f"{year}|" in out or f"{year + 1}|" in out
