"""launch: the spawn path CPython takes for an action, and the program looked up once per PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.processes import launch
from little_loops.fsm.processes.launch import ProgramPaths, os_bytes, start


def program(folder: Path, name: str, says: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho {says}\n")
    path.chmod(0o755)
    return path


def run(argv: list[str], paths: ProgramPaths, env: dict[str, str]) -> str:
    read, write = os.pipe()
    with open(os.devnull, "rb") as devnull:
        try:
            proc = start(argv, None, env, (devnull.fileno(), write, write), paths)
        finally:
            os.close(write)
    with os.fdopen(read, "rb") as out:
        text = out.read().decode()
    proc.wait()
    return text


def test_an_action_starts_on_the_vfork_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CPython 3.11+ uses vfork unless a preexec_fn, a user or a group is given; a new
    # session and close_fds are done in the vforked child. The program goes by full path,
    # so the child makes one execve instead of one per PATH entry.
    found = shutil.which("bash")
    assert found is not None
    bash = os.path.abspath(found)
    monkeypatch.setenv("PATH", f"{os.path.dirname(bash)}{os.pathsep}{os.environ['PATH']}")
    calls: list[dict[str, Any]] = []
    real = subprocess.Popen

    def spy(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    with DefaultActionRunner(cwd=tmp_path) as runner:
        result = runner.run(ActionRequest('echo "$0"', 10, "shell"))
    assert (result.output, result.exit_code) == ("bash\n", 0)
    (kwargs,) = calls
    for unsafe in ("preexec_fn", "user", "group", "extra_groups", "umask", "process_group"):
        assert kwargs.get(unsafe) in (None, -1), unsafe
    assert kwargs.get("close_fds", True) is True
    assert kwargs["start_new_session"] is True
    assert kwargs["executable"] == bash


def test_a_program_is_looked_up_once_per_path_value(tmp_path: Path) -> None:
    first = program(tmp_path / "a", "prog", "a")
    paths = ProgramPaths()
    assert paths.lookup("prog", str(tmp_path / "a")) == str(first)
    first.unlink()
    assert paths.lookup("prog", str(tmp_path / "a")) == str(first)  # remembered
    second = program(tmp_path / "b", "prog", "b")
    assert paths.lookup("prog", f"{tmp_path / 'a'}:{tmp_path / 'b'}") == str(second)


def test_what_cpython_would_search_itself_is_left_to_it(tmp_path: Path) -> None:
    program(tmp_path / "a", "prog", "a")
    (tmp_path / "a" / "plain").write_text("")  # not executable
    paths = ProgramPaths()
    assert paths.lookup("prog", f"relative:{tmp_path / 'a'}") == ""
    assert paths.lookup("prog", f":{tmp_path / 'a'}") == ""  # an empty entry is "."
    assert paths.lookup("plain", str(tmp_path / "a")) == ""
    assert paths.lookup("missing", str(tmp_path / "a")) == ""
    assert paths.lookup(str(tmp_path / "a" / "prog"), str(tmp_path / "a")) == ""


def test_a_program_gone_from_where_it_was_found_is_searched_again(tmp_path: Path) -> None:
    gone = program(tmp_path / "a", "prog", "a")
    program(tmp_path / "b", "prog", "b")
    env = {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}
    paths = ProgramPaths()
    assert run(["prog"], paths, env) == "a\n"
    gone.unlink()
    assert run(["prog"], paths, env) == "b\n"
    assert paths.lookup("prog", env["PATH"]) == ""  # CPython searches from now on
    assert run(["prog"], paths, env) == "b\n"


def test_a_failure_that_is_not_the_programs_keeps_its_error(tmp_path: Path) -> None:
    program(tmp_path / "a", "prog", "a")
    env = {"PATH": str(tmp_path / "a")}
    paths = ProgramPaths()
    with pytest.raises(FileNotFoundError) as raised:
        start(["prog"], tmp_path / "gone", env, (0, 1, 2), paths)
    assert raised.value.filename == tmp_path / "gone"
    assert paths.lookup("prog", env["PATH"]) == str(tmp_path / "a" / "prog")


def test_text_the_locale_cannot_hold_goes_as_utf8() -> None:
    assert os_bytes("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600".encode()
    assert os_bytes("raw \udce9") == b"raw \xe9"  # undecoded bytes go back as they came
    with pytest.raises(ValueError, match="null byte"):
        os_bytes("a\0b")
    with pytest.raises(UnicodeEncodeError):
        os_bytes("lone \ud83d")


def test_a_child_sees_our_environment_and_the_overlay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LL_TEST_OURS", "ours")
    monkeypatch.setenv("LL_TEST_REPLACED", "old")
    overlay = launch.Overlay({"LL_TEST_REPLACED": "new", "LL_TEST_ADDED": "é ✓"})
    assert overlay["LL_TEST_OURS"] == "ours"
    assert overlay["LL_TEST_REPLACED"] == "new"
    assert len(overlay) == len(dict(overlay)) == len(os.environ) + 1
    proc = launch.start(
        ["printenv", "LL_TEST_OURS", "LL_TEST_REPLACED", "LL_TEST_ADDED"],
        None,
        overlay,
        (subprocess.DEVNULL, subprocess.PIPE, subprocess.DEVNULL),
        launch.ProgramPaths(),
    )
    out, _ = proc.communicate(timeout=30)
    assert out.decode().splitlines() == ["ours", "new", "é ✓"]
    # Read at each start: a variable set or removed since is there, or not.
    monkeypatch.setenv("LL_TEST_LATER", "later")
    monkeypatch.delenv("LL_TEST_OURS")
    sent = overlay.as_bytes()
    assert sent == {**os.environb, b"LL_TEST_REPLACED": b"new", b"LL_TEST_ADDED": "é ✓".encode()}
    assert sent[b"LL_TEST_LATER"] == b"later"
    assert b"LL_TEST_OURS" not in sent
