"""A loop's parameters through the `ll-loop` console script: values reach real bash actions."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.pipe import READ_SECONDS_ENV

# `show` prints every value, one bracketed word each, so a list shows as several words.
FIX_ISSUE = """\
name: fix-issue
parameters:
  issue:
    type: integer
    description: the issue to fix
  mode:
    type: string
    default: quick
    choices: [quick, deep]
    description: how hard to try
  labels:
    type: list
    default: [bug]
  ratio:
    type: number
    default: 0.5
  dry:
    type: boolean
    default: false
  notes:
    type: path
    default: notes.md
context:
  greeting: hello
initial: show
states:
  show:
    action: >-
      printf '[%s]' ${context.issue} ${context.mode} ${words:context.labels} ${context.ratio}
      ${context.dry} ${context.notes} ${context.greeting} > shown.txt
    next: done
  done:
    terminal: true
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fix-issue.yaml").write_text(FIX_ISSUE)
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.console(root, *args)


def shown(root: Path) -> str:
    return (root / "shown.txt").read_text()


def refused(root: Path, *args: str) -> str:
    """The one error line of a call that must stop before anything runs."""
    done = run(root, *args)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert not (root / "shown.txt").exists()
    assert not (root / ".loops" / ".running").exists()  # no run was started
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_positional_values_fill_the_declared_order(project: Path) -> None:
    done = run(project, "fix-issue", "123", "deep", "bug, ui", "2.5", "yes", "docs/x.md", "-q")
    assert done.returncode == 0, done.stderr
    assert shown(project) == "[123][deep][bug][ui][2.5][true][docs/x.md][hello]"


def test_the_run_command_and_values_after_flags(project: Path) -> None:
    done = run(project, "run", "fix-issue", "--quiet", "7", "--no-color", "deep")
    assert done.returncode == 0, done.stderr
    assert shown(project).startswith("[7][deep]")
    negative = run(project, "fix-issue", "-q", "--", "-5", "deep")
    assert negative.returncode == 0, negative.stderr
    assert shown(project).startswith("[-5][deep]")
    flag = run(project, "fix-issue", "1", "--bogus")
    assert flag.returncode == ExitCode.USAGE
    assert flag.stderr.endswith("ll-loop: error: unrecognized arguments: --bogus\n")


def test_run_without_a_name_asks_for_the_name_alone(project: Path) -> None:
    done = run(project, "run")
    assert done.returncode == ExitCode.USAGE
    # The VALUEs are optional: only NAME|PATH is required.
    assert done.stderr.endswith(
        "ll-loop run: error: the following arguments are required: NAME|PATH\n"
    )


def test_defaults_fill_what_is_not_given(project: Path) -> None:
    assert run(project, "fix-issue", "5", "-q").returncode == 0
    assert shown(project) == "[5][quick][bug][0.5][false][notes.md][hello]"


def test_set_gives_values_by_name_and_wins_over_positional_ones(project: Path) -> None:
    done = run(
        project,
        *("fix-issue", "1", "--set", "issue=9", "--set", "labels=a,b,c"),
        *("--set", "dry=No", "--set", "greeting=hi there", "-q"),
    )
    assert done.returncode == 0, done.stderr
    # --set on a plain context key overrides it (as text).
    assert shown(project) == "[9][quick][a][b][c][0.5][false][notes.md][hi there]"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("values.json", '{"issue": 42, "labels": ["x y", "z"], "ratio": 3, "dry": true}'),
        ("values.yaml", "issue: 42\nlabels: [x y, z]\nratio: 3\ndry: true\n"),
    ],
)
def test_a_context_file_keeps_its_types(project: Path, name: str, text: str) -> None:
    (project / name).write_text(text)
    done = run(project, "fix-issue", "--context-file", name, "-q")
    assert done.returncode == 0, done.stderr
    assert shown(project) == "[42][quick][x y][z][3][true][notes.md][hello]"


