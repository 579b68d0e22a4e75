"""Keys little-loops reads with another meaning, through `ll-loop` with real bash.

Each loop here is our own, written as little-loops writes them. Without `--compat` a key
keeps our meaning and `validate` prints a note naming it; with `--compat` the run goes as
little-loops runs it (docs/little-loops.md, "Keys that mean something else there").
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path

from support.fake_anthropic import FakeAnthropic
from support.llproc import console, events, start, wait_for
from support.slowdown import scaled


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / ".loops" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def states_run(root: Path, name: str) -> list[str]:
    """The states whose action ran, in order (one `action_start` each)."""
    return [str(e["state"]) for e in events(root, name) if e.get("event") == "action_start"]


# Two states a pass: little-loops stops this after 3 steps (max_iterations without max_steps
# is its step cap); ll-loop's 3 passes are 6 steps.
STEPS = """\
    name: twostep
    initial: a
    max_iterations: 3
    states:
      a:
        action: "echo a >> trail.txt"
        next: b
      b:
        action: "echo b >> trail.txt; test -f stop"
        on_yes: done
        on_no: a
      done:
        terminal: true
"""


def test_max_iterations_without_max_steps_caps_steps_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"twostep": STEPS})
    checked = console(root, "validate", "twostep")
    assert checked.returncode == 0, checked.stdout
    note = [line for line in checked.stdout.splitlines() if ": note: " in line]
    assert len(note) == 1, checked.stdout
    assert "max_iterations" in note[0]
    assert "a cap of 3 steps" in note[0]
    assert "twostep.yaml:3:" in note[0]  # the line of the key
    assert ": note: " not in console(root, "validate", "--compat", "twostep").stdout

    console(root, "run", "twostep")
    assert (root / "trail.txt").read_text().split() == ["a", "b"] * 3  # ours: 3 passes
    (root / "trail.txt").unlink()
    console(root, "run", "--compat", "twostep")
    assert (root / "trail.txt").read_text().split() == ["a", "b", "a"]  # theirs: 3 steps
    assert states_run(root, "twostep")[-3:] == ["a", "b", "a"]


NUMBER = """\
    name: count
    initial: measure
    states:
      measure:
        action: "echo 'counting files'; echo 3"
        evaluate:
          type: output_numeric
          operator: eq
          target: 3
        on_yes: done
        on_no: failed
        on_error: error
      done:
        terminal: true
      failed:
        terminal: true
      error:
        terminal: true
"""


def test_output_numeric_reads_the_whole_output_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"count": NUMBER})
    checked = console(root, "validate", "--json", "count")
    assert checked.returncode == 0, checked.stdout
    numbers, exits = json.loads(checked.stdout)["files"][0]["notes"]
    for note in (numbers, exits):
        assert note["severity"] == "note"
        assert note["keys"] == ["states", "measure", "evaluate", "type"]
    assert "whole output" in numbers["detail"]
    assert "exits non-zero" in exits["detail"]

    ours = console(root, "run", "count")
    assert ours.returncode == 0, ours.stderr  # the last line, 3: done
    theirs = console(root, "run", "--compat", "count")
    assert theirs.returncode == 7, theirs.stderr  # two lines are no number there: error
    evaluated = [e for e in events(root, "count") if e.get("event") == "evaluate"]
    assert evaluated[-1]["verdict"] == "error"
    assert "2 lines" in str(evaluated[-1].get("error") or evaluated[-1])


INPUTS = """\
    name: inputs
    parameters:
      run_dir:
        type: string
        required: true
      issue:
        type: string
        required: false
    initial: show
    states:
      show:
        action: 'printf "%s|%s" "${context.run_dir}" "${context.issue}" > seen.txt'
        next: done
      done:
        terminal: true
