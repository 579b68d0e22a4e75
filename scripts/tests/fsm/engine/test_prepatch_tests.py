"""Which tests a patch added or changed, found in a real git repository."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import git, make_repo

from little_loops.fsm.engine.prepatch_tests import (
    BASE_HEAD,
    BASE_MERGE,
    Candidate,
    base_of,
    candidates,
    changed_files,
    patch_key,
    support_files,
)

OLD = "import os\n\n\ndef test_a():\n    assert os\n\n\ndef test_b():\n    assert 1\n"


def _found(tmp_path: Path, after: str, before: str | None = OLD) -> list[Candidate]:
    files = {"README": "x"} if before is None else {"tests/test_x.py": before}
    root = tmp_path / "r"
    make_repo(root, files)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_x.py").write_text(after)
    base, _ = base_of(root)
    return candidates(root, base, changed_files(root, base))


def test_a_new_function_is_an_added_candidate_and_a_changed_one_a_changed_one(
    tmp_path: Path,
) -> None:
    after = OLD.replace("assert 1", "assert 2") + "\n\ndef test_c():\n    assert 3\n"
    assert _found(tmp_path, after) == [
        Candidate("tests/test_x.py::test_b", "tests/test_x.py", False),
        Candidate("tests/test_x.py::test_c", "tests/test_x.py", True),
    ]


def test_a_change_outside_the_test_functions_makes_the_whole_file_the_candidate(
    tmp_path: Path,
) -> None:
    after = "import sys\n" + OLD + "\n\ndef test_c():\n    assert sys\n"
    assert _found(tmp_path, after) == [Candidate("tests/test_x.py", "tests/test_x.py", False)]


def test_a_removed_line_or_test_is_no_candidate(tmp_path: Path) -> None:
    assert _found(tmp_path, OLD.replace("import os\n", "").replace("assert os", "assert 0")) == [
        Candidate("tests/test_x.py::test_a", "tests/test_x.py", False)
    ]
    assert _found(tmp_path / "2", OLD.split("\n\ndef test_b")[0] + "\n") == []


def test_a_new_test_file_not_yet_added_is_a_new_whole_file(tmp_path: Path) -> None:
    assert _found(tmp_path, OLD, before=None) == [
        Candidate("tests/test_x.py", "tests/test_x.py", True)
    ]


def test_the_base_is_the_fork_point_with_main_else_head(tmp_path: Path) -> None:
    root = tmp_path / "r"
    first = make_repo(root, {"a": "1"})
    git(root, "checkout", "-q", "-b", "feature")
    (root / "a").write_text("2")
    git(root, "commit", "-qam", "second")
    assert base_of(root) == (first, BASE_MERGE)
    git(root, "branch", "-q", "-m", "main", "trunk")
    assert base_of(root) == (git(root, "rev-parse", "HEAD").strip(), BASE_HEAD)


def test_the_patch_key_changes_with_the_patch(tmp_path: Path) -> None:
    root = tmp_path / "r"
    base = make_repo(root, {"a": "1"})
    (root / "new.py").write_text("x")
    first = patch_key(root, base, changed_files(root, base))
    assert patch_key(root, base, changed_files(root, base)) == first
    (root / "new.py").write_text("y")
    assert patch_key(root, base, changed_files(root, base)) != first


def test_the_fork_gets_the_python_test_files_and_conftest() -> None:
    paths = ["app.py", "tests/conftest.py", "tests/test_a.py", "tests/data.json"]
    assert support_files(paths) == ["tests/conftest.py", "tests/test_a.py"]