def test_precedence_is_defaults_file_positional_set(project: Path) -> None:
    (project / "v.json").write_text('{"issue": 1, "mode": "deep", "ratio": 9}')
    done = run(project, "fix-issue", "2", "--context-file", "v.json", "--set", "issue=3", "-q")
    assert done.returncode == 0, done.stderr
    assert shown(project) == "[3][deep][bug][9][false][notes.md][hello]"


def test_a_missing_required_value_stops_before_anything_runs(project: Path) -> None:
    assert refused(project, "fix-issue") == (
        "ll-loop: error: loop 'fix-issue': missing required parameter 'issue' "
        "(give it as value 1 after the loop name, or --set issue=VALUE)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("1.5",), "parameter 'issue' (the command line): expected a whole number, got '1.5'"),
        (("abc",), "parameter 'issue' (the command line): expected a whole number, got 'abc'"),
        (
            ("1", "--set", "ratio=lots"),
            "parameter 'ratio' (--set): expected a number, got 'lots'",
        ),
        (
            ("1", "--set", "dry=maybe"),
            "parameter 'dry' (--set): expected true or false (yes/no, 1/0), got 'maybe'",
        ),
        (
            ("1", "--set", "notes="),
            "parameter 'notes' (--set): expected a path (a non-empty string), got ''",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line(
    project: Path, args: tuple[str, ...], message: str
) -> None:
    assert refused(project, "fix-issue", *args) == f"ll-loop: error: loop 'fix-issue': {message}"


def test_a_context_file_value_of_the_wrong_type_is_refused(project: Path) -> None:
    (project / "v.json").write_text('{"issue": "12", "labels": "a"}')
    assert refused(project, "fix-issue", "--context-file", "v.json") == (
        "ll-loop: error: loop 'fix-issue': parameter 'issue' (context file v.json): "
        "expected a whole number, got '12'"
    )


def test_a_value_not_among_the_choices_is_refused(project: Path) -> None:
    assert refused(project, "fix-issue", "1", "slow") == (
        "ll-loop: error: loop 'fix-issue': parameter 'mode' (the command line): "
        "expected one of quick, deep, got 'slow'"
    )


def test_an_unknown_key_is_refused_with_a_suggestion(project: Path) -> None:
    assert refused(project, "fix-issue", "1", "--set", "isue=2") == (
        "ll-loop: error: loop 'fix-issue': unknown key 'isue' in --set (did you mean issue?)"
    )
    (project / "v.yaml").write_text("issue: 1\nlabel: [x]\n")
    assert refused(project, "fix-issue", "--context-file", "v.yaml") == (
        "ll-loop: error: loop 'fix-issue': unknown key 'label' in context file v.yaml "
        "(did you mean labels?)"
    )
    assert refused(project, "fix-issue", "--set", "issue") == (
        "ll-loop: error: --set issue: expected KEY=VALUE"
    )


def test_a_given_value_is_data_never_filled_in(project: Path) -> None:
    # A value may come from someone else (an issue title in CI): a `${...}` in it stays as
    # written, so it can read no environment variable and no other value.
    secret = {**os.environ, "LL_TEST_TOKEN": "s3cret"}
    done = llproc.ll_loop(
        project,
        "fix-issue",
        "1",
        "--set",
        "notes=${context.notes}",
        "--set",
        "greeting=${env.LL_TEST_TOKEN} $${x} $(id)",
        env=secret,
    )
    assert done.returncode == ExitCode.OK, done.stderr
    words = shown(project).split("]")
    assert "[${context.notes}" in words
    assert "[${env.LL_TEST_TOKEN} $${x} $(id)" in words
    assert "s3cret" not in done.stderr + shown(project)
    resumed = llproc.state(project, "fix-issue")["context"]["greeting"]
    assert "s3cret" not in resumed  # the saved run keeps the value as data too


def test_too_many_values_say_how_many_the_loop_takes(project: Path) -> None:
    args = ("1", "deep", "a", "1", "no", "n.md", "extra")
    assert refused(project, "fix-issue", *args) == (
        "ll-loop: error: loop 'fix-issue' takes 6 values (issue, mode, labels, ratio, dry, "
        "notes), got 7: extra extra"
    )


def test_a_context_file_that_is_no_mapping_is_refused(project: Path) -> None:
    (project / "v.json").write_text("[1, 2]")
    assert refused(project, "fix-issue", "--context-file", "v.json") == (
        "ll-loop: error: context file v.json: expected a mapping of KEY: VALUE"
    )
    assert refused(project, "fix-issue", "--context-file", "none.json") == (
        "ll-loop: error: context file none.json: no such file"
    )
    assert refused(project, "fix-issue", "--context-file", ".loops") == (
        "ll-loop: error: context file .loops: is a directory"
    )
    (project / "bad.yaml").write_text("issue: [1\n")
    assert refused(project, "fix-issue", "--context-file", "bad.yaml").startswith(
        "ll-loop: error: context file bad.yaml:2:1: "
    )
    # a device is not read at all (/dev/zero filled memory until killed, then was read to
    # the size cap)
    assert refused(project, "fix-issue", "--context-file", "/dev/zero") == (
        "ll-loop: error: context file /dev/zero: is a character device"
    )


def in_bash(root: Path, script: str, env: dict[str, str] | None = None) -> CompletedProcess[str]:
    """*script* run by real bash in *root*, `$1` the installed `ll-loop` console script: for
    `--context-file <(...)`, which bash gives as a pipe (`/dev/fd/63`)."""
    return subprocess.run(
        ["bash", "-c", script, "bash", str(Path(sys.executable).parent / "ll-loop")],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(30),
        env={**os.environ, **(env or {})},
    )


def test_a_context_file_from_process_substitution_is_read(project: Path) -> None:
    # `--context-file <(jq ...)` worked in the foreground on main; refused as a FIFO after.
    values = "issue: 7\nmode: deep\nlabels: [a, b]\n"
    done = in_bash(project, f'"$1" run fix-issue --context-file <(printf "{values}") -q')
    assert done.returncode == ExitCode.OK, done.stderr
    assert shown(project) == "[7][deep][a][b][0.5][false][notes.md][hello]"
    done = in_bash(project, """"$1" run fix-issue --context-file <(printf '{"issue": 8}') -q""")
    assert done.returncode == ExitCode.OK, done.stderr
    assert shown(project).startswith("[8][quick]")


def test_a_fifo_whose_writer_comes_later_is_read(project: Path) -> None:
    fifo = project / "values.yaml"
    os.mkfifo(fifo)
    proc = llproc.start(project, "run", "fix-issue", "--context-file", "values.yaml", "-q")
    writer: list[int] = []

    def opened() -> bool:  # a writer's open fails (ENXIO) until ll-loop has it open to read
        try:
            writer.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            return proc.poll() is not None  # ended without opening it: the test fails below
        return True

    llproc.wait_for(opened, timeout=20, what="ll-loop to open the FIFO")
    for fd in writer:
        os.write(fd, b"issue: 9\n")
        os.close(fd)
    out, err = llproc.finish(proc, timeout=20)
    assert proc.returncode == ExitCode.OK, err
    assert shown(project).startswith("[9][quick]")


def test_a_fifo_nobody_writes_to_ends_by_the_deadline(project: Path) -> None:
    # Opening a FIFO nobody writes to and reading it blocks for ever: the run hung before its
    # first step. It is waited on for a writer until the read deadline, then refused.
    seconds = round(scaled(1.0), 1)
    os.mkfifo(project / "values.json")
    began = time.monotonic()
    proc = llproc.start(
        project,
        "run",
        "fix-issue",
        "--context-file",
        "values.json",
        env={READ_SECONDS_ENV: str(seconds)},
    )
    out, err = llproc.finish(proc, timeout=seconds + 20)
    assert (proc.returncode, out, err) == (
        ExitCode.USAGE,
        "",
        f"ll-loop: error: context file values.json: not read within {seconds:g}s\n",
    )
    assert time.monotonic() - began >= seconds  # it did wait for a writer
    assert not (project / ".loops" / ".running").exists()  # no run was started


def test_a_read_time_that_is_no_number_of_seconds_is_refused(project: Path) -> None:
    for given in ("abc", "0", "-1", "inf", "nan"):
        done = in_bash(
            project,
            '"$1" run fix-issue --context-file <(echo "issue: 1")',
            env={READ_SECONDS_ENV: given},
        )
        assert (done.returncode, done.stderr) == (
            ExitCode.FAILED,
            f"ll-loop: error: {READ_SECONDS_ENV}={given}: expected a number of seconds above 0\n",
        )
    assert not (project / ".loops" / ".running").exists()


def test_the_read_time_is_not_read_for_a_regular_context_file(project: Path) -> None:
    # Only a pipe is read by the deadline: a bad LL_LOOP_READ_SECONDS stopped runs that
    # read no pipe at all.
    (project / "values.yaml").write_text("issue: 5\n")
    done = in_bash(
        project, '"$1" run fix-issue --context-file values.yaml', env={READ_SECONDS_ENV: "abc"}
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert shown(project).startswith("[5][quick]")


def test_a_pipe_held_open_without_writing_ends_by_the_deadline(project: Path) -> None:
    seconds = round(scaled(1.0), 1)
    # The writer (sleep; its stdout is the pipe, its stderr away from ours) outlives
    # ll-loop: its pid is written first, to end it after.
    writer = project / "writer.pid"
    script = (
        '"$1" run fix-issue --context-file '
        "<(echo $BASHPID > writer.pid; exec sleep 600 2>/dev/null)"
    )
    try:
        done = in_bash(project, script, env={READ_SECONDS_ENV: str(seconds)})
    finally:
        if writer.exists():
            os.kill(int(writer.read_text()), signal.SIGKILL)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.fullmatch(
        rf"ll-loop: error: context file /dev/fd/\d+: not read within {seconds:g}s\n", done.stderr
    ), done.stderr


def test_an_endless_pipe_stops_at_the_size_cap(project: Path) -> None:
    done = in_bash(project, '"$1" run fix-issue --context-file <(yes)')
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.fullmatch(
        r"ll-loop: error: context file /dev/fd/\d+: larger than 32 MiB\n", done.stderr
    ), done.stderr
    assert not (project / ".loops" / ".running").exists()


def test_a_background_run_refuses_a_pipe_before_it_starts(project: Path) -> None:
    # The detached run reads the file again by its name: a pipe, read once, would be gone.
    done = in_bash(project, """"$1" run fix-issue --background --context-file <(echo 'issue: 3')""")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.fullmatch(
        r"ll-loop: error: context file /dev/fd/\d+: is a pipe, which --background cannot "
        r"read \(the detached run reads the file again\): use a regular file\n",
        done.stderr,
    ), done.stderr
    assert not (project / ".loops" / ".running").exists()  # no run was started
    os.mkfifo(project / "values.yaml")  # a named FIFO too, refused without waiting on it
    assert refused(project, "fix-issue", "--background", "--context-file", "values.yaml") == (
        "ll-loop: error: context file values.yaml: is a pipe, which --background cannot read "
        "(the detached run reads the file again): use a regular file"
    )


def test_a_loop_file_from_a_pipe_is_still_refused(project: Path) -> None:
    # Only a context file is read from a pipe: a loop file is read again (resume, status,
    # a background run), so it must be a file.
    done = in_bash(project, '"$1" run <(cat .loops/fix-issue.yaml) 1')
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.fullmatch(r"ll-loop: error: /dev/fd/\d+: is a FIFO, not a loop file\n", done.stderr)
    assert not (project / ".loops" / ".running").exists()


def test_help_after_a_name_lists_its_parameters(project: Path) -> None:
    done = run(project, "run", "fix-issue", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ll-loop run ")
    section = done.stdout.split("\n\n")[-1]
    assert section == (
        "parameters of fix-issue (ll-loop run fix-issue ISSUE MODE LABELS RATIO DRY NOTES):\n"
        "  issue  (integer, required)\n"
        "      the issue to fix\n"
        "  mode  (string, default quick; one of: quick, deep)\n"
        "      how hard to try\n"
        "  labels  (list, default bug)\n"
        "  ratio  (number, default 0.5)\n"
        "  dry  (boolean, default false)\n"
        "  notes  (path, default notes.md)\n"
    )
    shorthand = run(project, "fix-issue", "--help")
    assert shorthand.stdout == done.stdout
    plain = run(project, "run", "--help")
    assert plain.returncode == 0
    assert "parameters of" not in plain.stdout
    assert "--context-file FILE" in plain.stdout
    missing = run(project, "run", "nope", "--help")
    assert missing.returncode == ExitCode.USAGE
    assert missing.stderr.startswith("ll-loop: error: no loop named 'nope'")


def test_dry_run_shows_the_values_this_run_would_use(project: Path) -> None:
    done = run(project, "run", "fix-issue", "--dry-run", "--set", "labels=a,b")
    assert done.returncode == 0, done.stderr
    assert "context: greeting='hello'\n" in done.stdout
    assert (
        "parameters:\n"
        "  issue = not given  (integer, required)\n"
        "      the issue to fix\n"
        '  mode = "quick"  (string, default quick; one of: quick, deep)\n'
        "      how hard to try\n"
        '  labels = ["a", "b"]  (list, default bug)\n'
    ) in done.stdout
    bad = run(project, "run", "fix-issue", "--dry-run", "x")
    assert bad.returncode == ExitCode.USAGE  # a given value is still checked


def test_resume_keeps_the_values_and_takes_no_new_ones(project: Path) -> None:
    (project / ".loops" / "twice.yaml").write_text(
        "name: twice\n"
        "parameters:\n  issue: integer\n  tags: {type: list, default: [a]}\n"
        "initial: show\n"
        "states:\n"
        "  show:\n"
        "    action: |\n"
        "      printf '[%s]' ${context.issue} ${words:context.tags} >> seen.txt; echo >> seen.txt\n"
        '      [ "$(wc -l < seen.txt)" -ge 2 ]\n'
        "    on_success: done\n"
        "    on_failure: show\n"
        "  done:\n    terminal: true\n"
    )
    first = run(project, "twice", "77", "--set", "tags=x,y z", "-n", "1", "-q")
    assert first.returncode == ExitCode.MAX_ITERATIONS, first.stderr
    state = llproc.state(project, "twice")
    # The loop reads no ${context.run_dir}: the run gets no scratch folder (scratch.py).
    assert state["context"] == {"issue": 77, "tags": ["x", "y z"]}
    again = run(project, "resume", "twice", "5")
    assert again.returncode == ExitCode.USAGE
    assert again.stderr.endswith(
        "ll-loop: error: resume takes no parameter values (got 5): the run goes on with the "
        "values it was started with\n"
    )
    loop_file = project / ".loops" / "twice.yaml"
    original = loop_file.read_text()
    loop_file.write_text(original.replace("  issue: integer\n", "  issue: integer\n  new: path\n"))
    changed = run(project, "resume", "twice", "-n", "5")
    assert changed.returncode == ExitCode.FAILED
    assert changed.stderr == (
        "ll-loop: error: cannot resume: the saved run of loop 'twice' has no value for its "
        "parameter 'new' (the loop file changed?); start it again with 'll-loop run twice'\n"
    )
    loop_file.write_text(original)
    resumed = run(project, "resume", "twice", "-n", "5", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert (project / "seen.txt").read_text() == "[77][x][y z]\n[77][x][y z]\n"


def test_a_background_run_gets_the_same_values(project: Path) -> None:
    (project / "v.json").write_text('{"ratio": 1.25}')
    done = run(
        project, "fix-issue", "31", "--context-file", "v.json", "--set", "mode=deep", "--background"
    )
    assert done.returncode == 0, done.stderr
    llproc.wait_for(
        lambda: llproc.state(project, "fix-issue").get("status") == "completed",
        timeout=15,
        what="the background run to complete",
    )
    assert shown(project) == "[31][deep][bug][1.25][false][notes.md][hello]"


def test_the_json_result_and_state_keep_the_typed_values(project: Path) -> None:
    done = run(project, "fix-issue", "8", "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["final_state"] == "done"
    status = run(project, "status", "fix-issue")
    assert status.stdout.splitlines()[-1] == (
        "parameters: issue=8, mode=quick, labels=bug, ratio=0.5, dry=false, notes=notes.md"
    )
    context = llproc.state(project, "fix-issue")["context"]
    assert context["issue"] == 8
    assert context["labels"] == ["bug"]
    assert context["dry"] is False


def test_a_paradigm_file_takes_parameters_and_compiles_them(project: Path) -> None:
    (project / ".loops" / "grow.yaml").write_text(
        "paradigm: goal\nname: grow\ngoal: enough\n"
        "tools: ['test ${context.n} -ge 3 && echo ${context.n} > shown.txt', 'echo more']\n"
        "parameters:\n  n: {type: integer, default: 5, description: how many}\n"
    )
    done = run(project, "grow", "-q")
    assert done.returncode == 0, done.stderr
    assert shown(project) == "5\n"
    assert run(project, "grow", "2", "-n", "1", "-q").returncode == ExitCode.MAX_ITERATIONS
    compiled = run(project, "compile", ".loops/grow.yaml", "-o", "-")
    assert compiled.returncode == 0, compiled.stderr
    assert (
        "name: grow\nparameters:\n  'n':\n    type: integer\n    default: 5\n"
        "    description: how many\ninitial: evaluate\n"
    ) in compiled.stdout
    (project / ".loops" / "grown.yaml").write_text(
        compiled.stdout.replace("name: grow", "name: grown")
    )
    assert run(project, "grown", "7", "-q").returncode == 0
    assert shown(project) == "7\n"


def test_parameters_written_for_little_loops_run(tmp_path: Path) -> None:
    """A parameter also in `context:` (its default), one optional without a default, and
    `values:` (choices): validated and run with real bash, as little-loops runs them."""
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "oracle.yaml").write_text(
        "name: oracle\n"
        "parameters:\n"
        "  depth: {type: integer, required: false}\n"
        "  source: {type: string, required: false}\n"
        "  mode: {type: string, values: [fast, deep], default: fast}\n"
        "context:\n  depth: '2'\n"
        "initial: a\nstates:\n  a:\n"
        "    action: 'echo \"${context.depth} [${context.source?}] ${context.mode}\" > shown.txt'\n"
        "    next: done\n  done:\n    terminal: true\n"
    )
    assert run(tmp_path, "validate", "oracle").returncode == 0
    assert run(tmp_path, "run", "oracle", "-q").returncode == 0
    assert shown(tmp_path) == "2 [] fast\n"
    assert run(tmp_path, "run", "oracle", "5", "x", "deep", "-q").returncode == 0
    assert shown(tmp_path) == "5 [x] deep\n"
    wrong = run(tmp_path, "run", "oracle", "--set", "mode=slow")
    assert wrong.returncode == ExitCode.USAGE
    assert "expected one of fast, deep, got 'slow'" in wrong.stderr


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("v.yaml", 'issue: 1\nmode: "quick\\0"\n', "the value of 'mode'"),
        ("v.json", '{"issue": 1, "labels": ["a", "b\\u0000"]}', "the value of 'labels.1'"),
    ],
    ids=["yaml", "json-list"],
)
def test_a_context_file_value_with_a_nul_byte_is_refused_before_the_run(
    project: Path, name: str, text: str, where: str
) -> None:
    (project / name).write_text(text)
    assert refused(project, "fix-issue", "--context-file", name) == (
        f"ll-loop: error: context file {name}: {where} has a NUL byte, which bash cannot hold"
    )
