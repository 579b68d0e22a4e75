from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support import llproc
from support.bench_loops import HELLO
from support.imports import compiled_at_import, loaded_by, other_kind_modules
from support.paths import DATA, REPO
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

if TYPE_CHECKING:
    from support.project import LoopProject

INVALID = sorted((DATA / "invalid_loops").glob("*.yaml"))

GOOD = """\
name: good
initial: check
states:
  check:
    action: "true"
    on_success: done
    on_failure: check
  done:
    terminal: true
"""
WARNS = (
    GOOD
    + """\
  spare:
    next: done
"""
)


def named(name: str, text: str) -> str:
    """*text* (a loop named good) as the loop *name*: files in .loops/ are named after it."""
    return text.replace("name: good", f"name: {name}", 1)


def expectation(path: Path) -> str:
    first = path.read_text().splitlines()[0] if path.read_text() else ""
    assert first.startswith("# expect: "), f"{path.name} must start with '# expect: ...'"
    return first.removeprefix("# expect: ")


def test_the_invalid_folder_covers_at_least_fifteen_kinds_of_mistake() -> None:
    assert len(INVALID) >= 15


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_each_invalid_loop_fails_naming_the_culprit(loop_project: LoopProject, path: Path) -> None:
    result = loop_project.run("validate", str(path))
    assert result.code == 2
    assert expectation(path) in result.out
    assert "Traceback" not in result.out + result.err
    for line in result.out.splitlines():
        assert line.startswith(f"{path}:"), line


def test_a_missing_file_is_one_line(loop_project: LoopProject) -> None:
    result = loop_project.run("validate", ".loops/nope.yaml")
    assert (result.code, result.out) == (2, ".loops/nope.yaml: error: no such file\n")


def test_a_directory_is_one_line(loop_project: LoopProject) -> None:
    result = loop_project.run("validate", ".loops/")
    assert (result.code, result.out) == (2, ".loops/: error: is a directory, not a loop file\n")


def test_an_unknown_name_lists_the_available_loops(loop_project: LoopProject) -> None:
    loop_project.write("hello", GOOD)
    loop_project.write("other", GOOD)
    result = loop_project.run("validate", "helo")
    assert result.code == 2
    assert result.out == (
        "helo: error: no loop named 'helo' (did you mean hello?); looked for "
        ".loops/helo.fsm.yaml, .loops/helo.yaml, .loops/helo.yml; available: hello, other\n"
    )


def test_a_valid_loop_by_name(loop_project: LoopProject) -> None:
    loop_project.write("good", GOOD)
    result = loop_project.run("validate", "good")
    assert (result.code, result.out, result.err) == (0, ".loops/good.yaml: ok\n", "")


def test_several_files_fail_if_any_fails(loop_project: LoopProject) -> None:
    loop_project.write("good", GOOD)
    loop_project.write("bad", named("bad", GOOD).replace("on_failure", "on_falure"))
    result = loop_project.run("validate", "good", "bad", ".loops/good.yaml")
    assert result.code == 2
    assert result.out.splitlines() == [
        ".loops/good.yaml: ok",
        ".loops/bad.yaml:7: error: loop 'bad' > states > check > on_falure: unknown key "
        "(did you mean on_failure?)",
        ".loops/good.yaml: ok",
    ]
    assert loop_project.run("validate", "good", ".loops/good.yaml").code == 0


def test_quiet_prints_only_problems(loop_project: LoopProject) -> None:
    loop_project.write("good", GOOD)
    loop_project.write("warns", named("warns", WARNS))
    result = loop_project.run("validate", "-q", "good", "warns")
    assert result.code == 0
    assert result.out == (
        ".loops/warns.yaml:10: warning: loop 'warns' > states > spare: unreachable from the "
        "initial state 'check'\n"
    )


def test_warnings_pass_unless_strict(loop_project: LoopProject) -> None:
    loop_project.write("warns", named("warns", WARNS))
    result = loop_project.run("validate", "warns")
    assert result.code == 0
    assert result.out.splitlines() == [
        ".loops/warns.yaml:10: warning: loop 'warns' > states > spare: unreachable from the "
        "initial state 'check'",
        ".loops/warns.yaml: ok (1 warning)",
    ]
    strict = loop_project.run("validate", "--strict", "warns")
    assert strict.code == 2
    assert strict.out == (
        ".loops/warns.yaml:10: error: loop 'warns' > states > spare: unreachable from the "
        "initial state 'check'\n"
    )


