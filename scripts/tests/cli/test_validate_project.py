"""`ll-loop validate` checks each kind of file of `.loops/` as what it is, and with no
argument every file of the project: run as the installed console script."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks

from little_loops.fsm.facts.outcomes import ExitCode


def _reuse_block(first_line: str) -> str:
    """The block of docs/reuse.md that starts with *first_line* (`# .loops/lib/checks.yaml`)."""
    return next(
        b.text for b in all_blocks() if b.doc == "docs/reuse.md" and b.text.startswith(first_line)
    )


AGENTS = """\
agents:
  mine:
    command: ./tools/my-agent --fast
    prompt: argument
    cost_pattern: 'cost: \\$([0-9.]+)'
"""
OTHER = """\
name: other
initial: go
states:
  go:
    action: "true"
    next: done
  done:
    terminal: true
"""


def _project(root: Path) -> Path:
    """A project whose `.loops/` holds every kind of file, and run files to leave alone."""
    loops = root / ".loops"
    (loops / "lib").mkdir(parents=True)
    (loops / "oracles").mkdir()
    (loops / "agents.yaml").write_text(AGENTS)
    (loops / "lib" / "checks.yaml").write_text(_reuse_block("# .loops/lib/checks.yaml"))
    (loops / "lint.yaml").write_text(_reuse_block("# .loops/lint.yaml"))
    (loops / "oracles" / "other.yml").write_text(OTHER)
    for run_folder in (".running", ".history/lint/ab12"):
        (loops / run_folder).mkdir(parents=True)
        (loops / run_folder / "scratch.yaml").write_text("not: [a loop")
    (loops / ".hidden.yaml").write_text("not: [a loop")
    (loops / "notes.md").write_text("# notes\n")
    return root


ALL_OK = [
    ".loops/agents.yaml: ok",
    ".loops/lint.yaml: ok",
    ".loops/lib/checks.yaml: ok",
    ".loops/oracles/other.yml: ok",
]


def test_agents_file_and_fragment_library_named_are_checked_as_what_they_are(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    done = llproc.console(root, "validate", ".loops/agents.yaml", ".loops/lib/checks.yaml")
    assert done.stdout.splitlines() == [".loops/agents.yaml: ok", ".loops/lib/checks.yaml: ok"]
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr


def test_no_argument_checks_every_file_of_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = llproc.console(root, "validate")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert done.stdout.splitlines() == ALL_OK
    assert done.stderr == ""


def test_no_argument_fails_when_any_file_of_any_kind_fails(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".loops" / "oracles" / "other.yml").write_text(OTHER.replace("next:", "nxt:"))
    failed = llproc.console(root, "validate", "-q")
    assert failed.returncode == ExitCode.USAGE
    assert failed.stdout.splitlines() == [
        ".loops/oracles/other.yml:6: error: loop 'other' > states > go > nxt: unknown key"
        " (did you mean next?)",
    ]
    (root / ".loops" / "oracles" / "other.yml").write_text(OTHER)
    checks = root / ".loops" / "lib" / "checks.yaml"
    checks.write_text(checks.read_text().replace("fragments:", "fragmnets:"))
    assert llproc.console(root, "validate", "-q").stdout.splitlines() == [
        ".loops/lint.yaml:4: error: import: 'lib/checks.yaml' is no fragment library"
        " (no fragments:)",
        ".loops/lib/checks.yaml:2: error: fragmnets: unknown key (did you mean fragments?)",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("    evaluate:\n      type: exit_code", "    evalute:\n      type: exit_code"),
            ".loops/lib/checks.yaml:6: error: fragments > shell_exit > evalute: unknown key"
            " (did you mean evaluate?)",
        ),
        (
            ("fragments:", "import: [lib/none.yaml]\nfragment:"),
            ".loops/lib/checks.yaml:3: error: fragment: unknown key (did you mean fragments?)",
        ),
        (
            ("fragments:", "import: [none.yaml]\nfragments:"),
            ".loops/lib/checks.yaml:2: error: import: no file 'none.yaml' (looked for",
        ),
        (
            ("  shell_exit:\n", "  bare: 3\n  shell_exit:\n"),
            ".loops/lib/checks.yaml:3: error: fragments > bare: expected a mapping of state"
            " settings",
        ),
    ],
    ids=["fragment key", "library key", "missing import", "fragment not a mapping"],
)
def test_a_broken_fragment_library_is_one_line_naming_the_problem(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    root = _project(tmp_path)
    checks = root / ".loops" / "lib" / "checks.yaml"
    old, new = change
    assert old in checks.read_text()
    checks.write_text(checks.read_text().replace(old, new, 1))
    done = llproc.console(root, "validate", "-q", ".loops/lib/checks.yaml")
    assert done.returncode == ExitCode.USAGE
    (line,) = done.stdout.splitlines()
    assert line.startswith(expected), line


def test_a_broken_agents_file_is_named_at_its_line(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".loops" / "agents.yaml").write_text(AGENTS + "  other: 3\nextra: 1\n")
    done = llproc.console(root, "validate", "-q", ".loops/agents.yaml")
    assert done.returncode == ExitCode.USAGE
    assert done.stdout.splitlines() == [
        ".loops/agents.yaml:6: error: agents > other: expected a mapping with a command, got 3",
        ".loops/agents.yaml:7: error: unknown key 'extra' (expected only agents:)",
    ]


def test_no_argument_without_a_loops_folder_is_one_line(tmp_path: Path) -> None:
    done = llproc.console(tmp_path, "validate")
    assert done.returncode == ExitCode.USAGE
    assert done.stdout == ""
    assert done.stderr == (
        "ll-loop validate: error: no .loops/ folder here or above: name the files to check\n"
    )
    (tmp_path / ".loops").mkdir()
    empty = llproc.console(tmp_path, "validate")
    assert empty.returncode == ExitCode.USAGE
    assert empty.stderr == (
        "ll-loop validate: error: no .yaml or .yml file in .loops: nothing to check\n"
    )


def test_a_linked_folder_in_loops_is_not_followed(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "broken.yaml").write_text("not: [a loop")
    (root / ".loops" / "linked").symlink_to(outside)
    (root / ".loops" / "loop-back").symlink_to(root / ".loops")
    done = llproc.console(root, "validate")
    assert done.returncode == ExitCode.OK, done.stdout
    assert done.stdout.splitlines() == ALL_OK


def test_fix_with_no_argument_rewrites_loops_and_libraries_not_the_agents_file(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    loops = root / ".loops"
    (loops / "old.yaml").write_text(
        OTHER.replace("name: other", "name: old").replace(
            "    next: done", "    on_yes: done\n    on_no: done"
        )
    )
    checks = loops / "lib" / "checks.yaml"
    checks.write_text(
        checks.read_text().replace(
            "    evaluate:\n      type: exit_code",
            "    on_yes: x\n    evaluate:\n      type: exit_code",
        )
    )
    before = (loops / "agents.yaml").read_bytes()
    done = llproc.console(root, "validate", "--fix")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "on_success: done" in (loops / "old.yaml").read_text()
    assert "on_success: x" in checks.read_text()
    assert (loops / "agents.yaml").read_bytes() == before
    assert ".loops/agents.yaml: ok" in done.stdout.splitlines()


WRITES_YAML = """\
name: writes
initial: go
states:
  go:
    action: |
      printf 'result: 3\\n' > ${context.run_dir}summary.yaml
    next: done
  done:
    terminal: true
