"""Keys little-loops reads with another meaning, through `ll-loop` with real bash.

Each loop here is our own, written as little-loops writes them. Without `--compat` a key
keeps our meaning and `validate` prints a note naming it; with `--compat` the run goes as
little-loops runs it (docs/little-loops.md, "Keys that mean something else there").
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from support.fake_anthropic import FakeAnthropic
from support.llproc import console, events


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
    (note,) = json.loads(checked.stdout)["files"][0]["notes"]
    assert note["severity"] == "note"
    assert note["keys"] == ["states", "measure", "evaluate", "type"]
    assert "whole output" in note["detail"]

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