def test_a_route_key_that_yaml_1_1_would_read_as_a_boolean_is_a_verdict_name(
    loop_project: LoopProject,
) -> None:
    # `true:` is the verdict 'true' (keys are text); exit_code never gives it: an error.
    loop_project.write(
        "verdicts",
        """\
        name: verdicts
        initial: check
        states:
          check:
            action: "true"
            route:
              true: done
              _: done
              _error: done
          done:
            terminal: true
        """,
    )
    result = loop_project.run("validate", "verdicts")
    assert result.code == 2
    assert result.out.splitlines() == [
        ".loops/verdicts.yaml:7: error: loop 'verdicts' > states > check > route > true: "
        "route key 'true' is never given by exit_code (it gives success, failure, error)"
        "; use a verdict it gives, remove the key, or set partial_route_ok: true, "
        "or run with --compat",
    ]


def test_yaml_syntax_errors_give_line_and_column(loop_project: LoopProject) -> None:
    loop_project.write("broken", "name: x\nstates:\n  a: [1, 2\n")
    result = loop_project.run("validate", "broken")
    assert result.code == 2
    assert result.out.startswith(".loops/broken.yaml:4:1: error: YAML syntax error: ")


def test_json_report(loop_project: LoopProject) -> None:
    loop_project.write("good", GOOD)
    loop_project.write("warns", named("warns", WARNS))
    loop_project.write("bad", named("bad", GOOD).replace("initial: check", "initial: chek"))
    result = loop_project.run("validate", "--json", "good", "warns", "bad", "gone")
    assert result.code == 2
    report = json.loads(result.out)
    assert report["valid"] is False
    assert [(f["path"], f["loop"], f["valid"]) for f in report["files"]] == [
        (".loops/good.yaml", "good", True),
        (".loops/warns.yaml", "warns", True),
        (".loops/bad.yaml", "bad", False),
        ("gone", None, False),
    ]
    assert report["files"][0]["errors"] == []
    assert report["files"][1]["errors"] == [
        {
            "severity": "warning",
            "message": "loop 'warns' > states > spare: unreachable from the initial state 'check'",
            "detail": "unreachable from the initial state 'check'",
            "line": 10,
            "column": None,
            "file": None,
            "loop": "warns",
            "state": "spare",
            "key": None,
            "keys": ["states", "spare"],
        }
    ]
    bad = report["files"][2]["errors"][0]
    assert (bad["line"], bad["key"], bad["state"]) == (2, "initial", None)
    assert report["files"][3]["errors"][0]["message"].startswith("no loop named 'gone'")


def test_json_strict_and_all_valid(loop_project: LoopProject) -> None:
    loop_project.write("warns", named("warns", WARNS))
    assert json.loads(loop_project.run("validate", "--json", "warns").out)["valid"] is True
    result = loop_project.run("validate", "--json", "--strict", "warns")
    assert result.code == 2
    report = json.loads(result.out)
    assert report["valid"] is False
    assert report["files"][0]["errors"][0]["severity"] == "error"


def test_names_resolve_to_compiled_fsm_first(loop_project: LoopProject) -> None:
    loop_project.write("both", "not: [valid")
    loop_project.write("both.fsm.yaml", named("both", GOOD))  # compiled after its source
    loop_project.write("short.yml", named("short", GOOD))
    result = loop_project.run("validate", "both", "short")
    assert result.out.splitlines() == [".loops/both.fsm.yaml: ok", ".loops/short.yml: ok"]


def _imported(*argv: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "little_loops.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=scaled(30),
    )
    names = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    return proc, names


