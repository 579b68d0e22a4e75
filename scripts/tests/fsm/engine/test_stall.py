"""The stall detectors: streaks, visits and the git working-tree fingerprint."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine import stall
from little_loops.fsm.engine.stall import StallWatch, tree_fingerprint
from little_loops.fsm.facts.errors import LoopRuntimeError


def _loop(stall: dict[str, object], state_stall: dict[str, object] | None = None) -> FSMLoop:
    a: dict[str, object] = {"action": "true", "on_success": "a", "on_failure": "done"}
    if state_stall is not None:
        a["stall"] = state_stall
    return FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "stall": stall,
            "states": {"a": a, "done": {"terminal": True}},
        }
    )


def test_same_result_counts_a_streak_and_a_different_output_breaks_it() -> None:
    watch = StallWatch(_loop({"same_result": 3, "on_stall": "done"}))
    assert watch.judged("a", "failure", "out") is None
    assert watch.judged("a", "failure", "other") is None
    assert watch.judged("a", "failure", "other") is None
    stall = watch.judged("a", "failure", "other")
    assert stall is not None
    assert (stall.detector, stall.count, stall.target) == ("same_result", 3, "done")


def test_a_state_value_overrides_the_loop_and_its_route_comes_first() -> None:
    watch = StallWatch(
        _loop({"max_visits": 5, "on_stall": "a"}, {"max_visits": 1, "on_stall": "done"})
    )
    assert watch.entering("a", pass_began=False) is None
    stall = watch.entering("a", pass_began=False)
    assert stall is not None
    assert (stall.limit, stall.count, stall.target) == (1, 2, "done")


def test_the_counts_round_trip_through_the_saved_record() -> None:
    fsm = _loop({"same_result": 2})
    watch = StallWatch(fsm)
    watch.judged("a", "failure", "same")
    again = StallWatch(fsm)
    again.restore(watch.record())
    assert again.judged("a", "failure", "same") is not None


def test_a_loop_without_breakers_records_nothing() -> None:
    fsm = FSMLoop.from_dict({"name": "x", "initial": "a", "states": {"a": {"terminal": True}}})
    watch = StallWatch(fsm)
    assert watch.entering("a", pass_began=True) is None
    assert watch.record() == {}


def test_a_loop_without_breakers_asks_no_detector_at_a_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verdict detectors (same_result, repeated_failure) are asked only by a loop that
    has a breaker, as the entry ones are: a loop without one pays nothing for them a step."""
    asked: list[str] = []
    for name, detector in list(stall.STALL_DETECTORS.items()):

        def look(watch: StallWatch, seen: stall.Seen, name: str = name) -> stall.Stall | None:
            asked.append(name)
            return None

        monkeypatch.setitem(stall.STALL_DETECTORS, name, replace(detector, look=look))
    plain = StallWatch(
        FSMLoop.from_dict(
            {"name": "x", "initial": "a", "states": {"a": {"action": "true", "next": "a"}}}
        )
    )
    for _ in range(3):
        assert plain.entering("a", pass_began=True) is None
        assert plain.judged("a", "success", "out") is None
    assert asked == []
    watched = StallWatch(_loop({"same_result": 3}))
    assert watched.judged("a", "failure", "out") is None
    assert "same_result" in asked  # the count is still kept where a breaker is set


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_fingerprint_sees_edits_new_files_and_binary_changes(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "tests@example.com")
    _git(tmp_path, "config", "user.name", "Tests")
    (tmp_path / "a.bin").write_bytes(b"\x00\x01")
    _git(tmp_path, "add", "a.bin")
    _git(tmp_path, "commit", "-qm", "one")
    seen = {tree_fingerprint(tmp_path)}
    (tmp_path / "a.bin").write_bytes(b"\x00\x02")
    seen.add(tree_fingerprint(tmp_path))
    (tmp_path / "a.bin").write_bytes(b"\x00\x03")  # same status line, another diff
    seen.add(tree_fingerprint(tmp_path))
    (tmp_path / "new.txt").write_text("x")
    seen.add(tree_fingerprint(tmp_path))
    assert len(seen) == 4
    assert tree_fingerprint(tmp_path) in seen  # and it is stable


def test_the_fingerprint_sees_a_commit(tmp_path: Path) -> None:
    """A pass that commits what it changed (`commit:`) leaves a clean tree: still a change."""
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "tests@example.com")
    _git(tmp_path, "config", "user.name", "Tests")
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "one")
    before = tree_fingerprint(tmp_path)
    (tmp_path / "a.txt").write_text("x")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "two")
    assert tree_fingerprint(tmp_path) != before


