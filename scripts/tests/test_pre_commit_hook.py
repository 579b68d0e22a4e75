"""`.pre-commit-hooks.yaml`: the ll-loop-validate hook, run the way pre-commit runs it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from support.slowdown import scaled

if TYPE_CHECKING:
    from conftest import LoopProject

REPO = Path(__file__).resolve().parents[2]
VALID = """\
name: ok
initial: check
states:
  check:
    action: "true"
    on_success: done
    on_failure: check
  done:
    terminal: true
"""
INVALID = VALID.replace("on_success:", "on_sucess:")


def hook() -> dict[str, Any]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list)
    (found,) = [h for h in hooks if h["id"] == "ll-loop-validate"]
    assert isinstance(found, dict)
    return found


def selected(path: str) -> bool:
    """Whether pre-commit passes *path* to the hook (it uses re.search on both patterns)."""
    spec = hook()
    return bool(re.search(spec["files"], path)) and not re.search(spec["exclude"], path)


def run_entry(project: LoopProject, files: list[str]) -> int:
    """The hook's entry plus the file names, as pre-commit builds the command."""
    program, *args = shlex.split(hook()["entry"])
    assert program == "ll-loop"
    return project.run(*args, *files).code


def test_the_hook_is_declared_as_documented() -> None:
    spec = hook()
    assert spec["entry"] == "ll-loop validate"
    assert spec["language"] == "python"
    assert spec["pass_filenames"] is True
    assert spec["files"] == r"^\.loops/.*\.ya?ml$"
    assert spec["exclude"] == r"^\.loops/\.running/"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".loops/fix-types.yaml", True),
        (".loops/fix-types.yml", True),
        (".loops/fix-types.fsm.yaml", True),
        (".loops/sub/dir.yaml", True),
        (".loops/.running/fix-types.state.json", False),
        (".loops/.running/scratch.yaml", False),
        (".loops/notes.md", False),
        ("src/.loops/x.yaml", False),
        ("config.yaml", False),
    ],
)
def test_the_hook_selects_loop_files_only(path: str, expected: bool) -> None:
    assert selected(path) is expected


def test_the_entry_passes_valid_files(loop_project: LoopProject) -> None:
    loop_project.write("a", VALID)
    loop_project.write("b.yml", VALID.replace("name: ok", "name: ok2"))
    assert run_entry(loop_project, [".loops/a.yaml", ".loops/b.yml"]) == 0


def test_the_entry_fails_when_any_file_is_invalid(loop_project: LoopProject) -> None:
    loop_project.write("a", VALID)
    loop_project.write("bad", INVALID)
    assert run_entry(loop_project, [".loops/a.yaml", ".loops/bad.yaml"]) == 2


def test_the_console_script_exits_2_on_an_invalid_file(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "ll-loop"
    if not script.exists():
        pytest.skip(f"the ll-loop console script is not installed next to {sys.executable}")
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops/bad.yaml").write_text(INVALID.replace("name: ok", "name: bad"))
    (tmp_path / ".loops/ok.yaml").write_text(VALID)
    argv = [str(script), *shlex.split(hook()["entry"])[1:], ".loops/ok.yaml", ".loops/bad.yaml"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 2
    assert done.stdout.splitlines() == [
        ".loops/ok.yaml: ok",
        ".loops/bad.yaml:6: error: loop 'bad' > states > check > on_sucess: unknown key"
        " (did you mean on_success?)",
    ]


AGENTS = """\
agents:
  mine:
    command: ./tools/my-agent
"""
LIBRARY = """\
fragments:
  shell_exit:
    action_type: shell
    evaluate:
      type: exit_code
"""
USES_LIBRARY = """\
name: uses
import: [lib/checks.yaml]
initial: check
states:
  check:
    fragment: shell_exit
    action: "true"
    on_success: done
    on_failure: check
  done:
    terminal: true
"""


def test_the_entry_passes_agents_file_and_fragment_libraries(tmp_path: Path) -> None:
    """Every YAML file of `.loops/` the hook selects, as the installed console script runs."""
    script = Path(sys.executable).parent / "ll-loop"
    if not script.exists():
        pytest.skip(f"the ll-loop console script is not installed next to {sys.executable}")
    (tmp_path / ".loops/lib").mkdir(parents=True)
    files = {
        ".loops/agents.yaml": AGENTS,
        ".loops/lib/checks.yaml": LIBRARY,
        ".loops/uses.yaml": USES_LIBRARY,
    }
    for name, text in files.items():
        assert selected(name)
        (tmp_path / name).write_text(text)
    argv = [str(script), *shlex.split(hook()["entry"])[1:], *files]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"{name}: ok" for name in files]