@pytest.mark.parametrize("argv", [["validate", ".loops/ci-checks.yaml"], ["--help"]])
def test_validate_and_help_import_nothing_heavy(argv: list[str]) -> None:
    started = time.perf_counter()
    proc, imported = _imported(*argv, cwd=REPO)
    elapsed = time.perf_counter() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "little_loops" in imported
    assert "yaml" in imported or argv == ["--help"]
    assert not imported & {"anthropic", "jsonschema", "httpx", "pydantic"}
    if argv[0] == "validate":
        # json is only for --json (and values read at run time): ~2 ms of every hook run.
        assert "json" not in imported
    else:
        # argparse finds the terminal's width with shutil (and bz2, lzma): ll-loop does not.
        assert not imported & {"shutil", "bz2", "lzma"}
    # Generous bound for a loaded 2-core machine; it typically takes ~0.1 s.
    assert elapsed < 5


# A loop of shell actions only, each with a reference (so validate reads it with the bash
# parser): the loop `scripts/dev bench` validates; and the same with a capture read back and
# an evaluator of its own.
SHELL_ONLY = HELLO
CAPTURING = HELLO.replace(
    "    on_success: done\n",
    "    capture: seen\n    evaluate:\n      type: output_contains\n      pattern: present\n"
    "    on_success: done\n",
    1,
).replace('touch "${context.marker}"\n', 'touch "${context.marker}" # ${captured.seen.output}\n')
# Standard-library modules validate does not use: tree-sitter-bash's package imports the
# first three for query files; JSON is for --json only; nothing is started (subprocess), a
# state name's hash is measured, not computed (hashlib); shutil (with bz2 and lzma) only
# to look a sentence-like action's first word up on PATH.
NOT_AT_VALIDATE = {
    *("importlib.resources", "tempfile", "random", "json", "subprocess", "hashlib"),
    *("shutil", "bz2", "lzma"),
}
# What runs an agent or confines a step, beside the kinds: the custom agents' kind, the
# sandbox's command line, the request an agent is handed ...
AGENT_MACHINERY = {
    f"little_loops.fsm.actions.{name}"
    for name in ("custom", "sandbox", "request", "agent_kind", "supervisor", "runners")
}


def _package_modules(folder: str) -> set[str]:
    """Every module of the package folder *folder* (`engine`), read from the folder."""
    import little_loops.fsm

    root = Path(little_loops.fsm.__file__).parent
    return {
        ".".join(
            ("little_loops", *path.relative_to(root.parent).with_suffix("").parts)
        ).removesuffix(".__init__")
        for path in (root / folder).rglob("*.py")
    }


@pytest.mark.parametrize("text", [SHELL_ONLY, CAPTURING], ids=["hello", "capturing"])
def test_validate_of_a_shell_only_loop_imports_no_agent_kind_engine_or_runs_module(
    tmp_path: Path, text: str
) -> None:
    from little_loops.fsm.actions.custom import custom_kind

    (tmp_path / "hello.yaml").write_text(text)
    code, loaded = loaded_by(tmp_path, "validate", "hello.yaml")
    assert code == 0
    # Every kind the registry knows but the shell's, and the loop's own agents' kind.
    kinds = other_kind_modules() | {custom_kind.__module__}
    assert len(kinds) >= 6
    assert sorted(loaded & kinds) == []
    engine, runs = _package_modules("engine"), _package_modules("runs")
    processes = _package_modules("processes")
    assert "little_loops.fsm.engine.executor" in engine
    assert "little_loops.fsm.runs.store" in runs
    assert "little_loops.fsm.processes.containment" in processes
    assert sorted(loaded & (engine | runs | processes)) == []
    assert sorted(loaded & AGENT_MACHINERY) == []
    # Nor a forge: the `pr` state's words are known without one.
    forges = _package_modules("forges")
    assert sorted(loaded & forges) == [
        "little_loops.fsm.forges",
        "little_loops.fsm.forges.merge",
        "little_loops.fsm.forges.registry",
    ]
    # The actions were read with the bash parser, without what its package's __init__ loads.
    assert "tree_sitter" in loaded
    assert sorted(loaded & NOT_AT_VALIDATE) == []