"""


def test_a_required_run_dir_is_the_runs_folder_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"inputs": INPUTS})
    checked = console(root, "validate", "inputs")
    assert checked.returncode == 0, checked.stdout
    assert "inputs.yaml:3: note: " in checked.stdout
    assert "run_dir" in checked.stdout

    refused = console(root, "run", "inputs")
    assert refused.returncode == 2
    assert "missing required parameter 'run_dir'" in refused.stderr
    ran = console(root, "run", "--compat", "inputs", "--set", "issue=I-1")
    assert ran.returncode == 0, ran.stderr
    folder, issue = (root / "seen.txt").read_text().split("|")
    (made,) = (root / ".loops" / "runs").iterdir()
    assert folder == f"{made.resolve()}/"
    assert made.is_dir()
    assert made.name.startswith("inputs-20")
    assert issue == "I-1"


def test_one_json_object_value_gives_the_keys_it_names_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"inputs": INPUTS})
    given = ["--set", "run_dir=here/", '{"issue": "I-7", "other": 1}']
    ours = console(root, "run", "inputs", *given)
    assert ours.returncode != 0  # the object is the value of run_dir; issue is not given
    ran = console(root, "run", "--compat", "inputs", *given)
    assert ran.returncode == 0, ran.stderr
    assert (root / "seen.txt").read_text() == "here/|I-7"


QUIET = """\
    name: quiet
    initial: work
    states:
      work:
        action: 'echo worked > seen.txt'
        next: done
      done:
        terminal: true
"""


def test_a_value_for_a_loop_that_does_not_read_it_is_its_input_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"quiet": QUIET})
    refused = console(root, "run", "quiet", "fix the parser")
    assert refused.returncode == 2
    assert "takes no values (it declares no parameters)" in refused.stderr
    ran = console(root, "run", "--compat", "quiet", "fix the parser")
    assert ran.returncode == 0, ran.stderr
    assert (root / "seen.txt").read_text() == "worked\n"
    state = json.loads((root / ".loops" / ".running" / "quiet.state.json").read_text())
    assert state["context"]["input"] == "fix the parser"
    two = console(root, "run", "--compat", "quiet", "fix", "the parser")
    assert two.returncode == 2
    assert "takes one free-form value (context 'input'), got 2" in two.stderr


UNDECLARED = """\
    name: extra
    initial: show
    states:
      show:
        action: 'printf "%s" "${context.mode?}" > seen.txt'
        next: done
      done:
        terminal: true
"""


def test_context_key_value_adds_an_undeclared_key_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"extra": UNDECLARED})
    refused = console(root, "run", "extra", "--context", "mode=fast")
    assert refused.returncode == 2
    assert "unknown key 'mode'" in refused.stderr
    assert "context file" not in refused.stderr  # not read as --context-file
    ran = console(root, "run", "--compat", "extra", "--context", "mode=fast")
    assert ran.returncode == 0, ran.stderr
    assert (root / "seen.txt").read_text() == "fast"
    (root / "seen.txt").unlink()
    assert console(root, "run", "--compat", "extra", "--set", "mode=slow").returncode == 0
    assert (root / "seen.txt").read_text() == "slow"


def test_every_compat_run_has_its_folder_where_little_loops_makes_it(tmp_path: Path) -> None:
    root = project(
        tmp_path, {"extra": UNDECLARED.replace("${context.mode?}", "${context.run_dir}")}
    )
    assert console(root, "run", "extra").returncode == 0
    ours = (root / "seen.txt").read_text()
    assert "/.loops/.running/runs/extra@" in ours
    assert console(root, "run", "--compat", "extra").returncode == 0
    theirs = (root / "seen.txt").read_text()
    assert theirs.startswith(f"{(root / '.loops' / 'runs').resolve()}/extra-20"), theirs
    assert theirs.endswith("/")
    assert Path(theirs).is_dir()


JUDGED = """\
    name: judged
    initial: check
    partial_route_ok: true
    states:
      check:
        action: "echo 3 tests passed"
        evaluate:
          type: llm_structured
          prompt: "Did the tests pass?"
        route:
          yes: done
          no: failed
          cannot_judge: unsure
          error: failed
      done:
        terminal: true
      unsure:
        terminal: true
      failed:
        terminal: true
"""


def judged(root: Path, *flags: str) -> tuple[int, str, str]:
    """Run the loop once: its exit code, the judge's verdict and the state it went to."""
    ran = console(root, "run", *flags, "judged")
    (verdict,) = [e["verdict"] for e in events(root, "judged") if e.get("event") == "evaluate"]
    (to,) = [e["to"] for e in events(root, "judged") if e.get("event") == "route"]
    return ran.returncode, str(verdict), str(to)


