"""The `.running/` layout: every run file name is made in facts/layout.py and nowhere else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import little_loops
from little_loops.fsm.facts import layout
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.layout import (
    RunFiles,
    action_output_file,
    leftover_temp_files,
    lock_files,
    mutex_file,
    output_file_name,
    run_files,
    running_dir,
    state_files,
    temp_file,
    validate_loop_name,
)

PACKAGE = Path(little_loops.__file__).parent
LAYOUT = Path(layout.__file__)

# A string that names a run file: the folder, a suffix at a word's end, or the mutex.
_RUN_FILE_NAME = re.compile(
    r"\.running\b|\.state\.json|\.events\.jsonl|\.options\.json|\.loop\.json|\.scopes\.lock"
    r"|\.(lock|log|out|pid|tmp)(?![\w.])"
)


def _string_constants(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module (f-string parts included), docstrings left out."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_scan_catches_a_run_file_name() -> None:
    source = 'x = "a.state.json"\ny = f"{name}.log"\nz = "/tmp/.running/x"\nw = "ok.logger"\n'
    found = [c.value for c in _string_constants(ast.parse(source))]
    named = sorted(v for v in found if _RUN_FILE_NAME.search(v))
    assert named == [".log", "/tmp/.running/x", "a.state.json"]


def test_no_module_but_layout_spells_a_run_file_name() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == LAYOUT:
            continue
        for node in _string_constants(ast.parse(path.read_text())):
            if _RUN_FILE_NAME.search(node.value):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert offenders == []


def test_the_run_files_of_a_loop(tmp_path: Path) -> None:
    files = run_files("fix", tmp_path)
    running = tmp_path / ".running"
    assert files == RunFiles("fix", tmp_path)
    assert files.running_dir == running == running_dir(tmp_path)
    assert files.state == running / "fix.state.json"
    assert files.events == running / "fix.events.jsonl"
    assert files.lock == running / "fix.lock"
    assert files.log == running / "fix.log"
    assert files.options == running / "fix.options.json"
    assert files.definition == running / "fix.loop.json"
    assert mutex_file(running) == running / ".scopes.lock"
    assert action_output_file(running, 255) == running / "action-255.out"
    assert output_file_name("fix", "check") == "fix.check.out"


def test_the_default_loops_dir_is_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_files("a").state == tmp_path / ".loops" / ".running" / "a.state.json"
    assert running_dir() == tmp_path / ".loops" / ".running"


def test_listing_skips_dot_files_and_other_kinds(tmp_path: Path) -> None:
    running = tmp_path / ".running"
    assert state_files(running) == lock_files(running) == []
    running.mkdir()
    for name in ("b.state.json", "a.state.json", ".x.state.json", "a.lock", ".scopes.lock"):
        (running / name).write_text("{}")
    (running / "a.events.jsonl").write_text("")
    assert state_files(running) == [
        ("a", running / "a.state.json"),
        ("b", running / "b.state.json"),
    ]
    assert lock_files(running) == [("a", running / "a.lock")]


def test_temp_files_are_matched_exactly(tmp_path: Path) -> None:
    target = tmp_path / "a.state.json"
    mine = temp_file(target, 0x1F)
    assert mine == tmp_path / ".a.state.json.0000001f.tmp"
    other_loop = temp_file(tmp_path / "a.state.json.x", 1)
    for path in (mine, other_loop, tmp_path / ".a.state.json.short.tmp"):
        path.write_text("")
    assert leftover_temp_files(target) == [mine]


def test_a_loop_name_must_be_a_plain_file_name() -> None:
    assert validate_loop_name("fix-types") == "fix-types"
    with pytest.raises(LoopDefinitionError, match="it starts with '.'"):
        validate_loop_name(".hidden")


# --- moved from test_qa_regressions.py ---


@pytest.mark.parametrize(
    ("state", "name"),
    [
        ("check", "loop.check.out"),
        ("x/../../etc/passwd", "loop.x_etc_passwd~"),
        ("..", "loop._~"),
    ],
)
def test_output_files_stay_in_their_folder(state: str, name: str) -> None:
    made = output_file_name("loop", state)
    assert made.startswith(name)
    assert "/" not in made
    assert made.endswith(".out")


def test_two_unsafe_state_names_never_share_a_file() -> None:
    assert output_file_name("l", "a/b") != output_file_name("l", "a b")


def test_output_files_of_two_loops_never_meet() -> None:
    # `x` + `a.b` and `x.a` + `b` used to be the same `x.a.b.out`.
    assert output_file_name("x", "a.b") != output_file_name("x.a", "b")
    assert output_file_name("x.a", "b") == "x.a.b.out"
    # A changed name carries `~`, which no unchanged name has: `a_b~<hash>` named by hand
    # is changed too, so it cannot meet the file of `a.b`.
    hashed = output_file_name("x", "a.b")
    assert hashed.startswith("x.a_b~")
    assert output_file_name("x", hashed[2:-4]) != hashed


def test_every_file_name_a_run_makes_of_the_longest_loop_name_can_be_made(
    tmp_path: Path,
) -> None:
    longest = "é" * (layout.MAX_NAME_BYTES // 2)  # the byte limit, in two-byte characters
    names = layout.run_file_names(longest)
    assert names[0] == f"{longest}@xxxx"  # a worktree run's folder and key
    assert f".{longest}@xxxx.approval.json.00000000.tmp" in names
    for name in names:
        assert layout.name_bytes(name) <= layout.FILE_NAME_MAX
        (tmp_path / name).write_text("")  # the file system takes each


def test_the_output_file_names_of_a_state_are_measured_in_bytes() -> None:
    out, err = layout.state_file_names("fix", "check")
    assert (out, err) == ("fix@xxxx.check.out", "fix@xxxx.check.err")
    long_state = layout.state_file_names("a" * 200, "s" * 100)[0]
    assert layout.name_bytes(long_state) == 200 + 5 + 1 + 80 + 9 + 4
    assert layout.name_bytes("é") == 2


def test_the_longest_state_file_names_are_measured_without_a_hash_and_are_as_long() -> None:
    from little_loops.fsm.facts.layout import STATE_NAME_CAP, state_file_names

    long_name = "x" * (STATE_NAME_CAP + 7)
    measured = state_file_names("loop")
    real = state_file_names("loop", long_name)
    assert [len(name.encode()) for name in measured] == [len(name.encode()) for name in real]
    assert measured != real  # the real ones carry the hash of the name
