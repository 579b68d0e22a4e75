"""`scripts/dev`: `demo` (the README's first command) runs a shipped loop, flags and all; `test`
says how long it took."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.slowdown import scaled

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what `scripts/dev demo` and its default loop (`.loops/ci-checks.yaml`, which
    checks this repo's own files) read: the script, pyproject.toml, the package, .loops/."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(REPO / "scripts" / "dev", tmp_path / "scripts" / "dev")
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    skip = shutil.ignore_patterns(".*", "__pycache__")
    shutil.copytree(
        REPO / "scripts" / "little_loops", tmp_path / "scripts" / "little_loops", ignore=skip
    )
    shutil.copytree(REPO / ".loops", tmp_path / ".loops", ignore=skip)
    return tmp_path


def demo(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    venv = Path(sys.executable).parent.parent  # already set up: the stamp matches
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "dev"), "demo", *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env={**os.environ, "LL_VENV": str(venv)},
    )


@pytest.mark.parametrize(
    ("args", "loop"),
    [
        ((), "ci-checks"),
        (("-q",), "ci-checks"),
        (("hello", "--quiet"), "hello"),  # a shipped loop, by its name
        (("--no-color", "-q"), "ci-checks"),
    ],
)
def test_demo_runs_a_loop_with_the_flags_given(
    checkout: Path, args: tuple[str, ...], loop: str
) -> None:
    result = demo(checkout, *args)
    assert result.returncode == 0, result.stderr
    assert "Loop completed: done" in result.stderr
    assert (checkout / ".loops" / ".running" / f"{loop}.state.json").is_file()
    if "-q" in args or "--quiet" in args:
        assert "[1/" not in result.stderr  # no progress lines


def test_demo_of_an_unknown_loop_is_one_line(checkout: Path) -> None:
    result = demo(checkout, "nope")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "no loop named 'nope'" in result.stderr


@pytest.fixture
def stub_venv(tmp_path: Path) -> Path:
    """A venv for `scripts/dev` whose python is this one and whose ruff and mypy only say
    they ran (`MYPY_EXIT` sets mypy's exit code), its stamp matching pyproject.toml."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    stubs = {
        "python": f'exec {sys.executable} "$@"',
        "ruff": 'echo "ruff $*"',
        "mypy": 'echo mypy; exit "${MYPY_EXIT:-0}"',
    }
    for name, body in stubs.items():
        (venv / "bin" / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (venv / "bin" / name).chmod(0o755)
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".ll-installed").write_text(digest + "\n")
    return venv


@pytest.mark.parametrize(
    ("mypy_exit", "last"), [("0", "all checks passed in"), ("1", "FAILED after")]
)
def test_the_test_command_says_how_long_it_took(
    checkout: Path, stub_venv: Path, mypy_exit: str, last: str
) -> None:
    (checkout / "scripts" / "tests").mkdir()
    (checkout / "scripts" / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    result = subprocess.run(
        [
            "bash",
            str(checkout / "scripts" / "dev"),
            "test",
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env={**os.environ, "LL_VENV": str(stub_venv), "MYPY_EXIT": mypy_exit},
    )
    assert result.returncode == (0 if mypy_exit == "0" else 1), result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert re.fullmatch(rf"dev: {last} \d+m \d+s", result.stderr.splitlines()[-1]), result.stderr


def test_the_readme_names_each_system_package_the_tests_install() -> None:
    """The Debian packages `scripts/dev test` installs (its `system_tools`) are the ones the
    README's paragraph on `.ci/run` names, so a package added there is said here."""
    script = (REPO / "scripts" / "dev").read_text()
    installed = re.findall(r"missing\+=\(([\w.-]+)\)", script)
    assert "bubblewrap" in installed
    readme = (REPO / "README.md").read_text()
    start = readme.index("`.ci/run` runs exactly `scripts/dev test`")
    paragraph = readme[start : readme.index("\n\n", start)]
    named = re.findall(r"[(;]\s?([\w.-]+), to\s", paragraph)
    assert named == installed