def test_the_judges_evidence_rule_and_cannot_judge_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(tmp_path, {"judged": JUDGED})
    checked = console(root, "validate", "judged")
    assert "judged.yaml:8: note: " in checked.stdout
    assert "cannot_judge" in checked.stdout
    unevidenced = {"verdict": "success", "confidence": 0.9, "reason": "looks done"}
    fake_anthropic.reply_tool(unevidenced)
    assert judged(root) == (0, "success", "done")  # ours: the judge's verdict stands
    fake_anthropic.reply_tool({**unevidenced, "evidence": " "})
    assert judged(root, "--compat") == (7, "failure", "failed")  # theirs: no evidence
    asked = fake_anthropic.requests[-1].body
    schema = asked["tools"][0]["input_schema"]
    assert "cannot_judge" in schema["properties"]["verdict"]["enum"]
    assert "evidence" in schema["required"]
    assert "Did the tests pass?" in str(asked["messages"])
    fake_anthropic.reply_tool({**unevidenced, "evidence": "3 tests passed"})
    assert judged(root, "--compat") == (0, "success", "done")
    fake_anthropic.reply_tool({"verdict": "cannot_judge", "confidence": 0.9, "reason": "?"})
    assert judged(root, "--compat") == (0, "cannot_judge", "unsure")


READS_INPUT = """\
    name: task
    initial: baseline
    states:
      baseline:
        action: "true"
        next: plan
      plan:
        action: 'echo "planning ${context.input}"'
        on_yes: done
        on_no: done
        on_error: diagnose
      diagnose:
        action: "true"
        next: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def walked(root: Path, *flags: str) -> list[str]:
    done = console(root, "simulate", *flags, "task", "--scenario", "all-pass", "--json")
    return [str(step["state"]) for step in json.loads(done.stdout)["steps"]]


def test_simulate_fails_a_state_that_reads_an_input_not_given_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"task": READS_INPUT})
    assert walked(root) == ["baseline", "plan", "done"]  # ours: the value comes at run time
    assert walked(root, "--compat") == ["baseline", "plan", "diagnose", "failed"]
    shown = console(root, "simulate", "--compat", "task", "--scenario", "all-pass")
    assert "${context.input}: no value is given" in shown.stdout
    ran = console(root, "run", "--compat", "task")  # as the run goes, with no value
    assert ran.returncode == 7, ran.stderr
    routes = [e["to"] for e in events(root, "task") if e.get("event") == "route"]
    assert routes == ["plan", "diagnose", "failed"]


def test_a_compat_run_makes_no_folder_through_a_linked_runs_folder(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"extra": UNDECLARED})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".loops" / "runs").symlink_to(elsewhere)
    refused = console(root, "run", "--compat", "extra")
    assert refused.returncode != 0
    assert refused.stderr.startswith("ll-loop: error: ")
    assert "is a link" in refused.stderr
    assert list(elsewhere.iterdir()) == []
    assert not (root / "seen.txt").exists()


def test_simulate_fails_a_state_that_reads_a_required_parameter_not_given_with_compat(
    tmp_path: Path,
) -> None:
    text = READS_INPUT.replace("${context.input}", "${context.issue}").replace(
        "    initial: baseline\n",
        "    initial: baseline\n    parameters:\n      issue:\n        type: string\n"
        "        required: true\n",
    )
    root = project(tmp_path, {"task": text})
    assert walked(root) == ["baseline", "plan", "done"]
    assert walked(root, "--compat") == ["baseline", "plan", "diagnose", "failed"]


# A judged state with no route for cannot_judge: little-loops holds it (`_` does not take
# it there); here the verdict is not one of the judge's: an error.
HELD = """\
    name: held
    initial: check
    states:
      check:
        action: "echo run >> runs.txt; echo 3 tests passed"
        evaluate:
          type: llm_structured
          prompt: "Did the tests pass?"
        route:
          yes: done
          no: check
          _: fix
          error: failed
      fix:
        action: "true"
        next: done
      done:
        terminal: true
      failed:
        terminal: true
