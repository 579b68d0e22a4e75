"""`ll-loop completion bash|zsh`: the generated script completes in a real bash and a real zsh."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import llproc

from little_loops.cli import build_parser
from little_loops.cli.completion import _subcommands
from little_loops.loops import library_loops


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with two loops, and the folder two levels below its root to complete in."""
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "alpha.yaml").write_text("name: alpha\n")
    (tmp_path / ".loops" / "beta.fsm.yaml").write_text("name: beta\n")
    (tmp_path / ".loops" / "notes.txt").write_text("not a loop\n")
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    (deep / "out.yaml").write_text("")
    return tmp_path


def script(root: Path, shell: str) -> str:
    result = llproc.ll_loop(root, "completion", shell)
    assert result.returncode == 0, result.stderr
    return result.stdout


def complete_bash(root: Path, words: list[str]) -> list[str]:
    """COMPREPLY of the generated function for `words` (the last is the one completed)."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = (
        f'eval "$1"\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n_ll_loop\n'
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    out = subprocess.run(
        ["bash", "-c", program, "bash", script(root, "bash")],
        cwd=root / "src" / "pkg",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(line for line in out.splitlines() if line)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["ll-loop", "st"], ["status", "stop"]),
        (["ll-loop", "al"], ["alpha"]),  # the `ll-loop NAME` shorthand
        (["ll-loop", "run", ""], ["alpha", "beta", "out.yaml"]),  # names, and files here
        (["ll-loop", "status", "b"], ["beta"]),
        (["ll-loop", "graph", "--format", ""], ["dot", "mermaid"]),
        (["ll-loop", "run", "--max-c"], ["--max-cost"]),
        (["ll-loop", "run", "-n", ""], []),  # a number: nothing to offer
        (["ll-loop", "compile", "-o", "o"], ["out.yaml"]),
        (["ll-loop", "alpha", "--qu"], ["--queue", "--quiet"]),
        (["ll-loop", "completion", ""], ["bash", "zsh"]),
        (["ll-loop", "ne"], ["new"]),
        (["ll-loop", "new", "--from", ""], library_loops()),  # the shipped loops
    ],
)
def test_bash_completes_commands_flags_values_and_loop_names(
    project: Path, words: list[str], expected: list[str]
) -> None:
    assert complete_bash(project, words) == expected


def test_every_flag_of_every_command_completes(project: Path) -> None:
    for name, sub in _subcommands(build_parser()).items():
        flags = sorted(flag for action in sub._actions for flag in action.option_strings)
        assert complete_bash(project, ["ll-loop", name, "-"]) == flags, name


def with_ll_loop_on_path() -> dict[str, str]:
    """The environment with the console script's folder first on PATH, as after pip install."""
    scripts = Path(sys.executable).parent
    assert (scripts / "ll-loop").exists(), "the ll-loop console script is not installed"
    return {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_the_documented_bash_one_liner_registers_it(project: Path) -> None:
    out = subprocess.run(
        ["bash", "-c", 'eval "$(ll-loop completion bash)" && complete -p ll-loop'],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        env=with_ll_loop_on_path(),
    ).stdout
    assert out == "complete -F _ll_loop ll-loop\n"


@pytest.mark.skipif(
    shutil.which("zsh") is None, reason="zsh is not installed (scripts/dev adds it)"
)
def test_zsh_runs_it_through_bashcompinit(project: Path) -> None:
    show = 'print -l -- "${COMPREPLY[@]}"'
    program = (
        'eval "$(ll-loop completion zsh)"\n'
        "print -r -- ${_comps[ll-loop]}\n"
        "setopt ksharrays\n"
        f"COMP_WORDS=(ll-loop graph --format ''); COMP_CWORD=3; _ll_loop; {show}\n"
        f"COMP_WORDS=(ll-loop run ''); COMP_CWORD=2; _ll_loop; {show}\n"
    )
    result = subprocess.run(
        ["zsh", "-f", "-c", program],
        cwd=project / "src" / "pkg",
        capture_output=True,
        text=True,
        env=with_ll_loop_on_path(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].endswith("_ll_loop")  # compdef'd through bashcompinit
    assert lines[1:3] == ["mermaid", "dot"]
    assert {"alpha", "beta", "out.yaml"} <= set(lines[3:])


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_hostile_loop_file_name_is_offered_as_text_never_run(project: Path, shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell} (scripts/dev test installs it)")
    hostile = "$(touch PWNED)`touch PWNED2`"
    (project / ".loops" / f"{hostile}.yaml").write_text("name: x\n")
    show = 'printf "%s\\n" "${COMPREPLY[@]}"'
    setup = "setopt ksharrays\n" if shell == "zsh" else ""
    program = (
        f'eval "$(ll-loop completion {shell})"\n{setup}'
        f"COMP_WORDS=(ll-loop run ''); COMP_CWORD=2; _ll_loop; {show}\n"
        f"COMP_WORDS=(ll-loop ''); COMP_CWORD=1; _ll_loop; {show}\n"
    )
    argv = [shell, "-f", "-c", program] if shell == "zsh" else [shell, "-c", program]
    result = subprocess.run(
        argv,
        cwd=project / "src" / "pkg",
        capture_output=True,
        text=True,
        env=with_ll_loop_on_path(),
    )
    assert result.returncode == 0, result.stderr
    assert not (project / "src" / "pkg" / "PWNED").exists()
    assert not (project / "src" / "pkg" / "PWNED2").exists()
    assert result.stdout.splitlines().count(hostile) == 2  # offered, as it is, both times
