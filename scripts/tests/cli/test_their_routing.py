"""Routing and endings written as little-loops writes them, through `ll-loop` with real bash.

Each loop here is our own, in that spelling: on_yes/on_no (mixed with ours), route keys
yes/no, `failure: true`, terminals named `failed`, max_steps with on_max_steps,
on_max_iterations, max_retries, retryable_exit_codes and `next:` with on_error.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from support.fake_anthropic import FakeAnthropic
from support.llproc import console, events

from little_loops.fsm.facts.outcomes import ExitCode


def project(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / ".loops").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".loops" / f"{name}.yaml").write_text(textwrap.dedent(text))
    return tmp_path


def routes(root: Path, name: str) -> list[tuple[str, str]]:
    return [(e["from"], e["to"]) for e in events(root, name) if e.get("event") == "route"]


def ended(root: Path, name: str) -> str:
    (done,) = [e for e in events(root, name) if e.get("event") == "loop_complete"]
    return str(done["terminated_by"])


MIXED = """\
    name: mixed
    initial: probe
    states:
      probe:
        action: "test -f ready"
        on_yes: table
        on_failure: make
      make:
        action: "touch ready"
        next: probe
      table:
        action: "test -f ready"
        route:
          yes: done
          no: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def test_verdict_words_route_as_ours(tmp_path: Path) -> None:
    root = project(tmp_path, "mixed", MIXED)
    result = console(root, "run", "mixed")
    assert result.returncode == ExitCode.OK, result.stderr
    assert routes(root, "mixed") == [
        ("probe", "make"),
        ("make", "probe"),
        ("probe", "table"),
        ("table", "done"),
    ]