def test_validate_of_a_shell_only_loop_compiles_no_regex_at_import_but_the_yaml_resolvers(
    tmp_path: Path,
) -> None:
    # Over a whole run of the command (imports inside functions too); the standard library's
    # own are left to cli/test_init.py's look at the imports of the validate path.
    (tmp_path / "hello.yaml").write_text(SHELL_ONLY)
    code, compiled = compiled_at_import(argv=["validate", "hello.yaml"], cwd=tmp_path)
    assert code == 0
    ours = [name for name in compiled if name.startswith("little_loops")]
    assert ours == ["little_loops.fsm.definition.reading.loader"], compiled


SETTINGS_FSM = """\
name: same
initial: check
states:
  check:
    action: "true"
    on_success: done
    on_failure: check
  done:
    terminal: true
"""
SETTINGS_GOAL = """\
paradigm: goal
name: same
goal: Tests pass
tools: [pytest]
"""


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("max_iterations: 0", "loop 'same' > max_iterations: expected a whole number >= 1, got 0"),
        ("timeout: -1", "loop 'same' > timeout: expected a number > 0, got -1"),
        ('maintain: "yes"', "loop 'same' > maintain: expected true or false, got 'yes'"),
    ],
)
def test_a_bad_loop_setting_reads_the_same_in_an_fsm_file_and_a_paradigm_file(
    loop_project: LoopProject, setting: str, message: str
) -> None:
    # Outside .loops/: two files of one name there would be an error of their own.
    fsm = loop_project.root / "fsm.yaml"
    fsm.write_text(SETTINGS_FSM + setting + "\n")
    goal = loop_project.root / "goal.yaml"
    goal.write_text(SETTINGS_GOAL + setting + "\n")
    texts = []
    for path in (fsm, goal):
        result = loop_project.run("validate", str(path))
        assert result.code == 2
        lines = result.out.splitlines()
        assert len(lines) == 1, result.out
        where, _, text = lines[0].partition(": error: ")
        assert where.startswith(f"{path}:"), lines[0]
        texts.append(text)
    assert texts == [message, message]


SENTENCE = """\
    name: words
    initial: fix
    states:
      fix:
        action: ACTION
        next: done
      done:
        terminal: true
    """


@pytest.mark.parametrize(
    "action",
    [
        "Fix the failing test",
        "Fix the failing test of ${state.name}",
        "Explain, briefly, why the build broke.",
    ],
)
def test_an_action_that_reads_like_a_sentence_warns_to_make_it_a_prompt(
    loop_project: LoopProject, action: str
) -> None:
    loop_project.write("words", SENTENCE.replace("ACTION", action))
    result = loop_project.run("validate", "words")
    assert result.code == 0
    first = action.split()[0]
    assert result.out.splitlines()[0] == (
        f".loops/words.yaml:5: warning: loop 'words' > states > fix > action: this reads like "
        f"a sentence for Claude, but with no action_type it runs in bash, which has no command "
        f"'{first}'; add action_type: prompt to send it to Claude"
    )


@pytest.mark.parametrize(
    "action",
    [
        "pytest -q tests",  # on PATH
        "echo the build is fine",  # a builtin
        "if the_check; then exit 1; fi",  # a keyword, and shell syntax
        "Build the docs > out.txt",  # shell syntax
        "scripts/fix the failing test",  # a path
        "Fix it",  # too short to tell
        "nosuchtool the failing test",  # not on PATH, but no capital: a command
        "${context.tool} the failing test",  # the command is only known at run time
    ],
)
def test_a_command_does_not_read_like_a_sentence(loop_project: LoopProject, action: str) -> None:
    # Beside a sentence, which does: only that one is reported.
    text = SENTENCE.replace("next: done", "next: ask").replace("ACTION", action)
    text = text.rstrip(" ") + "      ask:\n        action: Fix the failing test\n"
    text += "        next: done\n"
    loop_project.write("words", text)
    result = loop_project.run("validate", "words")
    found = [line for line in result.out.splitlines() if "reads like a sentence" in line]
    assert [line.split(": warning: ")[1].split(":")[0] for line in found] == [
        "loop 'words' > states > ask > action"
    ]