"""
CANNOT = {"verdict": "cannot_judge", "confidence": 0.9, "reason": "nothing shown"}
PASSED = {"verdict": "success", "confidence": 0.9, "reason": "ok", "evidence": "3 tests passed"}
FAILED = {"verdict": "failure", "confidence": 0.9, "reason": "no", "evidence": "3 tests passed"}


def runs(root: Path) -> int:
    return len((root / "runs.txt").read_text().splitlines())


def routes(root: Path, name: str) -> list[tuple[str, str, str]]:
    return [
        (str(e["from"]), str(e["to"]), str(e["reason"]))
        for e in events(root, name)
        if e.get("event") == "route"
    ]


def test_an_unrouted_cannot_judge_is_held_then_takes_the_error_route_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(tmp_path, {"held": HELD})
    checked = console(root, "validate", "held")
    (note,) = [line for line in checked.stdout.splitlines() if ": note: " in line]
    assert "held.yaml:7:" in note
    assert "no route for cannot_judge" in note
    fake_anthropic.reply_tool(CANNOT)
    ours = console(root, "run", "held")  # ours: no such verdict, an error at once
    assert ours.returncode == 7, ours.stderr
    assert "'cannot_judge', which is not one of" in ours.stderr
    assert runs(root) == 1
    assert [to for _, to, _ in routes(root, "held")] == ["failed"]
    (root / "runs.txt").unlink()
    for _ in range(3):
        fake_anthropic.reply_tool(CANNOT)
    theirs = console(root, "run", "--compat", "held")
    assert theirs.returncode == 7, theirs.stderr  # judged 3 times, then `error: failed`
    assert runs(root) == 3
    taken = routes(root, "held")
    assert [(f, to) for f, to, _ in taken] == [("check", "check")] * 2 + [("check", "failed")]
    assert "cannot_judge held (1 of 2)" in taken[0][2]
    assert "cannot_judge held 2 times" in taken[2][2]
    assert fake_anthropic.pending == 0


def test_another_verdict_starts_the_hold_count_again_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(tmp_path, {"held": HELD})
    for reply in (CANNOT, CANNOT, FAILED, CANNOT, CANNOT, PASSED):
        fake_anthropic.reply_tool(reply)
    ran = console(root, "run", "--compat", "held")
    assert ran.returncode == 0, ran.stderr
    assert runs(root) == 6
    assert [to for _, to, _ in routes(root, "held")] == ["check"] * 5 + ["done"]


def test_a_routed_cannot_judge_is_not_held_and_no_error_route_stops_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(tmp_path, {"judged": JUDGED})  # routes cannot_judge: unsure
    fake_anthropic.reply_tool(CANNOT)
    assert judged(root, "--compat") == (0, "cannot_judge", "unsure")
    bare = HELD.replace("          _: fix\n", "").replace("          error: failed\n", "")
    root = project(tmp_path / "bare", {"held": bare})
    for _ in range(3):
        fake_anthropic.reply_tool(CANNOT)
    ran = console(root, "run", "--compat", "held")
    assert ran.returncode == 1, ran.stderr  # the loop failed: an error with no route out
    assert "no valid transition from 'check' for verdict 'cannot_judge'" in ran.stderr
    assert "held 2 times" in ran.stderr
    assert runs(root) == 3


def test_kill_9_and_resume_keep_the_hold_count_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    # The second run of the action waits for `go`: the run is killed there.
    blocking = HELD.replace(
        'action: "echo run >> runs.txt; echo 3 tests passed"',
        "action: 'echo run >> runs.txt; if [ $(wc -l < runs.txt) -eq 2 ]; then touch started;"
        " while [ ! -f go ]; do sleep 0.05; done; fi; echo 3 tests passed'",
    )
    root = project(tmp_path, {"held": blocking})
    for _ in range(3):
        fake_anthropic.reply_tool(CANNOT)
    proc = start(root, "run", "--compat", "held")
    try:
        wait_for(lambda: (root / "started").exists(), timeout=scaled(20), what="the 2nd run")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    (root / "go").touch()
    resumed = console(root, "resume", "held")
    assert resumed.returncode == 7, resumed.stderr
    # 1 (held), 2 (killed), 3 after the resume (held: the 2nd), 4 (the 3rd: error route)
    assert runs(root) == 4
    assert len(fake_anthropic.requests) == 3
    assert [to for _, to, _ in routes(root, "held")][-1] == "failed"


# little-loops' simulate runs each evaluator on `[simulated output for: ACTION]` and the
# scenario's exit code; --compat does so for the evaluators marked pure.
GAUGE = """\
    name: gauge
    initial: count
    states:
      count:
        action: "echo 3"
        capture: n
        next: seen
      seen:
        evaluate:
          type: output_contains
          source: "${captured.n.output}"
          pattern: "for: echo 3]"
        on_yes: ask
        on_no: failed
      ask:
        action: "Is it fine?"
        action_type: prompt
        evaluate:
          type: llm_structured
        on_yes: check
        on_no: failed
      check:
        action: "echo checking"
        evaluate:
          type: output_numeric
          operator: le
          target: 5
        on_yes: done
        on_no: done
        on_error: broken
      done:
        terminal: true
      broken:
        terminal: true
      failed:
        terminal: true