def test_the_fingerprint_sees_an_edit_of_an_untracked_file(tmp_path: Path) -> None:
    """`git status` lists an untracked file by name only and `git diff HEAD` leaves it out:
    appending to one (notes a loop keeps) is still a change."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "notes.txt").write_text("one\n")
    before = tree_fingerprint(tmp_path)
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    assert tree_fingerprint(tmp_path) != before


def test_outside_a_repository_the_fingerprint_is_a_runtime_error(tmp_path: Path) -> None:
    with pytest.raises(LoopRuntimeError, match="needs a git repository"):
        tree_fingerprint(tmp_path)


def test_the_fingerprint_hashes_git_output_as_bytes_not_as_decoded_text(tmp_path: Path) -> None:
    # Two edits that differ only in a byte that is not UTF-8 are two different trees; read
    # as text (undecodable bytes replaced) they would look the same and fake a stall.
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "tests@example.com")
    _git(tmp_path, "config", "user.name", "Tests")
    (tmp_path / "a.txt").write_bytes(b"text\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "a.txt").write_bytes(b"text \xff\n")
    first = tree_fingerprint(tmp_path)
    (tmp_path / "a.txt").write_bytes(b"text \xfe\n")
    assert tree_fingerprint(tmp_path) != first


def _circuit(failure: dict[str, object]) -> FSMLoop:
    return FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "circuit": {"repeated_failure": failure},
            "states": {
                "a": {"action": "false", "on_failure": "a", "on_success": "done"},
                "fix": {"action": "true", "next": "a"},
                "done": {"terminal": True},
            },
        }
    )


def test_repeated_failure_counts_the_same_exit_code_and_verdict_in_a_row() -> None:
    watch = StallWatch(_circuit({"window": 3, "on_repeated_failure": "fix"}))
    assert watch.judged("a", "failure", "one", 1) is None
    assert watch.judged("a", "failure", "two", 1) is None  # the output does not count
    assert watch.judged("a", "failure", "x", 2) is None  # another exit code starts again
    assert watch.judged("a", "failure", "x", 2) is None
    stall = watch.judged("a", "failure", "x", 2)
    assert stall is not None
    assert (stall.detector, stall.target, stall.count) == ("repeated_failure", "fix", 3)
    saved = StallWatch(_circuit({"window": 3}))
    saved.restore(watch.record())
    assert saved.repeats == watch.repeats


def test_recurrent_window_counts_in_all_and_abort_ends_the_run() -> None:
    watch = StallWatch(_circuit({"window": 5, "recurrent_window": 2}))
    assert watch.judged("a", "failure", "", 1) is None
    assert watch.judged("fix", "success", "", 0) is None
    stall = watch.judged("a", "failure", "", 1)
    assert stall is not None
    assert stall.target is None
    assert "same exit code" in stall.message()


def test_a_change_to_a_progress_path_starts_the_count_again(tmp_path: Path) -> None:
    fsm = _circuit({"window": 2, "progress_paths": ["out.txt"]})
    watch = StallWatch(fsm, cwd=tmp_path)
    assert watch.judged("a", "failure", "", 1) is None
    (tmp_path / "out.txt").write_text("more")
    assert watch.judged("a", "failure", "", 1) is None
    assert watch.judged("a", "failure", "", 1) is not None


def test_whether_a_loop_has_stall_breakers_is_looked_up_once_a_run() -> None:
    # Each look walks every state: at every step, a ring of 20,000 states paid for it.
    walks = 0

    class Counted(dict[str, StateConfig]):
        def values(self):  # type: ignore[override]
            nonlocal walks
            walks += 1
            return super().values()

    states = Counted(a=StateConfig(action="true", next="a"))
    watch = StallWatch(FSMLoop(name="x", initial="a", states=states))
    for _ in range(50):
        assert watch.entering("a", pass_began=True) is None
        assert watch.record() == {}
    assert walks <= 2


def test_a_throttled_self_loop_stalls_past_hard_max_with_its_words() -> None:
    states = {
        "a": StateConfig.from_dict({"action": "x", "next": "a", "throttle": {"hard_max": 2}}),
        "b": StateConfig.from_dict({"action": "x", "next": "b", "on_throttle_hard": "a"}),
    }
    watch = StallWatch(FSMLoop(name="t", initial="a", states=states))
    assert watch.active()
    assert watch.entering("a", False) is None
    assert watch.entering("a", False) is None
    stall = watch.entering("a", False)
    assert stall is not None
    assert (stall.detector, stall.target, stall.limit, stall.count) == ("throttle", None, 2, 2)
    assert stall.message() == (
        "stall (throttle: 2): state 'a' ran its action 2 times in a row (throttle)"
    )
    # `on_throttle_hard:` alone throttles at the default hard_max, and routes there.
    found = [watch.entering("b", False) for _ in range(13)]
    assert found[:12] == [None] * 12
    assert found[12] is not None
    assert (found[12].target, found[12].limit) == ("a", 12)