"""


def test_no_argument_leaves_out_the_files_a_compat_run_wrote_in_its_folder(
    tmp_path: Path,
) -> None:
    """A `--compat` run's folder is `.loops/runs/<loop>-<time>/`: what the run wrote there
    is no file of the project to check (the pre-commit hook would fail on it)."""
    root = _project(tmp_path)
    (root / ".loops" / "writes.yaml").write_text(WRITES_YAML)
    ran = llproc.console(root, "run", "writes", "--compat")
    assert ran.returncode == ExitCode.OK, ran.stdout + ran.stderr
    assert list((root / ".loops" / "runs").glob("writes-*/summary.yaml"))
    done = llproc.console(root, "validate")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert done.stdout.splitlines() == [*ALL_OK[:2], ".loops/writes.yaml: ok", *ALL_OK[2:]]


def test_fix_with_no_argument_checks_a_linked_loop_file_and_rewrites_the_others(
    tmp_path: Path,
) -> None:
    """migrate refuses a link (it would write the file it points to): with no argument,
    `--fix` leaves a linked loop file as it is and still fixes and checks the rest."""
    root = _project(tmp_path / "project")
    loops = root / ".loops"
    outside = tmp_path / "shared.yaml"
    outside.write_text(OTHER.replace("name: other", "name: shared"))
    (loops / "shared.yaml").symlink_to(outside)
    (loops / "old.yaml").write_text(
        OTHER.replace("name: other", "name: old").replace(
            "    next: done", "    on_yes: done\n    on_no: done"
        )
    )
    before = outside.read_bytes()
    done = llproc.console(root, "validate", "--fix")
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "on_success: done" in (loops / "old.yaml").read_text()
    assert outside.read_bytes() == before
    assert (loops / "shared.yaml").is_symlink()
    assert ".loops/shared.yaml: ok" in done.stdout.splitlines()


def test_no_argument_names_a_fifo_in_loops_for_what_it_is_without_opening_it(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    os.mkfifo(root / ".loops" / "pipe.yaml")
    done = llproc.console(root, "validate")
    assert done.returncode == ExitCode.USAGE
    assert ".loops/pipe.yaml: error: is a FIFO, not a loop file" in done.stdout.splitlines()


@pytest.mark.parametrize(
    ("where", "text", "line"),
    [
        ("lib/bad.yaml", 'fragments:\n  f:\n    action: "true"\n    parameters: 5\n', 4),
        (
            "unused.yaml",
            'name: unused\ninitial: a\nfragments:\n  f:\n    action: "true"\n'
            '    parameters: [x]\nstates:\n  a:\n    action: "true"\n    next: done\n'
            "  done:\n    terminal: true\n",
            6,
        ),
    ],
)
def test_a_fragments_parameters_of_the_wrong_shape_are_refused(
    tmp_path: Path, where: str, text: str, line: int
) -> None:
    path = tmp_path / ".loops" / where
    path.parent.mkdir(parents=True)
    path.write_text(text)
    for args in ((f".loops/{where}",), ()):  # the file named, and the whole project
        done = llproc.console(tmp_path, "validate", *args)
        assert done.returncode == ExitCode.USAGE, done.stdout
        (error,) = [x for x in done.stdout.splitlines() if ": error: " in x]
        assert error.startswith(f".loops/{where}:{line}: error: fragment 'f' > parameters: ")
        assert "expected a mapping of parameter names to a type or to settings" in error
        assert error.endswith((", got 5", ", got a list"))


IDLE_VOLATILE = """\
name: idle
initial: a
stall:
  ignore_volatile: false