def test_simulate_takes_yes_and_no_and_partial(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "words",
        """\
        name: words
        initial: judge
        states:
          judge:
            action: "true"
            on_yes: done
            on_no: judge
            on_partial: again
            on_blocked: failed
          again:
            action: "true"
            next: judge
          done:
            terminal: true
          failed:
            terminal: true
        """,
    )
    result = console(root, "simulate", "words", "--verdicts", "judge=no,partial,yes", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    assert json.loads(result.stdout)["path"] == ["judge", "judge", "again", "judge", "done"]
    blocked = console(root, "simulate", "words", "--verdicts", "judge=blocked")
    assert blocked.returncode == ExitCode.TERMINAL_FAILURE  # `failed` ends as a failure


def test_a_key_in_both_spellings_is_one_line(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "twice",
        """\
        name: twice
        initial: a
        states:
          a:
            action: "true"
            on_yes: done
            on_success: done
            on_yse: done
          done:
            terminal: true
        """,
    )
    result = console(root, "validate", "twice")
    assert result.returncode == ExitCode.USAGE
    lines = result.stderr.strip().splitlines() + result.stdout.strip().splitlines()
    said = "\n".join(lines)
    assert "on_yes and on_success are one key written twice: keep one (on_success)" in said
    assert "on_yse: unknown key (did you mean on_yes?)" in said
    assert "Traceback" not in said


def test_failure_true_and_failure_names_end_as_failures(tmp_path: Path) -> None:
    text = """\
        name: ends
        initial: a
        states:
          a:
            action: "test -f ok"
            on_yes: fine
            on_no: {target}
          fine:
            terminal: true
          gave_up:
            terminal: true
            failure: true
          failed:
            terminal: true
          error:
            terminal: true
            outcome: success
        """
    for target, code in (
        ("gave_up", ExitCode.TERMINAL_FAILURE),
        ("failed", ExitCode.TERMINAL_FAILURE),
        ("error", ExitCode.OK),
    ):
        root = project(tmp_path / target, "ends", text.format(target=target))
        result = console(root, "run", "ends")
        assert result.returncode == code, (target, result.stderr)
    said = console(tmp_path / "failed", "validate", "ends")
    assert said.returncode == ExitCode.OK
    assert "states > failed: ends the run as a failure (exit 7) by its name" in said.stdout
    assert "states > error: ends" not in said.stdout  # its outcome says how it ends


STEPS = """\
    name: steps
    initial: work
    max_steps: 3
    {route}
    states:
      work:
        action: "echo x >> count"
        next: work
      summary:
        action: "wc -l < count > summary.txt"
        next: done
      done:
        terminal: true
"""


def test_max_steps_stops_the_run_and_says_so(tmp_path: Path) -> None:
    root = project(tmp_path, "steps", STEPS.format(route=""))
    result = console(root, "run", "steps")
    assert result.returncode == ExitCode.MAX_STEPS, result.stderr
    assert (root / "count").read_text() == "x\nx\nx\n"
    assert ended(root, "steps") == "max_steps"
    assert "max_steps reached" in result.stderr + result.stdout


def test_on_max_steps_runs_its_state_once_then_stops(tmp_path: Path) -> None:
    root = project(tmp_path, "steps", STEPS.format(route="on_max_steps: summary"))
    result = console(root, "run", "steps")
    assert result.returncode == ExitCode.MAX_STEPS, result.stderr
    assert (root / "summary.txt").read_text().strip() == "3"
    assert routes(root, "steps")[-2:] == [("work", "summary"), ("summary", "done")]
    reasons = [e["reason"] for e in events(root, "steps") if e.get("event") == "route"]
    assert "on_max_steps (max_steps 3 reached)" in reasons


def test_on_max_iterations_runs_its_state_once(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "passes",
        """\
        name: passes
        initial: work
        max_iterations: 2
        on_max_iterations: summary
        states:
          work:
            action: "echo x >> count"
            next: work
          summary:
            action: "echo summed > summary.txt"
            next: work
          done:
            terminal: true
        """,
    )
    result = console(root, "run", "passes")
    assert result.returncode == ExitCode.MAX_ITERATIONS, result.stderr
    assert (root / "count").read_text() == "x\nx\n"
    assert (root / "summary.txt").exists()


def test_max_retries_caps_entering_a_state_again(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "retries",
        """\
        name: retries
        initial: try
        states:
          try:
            action: "echo x >> tries; false"
            on_yes: done
            on_no: $current
            max_retries: 2
            on_retry_exhausted: gave_up
          done:
            terminal: true
          gave_up:
            terminal: true
            failure: true
        """,
    )
    result = console(root, "run", "retries")
    assert result.returncode == ExitCode.TERMINAL_FAILURE, result.stderr
    assert (root / "tries").read_text() == "x\nx\nx\n"  # the first time and 2 retries
    assert routes(root, "retries")[-1] == ("try", "gave_up")


def test_next_with_on_error_and_retryable_exit_codes(tmp_path: Path) -> None:
    text = """\
        name: codes
        initial: fetch
        states:
          fetch:
            action: "exit {code}"
            next: done
            on_error: wait
            retryable_exit_codes: [75]
            on_retry_exhausted: gave_up
          wait:
            action: "true"
            next: done
          done:
            terminal: true
          gave_up:
            terminal: true
            failure: true
        """
    for code, goes in (("0", "done"), ("75", "wait"), ("3", "gave_up")):
        root = project(tmp_path / code, "codes", text.format(code=code))
        console(root, "run", "codes")
        assert routes(root, "codes")[0] == ("fetch", goes), code


def test_a_judge_that_answers_yes_routes_success(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(
        tmp_path,
        "judged",
        """\
        name: judged
        initial: check
        states:
          check:
            action: echo looks fine
            evaluate:
              type: llm_structured
              schema:
                type: object
                properties:
                  verdict: {type: string, enum: [yes, no]}
            route:
              success: done
              no: failed
          done:
            terminal: true
          failed:
            terminal: true
        """,
    )
    assert console(root, "validate", "judged").returncode == ExitCode.OK
    fake_anthropic.reply_tool({"verdict": "yes", "confidence": 0.9, "reason": "ok"})
    result = console(root, "run", "judged")
    assert result.returncode == ExitCode.OK, result.stderr
    (judged,) = [e for e in events(root, "judged") if e.get("event") == "evaluate"]
    assert judged["verdict"] == "success"
    assert routes(root, "judged") == [("check", "done")]