def test_action_type_settles_it(loop_project: LoopProject) -> None:
    text = SENTENCE.replace("ACTION", "Fix the failing test")
    loop_project.write("words", text)
    assert "reads like a sentence" in loop_project.run("validate", "words").out
    for kind in ("shell", "prompt"):
        typed = text.replace("    next:", f"    action_type: {kind}\n        next:")
        loop_project.write("words", typed)
        result = loop_project.run("validate", "--strict", "words")
        assert result.out.splitlines() == [".loops/words.yaml: ok"], kind


ONE_PASS = """\
    name: one-pass
    initial: fix
    states:
      fix:
        action: /fix the bug
        on_success: check
        on_failure: fix
      check:
        action: echo ${captured.report.output}
        on_success: done
        on_failure: fix
      done:
        terminal: true
    """


def test_an_error_does_not_hide_the_warnings(loop_project: LoopProject) -> None:
    """Every finding in one pass: a `${captured.x}` no state captures (an error) and an
    llm_structured state whose blocked/partial verdicts have no route (a warning)."""
    loop_project.write("one-pass", ONE_PASS)
    result = loop_project.run("validate", "one-pass")
    assert result.code == ExitCode.USAGE
    assert result.out == (
        ".loops/one-pass.yaml:4: warning: loop 'one-pass' > states > fix: verdicts 'blocked'"
        " and 'partial' (llm_structured, default schema) have no route: the loop would stop"
        ' here with "no valid transition"; on_success/on_failure cannot route them: use a route'
        " table with an entry for each verdict (or _: STATE for the rest)\n"
        ".loops/one-pass.yaml:9: error: loop 'one-pass' > states > check > action:"
        " ${captured.report.output}: no state captures 'report'"
        "; capture it before, write ${captured.NAME?}, or set capture_reachability_ok: true, "
        "or run with --compat\n"
    )


def test_a_broken_graph_still_checks_its_sub_loops(loop_project: LoopProject) -> None:
    loop_project.write(
        "parent",
        """\
        name: parent
        initial: run
        states:
          run:
            loop: chlid
            on_success: done
            on_failure: nowhere
          done:
            terminal: true
        """,
    )
    loop_project.write("child", "name: child\ninitial: a\nstates:\n  a: {terminal: true}\n")
    result = loop_project.run("validate", "parent")
    assert result.code == ExitCode.USAGE
    assert result.out.splitlines() == [
        ".loops/parent.yaml:5: error: loop 'parent' > states > run > loop: no loop named"
        f" 'chlid' in {loop_project.loops.resolve()}/",
        ".loops/parent.yaml:7: error: loop 'parent' > states > run > on_failure: 'nowhere' is"
        " not a state (states: run, done)",
    ]


def test_two_loop_files_with_one_name_are_an_error_naming_both(loop_project: LoopProject) -> None:
    loop_project.write("tutorial", GOOD)
    (loop_project.loops / "tut2.yaml").write_text(GOOD)  # `cp tutorial.yaml tut2.yaml`
    result = loop_project.run("validate", "tut2", "tutorial")
    assert result.code == ExitCode.USAGE
    assert result.out.splitlines() == [
        ".loops/tut2.yaml:1: error: loop 'good' > name: 'good' is also the name of"
        " .loops/tutorial.yaml: two loop files with one name; name each after its file"
        " (this one: name: tut2)",
        ".loops/tut2.yaml:1: warning: loop 'good' > name: 'good' is not the file name 'tut2':"
        " the loop runs as 'tut2' (its run files and `ll-loop status tut2`); write name: tut2",
        ".loops/tutorial.yaml:1: error: loop 'good' > name: 'good' is also the name of"
        " .loops/tut2.yaml: two loop files with one name; name each after its file"
        " (this one: name: tutorial)",
        ".loops/tutorial.yaml:1: warning: loop 'good' > name: 'good' is not the file name"
        " 'tutorial': the loop runs as 'tutorial' (its run files and `ll-loop status"
        " tutorial`); write name: tutorial",
    ]
    (loop_project.loops / "tut2.yaml").write_text(GOOD.replace("name: good", "name: tut2"))
    loop_project.write("tutorial", GOOD.replace("name: good", "name: tutorial"))
    fixed = loop_project.run("validate", "tut2", "tutorial")
    assert (fixed.code, fixed.out) == (0, ".loops/tut2.yaml: ok\n.loops/tutorial.yaml: ok\n")