states:
  a:
    action: "true"
    stall: {ignore_volatile: true}
    next: done
  done:
    terminal: true
"""


def test_ignore_volatile_where_no_same_result_applies_is_a_warning(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "idle.yaml").write_text(IDLE_VOLATILE)
    done = llproc.console(tmp_path, "validate", "idle")
    assert done.returncode == 0, done.stdout
    warned = [x for x in done.stdout.splitlines() if ": warning: " in x]
    assert len(warned) == 2, done.stdout
    assert warned[0].startswith(".loops/idle.yaml:4: warning: loop 'idle' > stall > ignore_")
    assert warned[1].startswith(".loops/idle.yaml:8: warning: loop 'idle' > states > a > stall")
    assert all("does nothing" in x and "same_result" in x for x in warned)
    assert llproc.console(tmp_path, "validate", "--strict", "idle").returncode != 0
    # With a same_result that applies, both settings are read: nothing to say.
    counted = IDLE_VOLATILE.replace(
        "  ignore_volatile: false\n", "  ignore_volatile: false\n  same_result: 3\n", 1
    )
    (loops / "idle.yaml").write_text(counted)
    done = llproc.console(tmp_path, "validate", "idle")
    assert ": warning: " not in done.stdout, done.stdout
    # A state's own same_result makes the loop's setting read there, not the other way.
    (loops / "idle.yaml").write_text(
        IDLE_VOLATILE.replace("{ignore_volatile: true}", "{ignore_volatile: true, same_result: 2}")
    )
    assert ": warning: " not in llproc.console(tmp_path, "validate", "idle").stdout