"""


def test_simulate_runs_pure_evaluators_on_the_simulated_output_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"gauge": GAUGE})
    ours = ["count", "seen", "ask", "check", "done"]
    assert walked_loop(root, "gauge") == ours  # ours: the scenario's verdict for each
    # theirs: `seen` reads the captured simulated output (success), the judge is not run
    # (the scenario's), `check` finds no number in `[simulated output for: ...]` (error)
    theirs = ["count", "seen", "ask", "check", "broken"]
    assert walked_loop(root, "gauge", "--compat") == theirs
    shown = console(root, "simulate", "--compat", "gauge", "--scenario", "all-pass")
    assert "error (output_numeric on the simulated output)" in shown.stdout
    assert "success (output_contains on the simulated output)" in shown.stdout
    assert "success (scenario all-pass)" in shown.stdout  # the judge's
    failing = walked_loop(root, "gauge", "--compat", scenario="all-fail")
    assert failing == ["count", "seen", "ask", "failed"]  # `next:` on exit 1: no error route
    # A sub-loop state's verdict is its child's end (the scenario's), not an evaluation.
    project(tmp_path, {"parent": PARENT})
    assert walked_loop(root, "parent", "--compat", scenario="all-fail") == ["run", "failed"]


PARENT = """\
    name: parent
    initial: run
    states:
      run:
        loop: gauge
        on_yes: done
        on_no: failed
        on_error: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def walked_loop(root: Path, name: str, *flags: str, scenario: str = "all-pass") -> list[str]:
    done = console(root, "simulate", *flags, name, "--scenario", scenario, "--json")
    return [str(step["state"]) for step in json.loads(done.stdout)["steps"]]


# The output says PASS, the exit code says otherwise: little-loops' output_contains gives
# `error` on a non-zero exit; ours reads the output.
EXITS = """\
    name: exits
    initial: check
    states:
      check:
        action: "echo PASS; exit 1"
        evaluate:
          type: output_contains
          pattern: PASS
        on_yes: done
        on_no: other
        on_error: broken
      other:
        terminal: true
      broken:
        terminal: true
      done:
        terminal: true
"""


def test_an_output_evaluator_after_a_non_zero_exit_is_an_error_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"exits": EXITS})
    (note,) = [x for x in console(root, "validate", "exits").stdout.splitlines() if "note:" in x]
    assert "exits.yaml:7:" in note
    assert "output_contains gives error when the action exits non-zero" in note
    ours = console(root, "run", "exits")
    assert ours.returncode == 0, ours.stderr
    assert [e["to"] for e in events(root, "exits") if e.get("event") == "route"] == ["done"]
    theirs = console(root, "run", "--compat", "exits")
    assert theirs.returncode == 7, theirs.stderr
    assert "action exited with code 1" in theirs.stderr
    assert [e["to"] for e in events(root, "exits") if e.get("event") == "route"] == ["broken"]


SPINS = """\
    name: spins
    initial: spin
    max_steps: 40
    on_max_steps: wrap
    states:
      spin:
        action: "true"
        on_yes: spin
        on_no: spin
      wrap:
        action: "true"
        next: done
      done:
        terminal: true
"""


def test_simulate_caps_max_steps_at_20_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"spins": SPINS})
    assert walked_loop(root, "spins") == ["spin"] * 40 + ["wrap"]  # ours: the file's
    assert walked_loop(root, "spins", "--compat") == ["spin"] * 20 + ["wrap"]


# little-loops' rehearsal of a sub-loop captures nothing, and its error takes the failure
# route when the state has no error route; a shell action reading a capture not made fails.
COMPOSE = """\
    name: compose
    initial: dispatch
    states:
      dispatch:
        loop: gauge
        capture: step
        on_yes: write
        on_no: other
      write:
        action: 'echo "${captured.step.output}" > out.txt'
        on_yes: done
        on_no: done
        on_error: broken
      other:
        terminal: true
      broken:
        terminal: true
      done:
        terminal: true
"""


