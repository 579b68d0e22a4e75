"""A real (non-editable) install has the package data: the schema and the shipped loops."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import llproc
from support.paths import REPO
from support.slowdown import scaled

from little_loops.loops import library_loops

PIP = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", "--no-input"]


def with_claude(env: dict[str, str], root: Path) -> dict[str, str]:
    """*env* with a `claude` first on PATH that leaves `root/claude-called` if it runs: a
    fix-tests run checks for claude before its first step, and must not call it."""
    folder = root / "claude-bin"
    folder.mkdir()
    claude = folder / "claude"
    claude.write_text(f"#!/bin/sh\ntouch {root / 'claude-called'}\nexit 1\n")
    claude.chmod(0o755)
    return {**env, "PATH": f"{folder}{os.pathsep}{env.get('PATH', '')}"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip wheel` builds from a copy of the sources (the repo is left clean)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(
        REPO / "scripts" / "little_loops", src / "scripts" / "little_loops", ignore=ignore
    )
    build = [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src)]
    subprocess.run(build, check=True, capture_output=True, timeout=scaled(120))
    (found,) = (tmp / "dist").glob("little_loops-*.whl")
    return found


def test_the_wheel_holds_the_schema_and_every_shipped_loop(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "little_loops/fsm/fsm-loop-schema.json" in names
    assert "little_loops/loops/__init__.py" in names
    assert "little_loops/fsm/fanout/prompt.yaml" in names  # the child of a prompt branch
    shipped = {n for n in names if n.startswith("little_loops/loops/") and n.endswith(".yaml")}
    assert shipped == {f"little_loops/loops/{name}.yaml" for name in library_loops()}


def test_an_installed_wheel_lists_and_copies_the_shipped_loops(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    install = [*PIP, "install", "--no-deps", "--no-compile", "--target", str(site), str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=scaled(120))
    project = tmp_path / "project"
    project.mkdir()
    env = with_claude({**os.environ, "PYTHONPATH": str(site)}, tmp_path)

    def ll_loop(*args: str) -> subprocess.CompletedProcess[str]:
        return llproc.ll_loop(project, *args, timeout=30, env=env)

    where = subprocess.run(
        [sys.executable, "-c", "import little_loops; print(little_loops.__file__)"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(site)  # the installed copy, not the repo
    listed = ll_loop("new", "--list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == library_loops()
    assert ll_loop("new", "demo", "--from", "hello").returncode == 0
    text = (project / ".loops" / "demo.yaml").read_text()
    assert str(site) not in text  # it is committed: no path of this machine's
    schema = ll_loop("schema")  # what the editor is given instead, in its own settings
    assert schema.stdout == f"{site / 'little_loops' / 'fsm' / 'fsm-loop-schema.json'}\n"
    run = ll_loop("run", "demo", "--quiet")
    assert run.returncode == 0, run.stderr
    # A library loop runs in place from the installed package, in a folder outside the repo:
    # the tests pass at once (`true`), so fix-tests ends done without calling Claude.
    shipped = ll_loop("run", "library:fix-tests", "true", "--quiet")
    assert shipped.returncode == 0, shipped.stderr
    assert "Loop completed: done" in shipped.stderr
    assert not (tmp_path / "claude-called").exists()
    assert not list((site / "little_loops" / "loops").glob("*.fsm.yaml"))


def test_a_fresh_venv_runs_a_library_loop_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    # A new venv with the wheel installed by its own pip, offline; the dependencies (PyYAML,
    # anthropic) come from this test's environment through a .pth file, not the network.
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=scaled(120))
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {str(Path(p)) for p in sys.path if p.endswith("site-packages")}
    (Path(site) / "test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    pip = [str(python), "-m", "pip", "-q", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", str(wheel)], check=True, timeout=scaled(120)
    )
    project = tmp_path / "elsewhere"
    project.mkdir()
    env = with_claude({k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, tmp_path)
    ll_loop = venv / "bin" / "ll-loop"
    listed = subprocess.run(
        [str(ll_loop), "new", "--list"], cwd=project, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == library_loops()
    run = subprocess.run(
        [str(ll_loop), "run", "library:fix-tests", "true"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert run.returncode == 0, run.stderr
    assert "Loop completed: done" in run.stderr
    assert not (tmp_path / "claude-called").exists()
    assert (project / ".loops" / ".running" / "fix-tests.state.json").is_file()
    installed = Path(site) / "little_loops"
    where = subprocess.run(
        [str(python), "-c", "import little_loops; print(little_loops.__file__)"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).parent == installed  # the wheel's copy, not the repo
    assert not list((installed / "loops").glob("*.fsm.yaml"))