def test_a_file_name_that_cannot_be_a_name_is_not_suggested_as_one(
    loop_project: LoopProject,
) -> None:
    (loop_project.loops / "my loop.yaml").write_text(GOOD)  # a space: runs, but no `name:`
    result = loop_project.run("validate", "my loop")
    assert result.code == 0
    assert "write name: my loop" not in result.out
    assert "rename the file: 'my loop' cannot be a name:" in result.out
    (loop_project.loops / "my loop.yaml").write_text(GOOD.replace("name: good", "name: my loop"))
    assert loop_project.run("validate", "my loop").code == ExitCode.USAGE  # it would be refused


def test_a_compiled_file_shares_its_sources_name(loop_project: LoopProject) -> None:
    loop_project.write("greet", "paradigm: goal\nname: greet\ngoal: say hi\ntools: ['true']\n")
    assert loop_project.run("compile", "greet", "-o", ".loops/greet.fsm.yaml").code == 0
    result = loop_project.run("validate", "greet", ".loops/greet.yaml")
    assert (result.code, result.out) == (0, ".loops/greet.fsm.yaml: ok\n.loops/greet.yaml: ok\n")


def test_a_loop_file_outside_a_loops_folder_is_not_compared_with_its_neighbours(
    loop_project: LoopProject,
) -> None:
    (loop_project.root / "a.yaml").write_text(GOOD)
    (loop_project.root / "b.yaml").write_text(GOOD)
    result = loop_project.run("validate", "a.yaml", "b.yaml")
    assert (result.code, result.out) == (0, "a.yaml: ok\nb.yaml: ok\n")


ABSURD = ("retry_backoff_rate_huge", "retry_max_attempts_huge", "loop_retry_on_no_verdict")


@pytest.mark.parametrize("name", ABSURD)
def test_an_absurd_value_is_refused_by_validate_and_run_in_one_line(
    tmp_path: Path, name: str
) -> None:
    # Each was accepted: a year's wait between attempts, a retry on a verdict no state gives.
    (tmp_path / ".loops").mkdir()
    source = DATA / "invalid_loops" / f"{name}.yaml"
    (tmp_path / source.name).write_text(source.read_text())  # named as it likes outside
    message = expectation(source)
    checked = llproc.ll_loop(tmp_path, "validate", source.name)
    assert checked.returncode == ExitCode.USAGE, checked.stdout
    [line] = checked.stdout.splitlines()
    where, _, said = line.partition(": error: ")
    assert (where.startswith(f"{source.name}:"), said) == (True, message)
    ran = llproc.ll_loop(tmp_path, "run", source.name)
    assert ran.returncode == ExitCode.USAGE, ran.stderr
    [line] = ran.stderr.splitlines()
    assert line.startswith("ll-loop: error: "), line
    assert line.endswith(f": {message}"), line
    assert not (tmp_path / ".loops" / ".running").exists()  # nothing ran


SENSIBLE = """\
name: deploy
initial: gate
context:
  cmd: ./deploy.sh
retry:
  on: [failure, 75]
  backoff_rate: 100
  max_attempts: 10000
states:
  gate:
    action: ""
    next: push
  push:
    action: ${context.cmd}
    retry:
      on: failure
      interval: 2
      backoff_rate: 100
      max_interval: 30
    on_success: judge
    on_failure: done
  judge:
    action: did it deploy?
    action_type: prompt
    route:
      success: done
      _: done
      _error: done
  done:
    terminal: true
"""


def test_the_values_next_to_the_absurd_ones_stay_valid(tmp_path: Path) -> None:
    # The largest rate, a loop retry on a verdict one of its states gives (the judge's
    # `blocked` included) and on an exit code, a state without an action, an action filled
    # in at run time, and `action: ""`, which the original design runs as a state that
    # only routes.
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "deploy.yaml").write_text(
        SENSIBLE.replace("on: [failure, 75]", "on: [failure, 75, blocked]")
    )
    checked = llproc.ll_loop(tmp_path, "validate", "deploy")
    assert (checked.returncode, checked.stdout) == (ExitCode.OK, ".loops/deploy.yaml: ok\n")