def test_simulate_rehearses_sub_loops_as_little_loops_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"compose": COMPOSE, "gauge": GAUGE})
    assert walked_loop(root, "compose") == ["dispatch", "write", "done"]
    assert walked_loop(root, "compose", "--compat") == ["dispatch", "write", "broken"]
    shown = console(root, "simulate", "--compat", "compose", "--scenario", "all-pass")
    assert "${captured.step}: nothing is captured yet; the run would fail here" in shown.stdout
    assert walked_loop(root, "compose", scenario="all-error") == ["dispatch"]  # no route
    errored = walked_loop(root, "compose", "--compat", scenario="all-error")
    assert errored == ["dispatch", "other"]


# little-loops' shorthand for the judge's cannot_judge, beside the other shorthands.
SHORTHAND = """\
    name: short
    initial: check
    states:
      check:
        action: "echo run >> runs.txt; echo 3 tests passed"
        evaluate:
          type: llm_structured
          prompt: "Did the tests pass?"
        on_yes: done
        on_no: check
        on_cannot_judge: unsure
        on_error: failed
      done:
        terminal: true
      unsure:
        terminal: true
      failed:
        terminal: true
"""


def test_on_cannot_judge_routes_the_verdict_at_once_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    root = project(tmp_path, {"short": SHORTHAND})
    checked = console(root, "validate", "short")
    assert checked.returncode == 0, checked.stdout
    (note,) = [line for line in checked.stdout.splitlines() if "on_cannot_judge" in line]
    assert "short.yaml:11: note: " in note
    checked = console(root, "validate", "--compat", "short")
    assert checked.returncode == 0, checked.stdout
    assert "on_cannot_judge" not in checked.stdout + checked.stderr  # a key, not ignored
    fake_anthropic.reply_tool(CANNOT)
    ours = console(root, "run", "short")  # ours: no such verdict, an error
    assert ours.returncode == 7, ours.stderr
    assert [to for _, to, _ in routes(root, "short")] == ["failed"]
    fake_anthropic.reply_tool(CANNOT)
    theirs = console(root, "run", "--compat", "short")
    assert theirs.returncode == 0, theirs.stderr  # routed at once, not held
    assert routes(root, "short")[-1][:2] == ("check", "unsure")
    assert "on_cannot_judge" in routes(root, "short")[-1][2]
    assert runs(root) == 2
    assert fake_anthropic.pending == 0


def test_on_cannot_judge_beside_a_table_is_not_held_with_compat(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    # little-loops: the shorthand declares the verdict (no hold), but a `route:` table
    # routes alone: with no `cannot_judge:` or `_` in it, no valid transition at once.
    table = HELD.replace("          _: fix\n", "").replace(
        "          error: failed\n", "          error: failed\n        on_cannot_judge: fix\n"
    )
    root = project(tmp_path, {"held": table})
    fake_anthropic.reply_tool(CANNOT)
    ran = console(root, "run", "--compat", "held")
    assert ran.returncode == 1, ran.stderr
    assert "no valid transition from 'check' for verdict 'cannot_judge'" in ran.stderr
    assert runs(root) == 1
    assert fake_anthropic.pending == 0


# A route table whose `_` meets an error verdict (two lines are no number for little-loops).
DEFAULT = """\
    name: fallback
    initial: measure
    states:
      measure:
        action: "echo 'counting files'; echo 3"
        evaluate:
          type: output_numeric
          operator: eq
          target: 3
        route:
          yes: done
          _: other
          _error: failed
      other:
        terminal: true
      done:
        terminal: true
      failed:
        terminal: true
"""


def test_a_tables_default_takes_an_error_verdict_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"fallback": DEFAULT})
    checked = console(root, "validate", "--json", "fallback")
    assert checked.returncode == 0, checked.stdout
    (default,) = [
        n for n in json.loads(checked.stdout)["files"][0]["notes"] if n["keys"][-1] == "_"
    ]
    assert "error verdict" in default["detail"]
    assert "_" not in [
        n["keys"][-1]
        for n in json.loads(console(root, "validate", "--json", "--compat", "fallback").stdout)[
            "files"
        ][0]["notes"]
    ]
    for bad in ("'echo counting; echo 3'", "'echo counting; exit 3'"):
        text = DEFAULT.replace("\"echo 'counting files'; echo 3\"", bad)
        root = project(tmp_path / bad[7:13].strip(), {"fallback": text})
        ours = console(root, "run", "fallback")
        if "exit" in bad:  # no number in the output: an error for ours as well: `_error`
            assert ours.returncode == 7, ours.stderr
            assert "→ failed" in ours.stderr
        else:  # ours reads the last line: 3
            assert ours.returncode == 0, ours.stderr
        theirs = console(root, "run", "--compat", "fallback")
        tos = [e["to"] for e in events(root, "fallback") if e.get("event") == "route"]
        assert tos[-1] == "other", theirs.stderr  # `_`, before `_error`
        assert "→ other" in theirs.stderr
    # A route `error:` takes it before `_` there too.
    text = DEFAULT.replace("          _error: failed\n", "          error: failed\n")
    root = project(tmp_path / "literal", {"fallback": text})
    assert console(root, "run", "--compat", "fallback").returncode == 7
    assert [e["to"] for e in events(root, "fallback") if e.get("event") == "route"] == ["failed"]


