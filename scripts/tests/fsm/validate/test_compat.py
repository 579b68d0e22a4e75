"""Stricter checks: a fix in each message, `*_ok` flags silence one, `--compat` runs as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.definition.model.lint_flags import (
    CLAUDE_SUBAGENT,
    NOTHING_TO_EVALUATE,
    STRICTER,
    UNKNOWN_EVALUATE_KEY,
    UNKNOWN_KEY,
)
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.facts.errors import ValidationError
from little_loops.fsm.validate.compat import as_claude_subagents, relaxed
from little_loops.fsm.validate.loopfile import check_document, validate_definition

# Written as for little-loops: a value pasted into `eval`, a route key exit_code never
# gives (to a state a run never reaches), a capture no state makes, a key no context has.
LOOP = """\
name: as-written
initial: run
context:
  cmd: "echo ran-as-code"
states:
  run:
    action: 'eval ${context.cmd}'
    route:
      success: done
      partial: odd
  odd:
    action: 'echo "${captured.nothing.output} ${context.missing}"'
    next: done
  done:
    terminal: true
"""
FLAGS = (
    "partial_route_ok: true\\nunsafe_context_interpolation_ok: true\\n"
    "capture_reachability_ok: true\\nevaluate_unknown_keys_ok: true\\n"
)


def errors(text: str, compat: bool = False) -> list[ValidationError]:
    return check_document(load_text(text, "loop.yaml"), compat).errors


# The checks LOOP does not trip: below, and through ll-loop in cli/test_their_files.py.
OTHERS = {UNKNOWN_EVALUATE_KEY, UNKNOWN_KEY, NOTHING_TO_EVALUATE, CLAUDE_SUBAGENT}


def test_each_stricter_check_says_its_fix() -> None:
    found = errors(LOOP)
    assert {p.check for p in found} == set(STRICTER) - OTHERS
    for problem in found:
        check = problem.check
        assert check is not None
        assert str(problem).endswith(f"; {STRICTER[check]}, or run with --compat")


def test_flags_silence_their_checks_and_compat_makes_warnings() -> None:
    flagged = LOOP.replace("initial: run\n", "initial: run\n" + FLAGS.replace("\\n", "\n"))
    assert [str(p) for p in errors(flagged)] == [
        "loop 'as-written' > states > odd > action: ${context.missing}: context has no "
        "key 'missing'; declare it under context: or parameters:, or write ${context.KEY?}, "
        "or run with --compat"
    ]
    assert errors(LOOP, compat=True) == []
    report = check_document(load_text(LOOP, "loop.yaml"), compat=True)
    assert len([p for p in report.warnings if p.check]) == len(set(STRICTER) - OTHERS)


def _made(data: dict[str, object]) -> dict[tuple[str | int, ...], str | None]:
    """The check each problem of *data* says it was made by, by its path."""
    return {p.path: p.check for p in validate_definition(data)}


def test_unknown_keys_of_a_loop_or_state_and_a_subagent_are_stricter_checks() -> None:
    states = {
        "a": {"action": "/x", "output": 1, "agent": "rev", "next": "b"},
        "b": {"action": "/x", "agent": "claud", "next": "c"},
        "c": {"terminal": True},
    }
    made = _made({"name": "x", "initial": "a", "color": 1, "llm": {"color": 1}, "states": states})
    assert made[("states", "a", "output")] == UNKNOWN_KEY
    assert made[("color",)] == UNKNOWN_KEY
    assert made[("llm", "color")] is None
    assert made[("states", "a", "agent")] == CLAUDE_SUBAGENT
    assert made[("states", "b", "agent")] is None  # a near miss is a typo of one of ours
    # its message already says the fix: nothing is added, and --compat makes it a warning
    state_key = ValidationError.at(
        "x", ("states", "a", "output"), "unknown key (x)", check=UNKNOWN_KEY
    )
    (kept,) = relaxed([state_key], {}, compat=True)
    assert kept.message == "unknown key (x)"
    assert kept.severity == "warning"


def test_the_check_is_what_made_the_problem_never_its_words() -> None:
    # A problem that reads like an unknown key but was made by no stricter check stays one.
    lookalike = ValidationError.at("x", ("color",), "unknown key (x)")
    assert relaxed([lookalike], {}, compat=True) == [lookalike]


def test_compat_reads_a_state_agent_that_is_no_agent_as_claudes_subagent() -> None:
    data = {
        "states": {
            "a": {"agent": "rev", "claude": {"model": "m"}},
            "b": {"agent": "codex"},
            "c": {"agent": "${context.who}"},
        }
    }
    out = as_claude_subagents(data, {"claude", "codex"})
    assert out["states"]["a"] == {"claude": {"model": "m", "agent": "rev"}}
    assert out["states"]["b"] == {"agent": "codex"}
    assert out["states"]["c"] == {"agent": "${context.who}"}


def test_an_unknown_evaluate_key_is_that_check() -> None:
    odd = LOOP.replace(
        "    action: 'eval", "    evaluate: {type: exit_code, weight: 2}\n    action: 'eval"
    )
    (found,) = errors(odd)
    assert found.check == UNKNOWN_EVALUATE_KEY
    assert errors(odd.replace("initial: run\n", "initial: run\nevaluate_unknown_keys_ok: true\n"))
    assert relaxed([found], {"evaluate_unknown_keys_ok": True}) == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "as-written.yaml").write_text(LOOP)
    return tmp_path


def test_validate_and_run_with_compat_run_the_loop_as_written(project: Path) -> None:
    """Real bash: refused by default (one line each, exit 2); with --compat it validates
    with warnings and runs, the refused value pasted as code as little-loops does."""
    refused = ll_loop(project, "validate", "as-written")
    assert refused.returncode == 2
    assert "or run with --compat" in refused.stdout
    assert ll_loop(project, "run", "as-written").returncode == 2
    checked = ll_loop(project, "validate", "--compat", "as-written")
    assert checked.returncode == 0, checked.stdout
    assert ": warning: " in checked.stdout
    ran = ll_loop(project, "run", "--compat", "as-written", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert "ran-as-code" in ran.stderr


def test_flags_in_the_file_run_it_as_written_too(project: Path) -> None:
    path = project / ".loops" / "as-written.yaml"
    path.write_text(
        path.read_text()
        .replace("${context.missing}", "${context.missing?}")
        .replace("initial: run\n", "initial: run\n" + FLAGS.replace("\\n", "\n"))
    )
    assert ll_loop(project, "validate", "as-written").returncode == 0
    ran = ll_loop(project, "run", "as-written", "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert "ran-as-code" in ran.stderr
