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


def complete_bash(root: Path, words: list[str], env: dict[str, str] | None = None) -> list[str]:
    """COMPREPLY of the generated function for `words` (the last is the one completed), as
    bash calls it: with its COMP_WORDBREAKS, a `library:x` is the three words `library`,
    `:` and `x`."""
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
        env=env,
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


SHIPPED = [f"library:{name}" for name in library_loops()]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["ll-loop", "run", "lib"], SHIPPED),
        (["ll-loop", "lib"], SHIPPED),  # the `ll-loop NAME` shorthand
        (["ll-loop", "run", "library", ":"], library_loops()),  # bash puts in what follows `:`
        (["ll-loop", "run", "library", ":", "fix"], ["fix-ci", "fix-each", "fix-tests"]),
        (["ll-loop", "validate", "library", ":", "hel"], ["hello"]),
        (["ll-loop", "run", ""], ["alpha", "beta", "out.yaml"]),  # not unless asked for
    ],
)
def test_bash_completes_shipped_loops_after_library(
    project: Path, words: list[str], expected: list[str]
) -> None:
    assert complete_bash(project, words) == expected


PARAMETERS = """\
name: gamma
parameters:
  count: {type: integer, default: 3}
  label: {type: string, default: x}
context:
  greeting: hi
initial: a
states:
  a: {terminal: true}
"""


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["ll-loop", "run", "gamma", "--set", ""], ["count=", "greeting=", "label="]),
        (["ll-loop", "gamma", "--set", "c"], ["count="]),  # the shorthand
        (["ll-loop", "run", "-n", "3", "gamma", "--set", "x", "=", "1", "--set", "l"], ["label="]),
        (["ll-loop", "run", "--set", ""], []),  # no loop named yet
        (["ll-loop", "run", "nope", "--set", ""], []),  # no such loop: nothing, no error
        (["ll-loop", "run", "library", ":", "ralph", "--set", "prompt_p"], ["prompt_path="]),
    ],
)
def test_bash_completes_the_keys_set_takes(
    project: Path, words: list[str], expected: list[str]
) -> None:
    (project / ".loops" / "gamma.yaml").write_text(PARAMETERS)
    assert complete_bash(project, words, env=with_ll_loop_on_path()) == expected


def test_completion_keys_lists_a_loops_parameters_then_its_context(project: Path) -> None:
    (project / ".loops" / "gamma.yaml").write_text(PARAMETERS)
    keys = llproc.ll_loop(project, "completion", "--keys", "gamma")
    assert (keys.returncode, keys.stdout) == (0, "count\nlabel\ngreeting\n")
    missing = llproc.ll_loop(project, "completion")
    assert (missing.returncode, missing.stderr) == (
        2,
        "ll-loop: error: completion needs the shell: bash or zsh\n",
    )


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


def interactive(shell: str, cwd: Path, typed: str, shown: str) -> str:
    """Type *typed* (TABs and all) into a real interactive *shell* that loaded the script, as
    a person would, and read the terminal until *shown* appears on it (or a minute passes)."""
    import pty
    import select
    import time

    primary, secondary = pty.openpty()
    env = {**with_ll_loop_on_path(), "PS1": "ready> ", "TERM": "dumb", "INPUTRC": "/dev/null"}
    process = subprocess.Popen(
        ["bash", "--norc", "--noprofile", "-i"] if shell == "bash" else ["zsh", "-f", "-i"],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(secondary)
    screen = b""
    try:
        os.write(primary, f'eval "$(ll-loop completion {shell})"; echo load""ed\n'.encode())
        deadline = time.monotonic() + 60
        for wanted, then in ((b"loaded", typed.encode()), (shown.encode(), b"")):
            while wanted not in screen and time.monotonic() < deadline:
                if select.select([primary], [], [], 0.5)[0]:
                    screen += os.read(primary, 4096)
            if then:
                os.write(primary, then)
        return screen.decode(errors="replace")
    finally:
        process.kill()
        process.wait()
        os.close(primary)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("ll-loop run library:ral\t", "ll-loop run library:ralph "),
        ("ll-loop library:fix-t\t", "ll-loop library:fix-tests "),
        ("ll-loop run library:ralph --set prompt_p\t", "--set prompt_path="),
        ("ll-loop gamma --set la\t", "--set label="),  # bash adds no space after it; zsh does
    ],
)
def test_a_real_interactive_shell_completes_library_names_and_keys(
    project: Path, shell: str, typed: str, shown: str
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell} (scripts/dev test installs it)")
    (project / ".loops" / "gamma.yaml").write_text(PARAMETERS)
    screen = interactive(shell, project, typed, shown)
    assert shown in screen, screen