# A `next:` state whose failed action retries itself, but only on a timeout's exit code.
RETRIED = """\
    name: plan
    initial: plan
    states:
      plan:
        action: "echo x >> runs.txt; exit 1"
        max_retries: 3
        retryable_exit_codes: [124]
        on_retry_exhausted: plan_failed
        next: done
        on_error: plan
      done:
        terminal: true
      plan_failed:
        terminal: true
        failure: true
"""


def test_simulate_sends_an_unretryable_exit_to_on_retry_exhausted_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"plan": RETRIED})
    ran = console(root, "run", "plan")  # the run: exit 1 is not retried
    assert ran.returncode == 7, ran.stderr
    assert runs(root) == 1
    assert routes(root, "plan") == [("plan", "plan_failed", "on_retry_exhausted (exit 1)")]

    def walk(*flags: str, scenario: str) -> list[str]:
        done = console(root, "simulate", *flags, "plan", "--scenario", scenario, "--json")
        return [str(step["state"]) for step in json.loads(done.stdout)["steps"]]

    for scenario in ("all-fail", "all-error", "first-fail"):  # exit 1, 2, 1: as the run
        assert walk("--compat", scenario=scenario) == ["plan", "plan_failed"], scenario
    assert walk("--compat", scenario="all-pass") == ["plan", "done"]
    assert walk(scenario="all-fail") == ["plan"] * 4 + ["plan_failed"]  # no exit code: ours


# An action reading `${prev.*}` before any action ran (as rlhf-svg-refine's first states).
PREV = """\
    name: prev
    initial: rank
    states:
      rank:
        action: 'echo "ranked after: ${prev.output}" >> runs.txt'
        on_yes: review
        on_no: review
        on_error: review
      review:
        action: 'echo "reviewed: ${prev.output}" >> runs.txt'
        max_retries: 1
        on_retry_exhausted: failed
        on_yes: done
        on_no: failed
        on_error: review
      done:
        terminal: true
      failed:
        terminal: true
"""


def test_an_action_reading_prev_before_any_result_fails_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"prev": PREV})
    checked = console(root, "validate", "prev")
    assert checked.returncode == 0, checked.stdout
    (note,) = [line for line in checked.stdout.splitlines() if ": note: " in line]
    assert "prev.yaml:5: note: " in note
    assert "${prev...}" in note
    ours = console(root, "run", "prev")  # ours: `${prev.*}` is empty at first
    assert ours.returncode == 0, ours.stderr
    assert (root / "runs.txt").read_text().splitlines() == [
        "ranked after: ",
        "reviewed: ",  # rank's output (none: it went to the file)
    ]
    (root / "runs.txt").unlink()
    theirs = console(root, "run", "--compat", "prev")  # theirs: neither action can be written
    assert theirs.returncode == 7, theirs.stderr
    assert not (root / "runs.txt").exists()
    assert [(f, to) for f, to, _ in routes(root, "prev")] == [
        ("rank", "review"),
        ("review", "review"),
        ("review", "review"),  # entered 1 + max_retries times: then on_retry_exhausted
        ("review", "failed"),
    ]
    assert "no previous state result yet" in theirs.stderr
    walked = console(root, "simulate", "--compat", "prev", "--scenario", "all-pass", "--json")
    steps = json.loads(walked.stdout)["steps"]
    assert [s["state"] for s in steps] == ["rank", "review", "review", "failed"]
    walked = console(root, "simulate", "prev", "--scenario", "all-pass", "--json")
    assert [s["state"] for s in json.loads(walked.stdout)["steps"]] == ["rank", "review", "done"]
