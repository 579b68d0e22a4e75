"""Numbers at the limits: the largest accepted values run, larger ones are one-line errors."""

from __future__ import annotations

import json
import shlex

import pytest
from support.paths import REPO
from support.project import LoopProject

from little_loops.fsm.definition.reading.loader import MAX_NESTING
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.values.value_checks import MAX_ACTION_SECONDS, MAX_LOOP_SECONDS

AT_THE_LIMITS = f"""\
    name: limits
    initial: a
    timeout: {MAX_LOOP_SECONDS}
    idle_timeout: {MAX_ACTION_SECONDS}
    llm:
      timeout: {MAX_ACTION_SECONDS}
    states:
      a:
        action: "true"
        timeout: {MAX_ACTION_SECONDS}
        idle_timeout: {MAX_ACTION_SECONDS}
        next: done
      done:
        terminal: true
"""

# The longest backoff: the run's timeout cuts the wait short.
LONGEST_BACKOFF = f"""\
    name: patient
    initial: a
    backoff: {MAX_LOOP_SECONDS}
    timeout: 0.5
    states:
      a:
        action: "true"
        on_success: a
        on_failure: done
      done:
        terminal: true
"""

HUGE_TIMEOUT = """\
    name: forever
    initial: a
    timeout: 1e308
    states:
      a:
        action: "true"
        next: done
      done:
        terminal: true
"""


def test_the_largest_accepted_timeouts_run(loop_project: LoopProject) -> None:
    loop_project.write("limits", AT_THE_LIMITS)
    assert loop_project.run("validate", "limits").code == ExitCode.OK
    result = loop_project.run("run", "limits")
    assert (result.code, result.err.splitlines()[-1][:25]) == (
        ExitCode.OK,
        "Loop completed: done (1 i",
    )


def test_the_longest_backoff_waits_until_the_loop_timeout(loop_project: LoopProject) -> None:
    loop_project.write("patient", LONGEST_BACKOFF)
    result = loop_project.run("run", "patient")
    assert result.code == ExitCode.TIMEOUT, result.err
    assert "internal error" not in result.err


@pytest.mark.parametrize("command", [["run", "--dry-run"], ["simulate"]])
def test_a_huge_timeout_is_the_validate_error_not_a_traceback(
    loop_project: LoopProject, command: list[str]
) -> None:
    loop_project.write("forever", HUGE_TIMEOUT)
    result = loop_project.run(*command, "forever")
    assert (result.code, result.out) == (ExitCode.USAGE, "")
    assert result.err == (
        "ll-loop: error: .loops/forever.yaml:3: loop 'forever' > timeout: expected a number > 0 "
        f"and at most {MAX_LOOP_SECONDS} (a year), got 1e+308\n"
    )


def test_the_docs_give_the_limits() -> None:
    text = (REPO / "docs" / "loop-files.md").read_text()
    assert f"at most {MAX_LOOP_SECONDS} seconds (a year)" in text
    assert f"at most {MAX_ACTION_SECONDS} seconds (about" in text
    assert f"Mappings and lists nest at most {MAX_NESTING} deep" in text


HUGE_MEASUREMENT = """\
    name: measure
    initial: measure
    states:
      measure:
        action: "printf '1%0400d\\\\n' 0"
        evaluate:
          type: convergence
          target: 5
        route:
          target: done
          progress: measure
          stall: measure
          _error: report
      report:
        terminal: true
      done:
        terminal: true
"""


def test_a_400_digit_measurement_is_an_error_verdict_routed_by_error(
    loop_project: LoopProject,
) -> None:
    loop_project.write("measure", HUGE_MEASUREMENT)
    result = loop_project.run("run", "measure")
    # `report` is terminal, reached on the verdict error: the run is a failure.
    assert result.code == ExitCode.TERMINAL_FAILURE, result.err
    assert "✗ error (output is too large a number (401 digits; at most 1.8e+308))" in result.err
    assert "       → report\n" in result.err
    assert result.err.splitlines()[-1].startswith("Loop ended in report, a failure: ")


@pytest.mark.parametrize(
    ("output", "evaluate", "message"),
    [
        ("1e400", "{type: output_numeric, operator: lt, target: 5}", "output is too large"),
        ('{"n": 1e400}', "{type: output_json, path: .n, operator: lt, target: 5}", ".n is too"),
    ],
)
def test_numbers_out_of_range_in_output_are_error_verdicts(
    loop_project: LoopProject, output: str, evaluate: str, message: str
) -> None:
    loop_project.write(
        "compare",
        f"""\
        name: compare
        initial: check
        states:
          check:
            action: {json.dumps("echo " + shlex.quote(output))}
            evaluate: {evaluate}
            on_success: done
            on_failure: done
            on_error: report
          report:
            terminal: true
          done:
            terminal: true
        """,
    )
    result = loop_project.run("run", "compare")
    assert (result.code, "internal error" in result.err) == (
        ExitCode.TERMINAL_FAILURE,  # `report` is terminal, reached on the verdict error
        False,
    ), result.err
    assert f"✗ error ({message}" in result.err
    assert "Loop ended in report, a failure: " in result.err


def _nested(lists: int) -> str:
    """A loop whose `context: x:` holds *lists* nested lists (nesting lists + 2 deep)."""
    return f"""\
        name: deep
        initial: a
        context:
          x: {"[" * lists}{"]" * lists}
        states:
          a:
            action: "true"
            next: done
          done:
            terminal: true
        """


@pytest.mark.parametrize("command", [["compile"], ["validate"], ["run"], ["simulate"]])
def test_nesting_past_the_limit_is_one_line_and_up_to_it_works(
    loop_project: LoopProject, command: list[str]
) -> None:
    path = loop_project.write("deep", _nested(MAX_NESTING - 2))
    assert loop_project.run(*command, str(path)).code == ExitCode.OK
    loop_project.write("deep", _nested(MAX_NESTING - 1))
    result = loop_project.run(*command, str(path))
    printed = (result.out + result.err).splitlines()
    assert (result.code, len(printed)) == (ExitCode.USAGE, 1), printed
    assert f"deep.yaml:4:{MAX_NESTING + 4}: " in printed[0]
    assert printed[0].endswith(f"mappings and lists nested more than {MAX_NESTING} deep")
