"""The pre-patch check's parts: whose policy, pytest's report read, the flags, the verdict."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import make_repo

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine import prepatch
from little_loops.fsm.engine.prepatch_tests import Candidate

REPORT = """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="tests.test_x" name="test_new"/>
<testcase classname="tests.test_x" name="test_red"><failure message="no"/></testcase>
<testcase classname="tests.test_x.TestBox" name="test_in_class"><skipped/></testcase>
<testcase classname="tests.test_x" name="test_p[1]"/>
<testcase classname="other" name="test_else"/>
</testsuite></testsuites>"""


def test_the_states_policy_wins_over_the_loops_and_only_actions_are_checked() -> None:
    fsm = FSMLoop("x", "a", {}, prepatch_check="warn")
    assert prepatch.policy_of(fsm, StateConfig(action="true")) == "warn"
    assert prepatch.policy_of(fsm, StateConfig(action="true", prepatch_check="fail")) == "fail"
    assert prepatch.policy_of(fsm, StateConfig(terminal=True)) is None


def test_the_junit_report_gives_each_candidates_results(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text(REPORT)
    whole = Candidate("tests/test_x.py", "tests/test_x.py", True)
    seen = prepatch._junit(tmp_path / "r.xml", [whole])
    assert seen == {
        "tests/test_x.py::test_new": "pass",
        "tests/test_x.py::test_red": "fail",
        "tests/test_x.py::TestBox::test_in_class": "fail",
        "tests/test_x.py::test_p[1]": "pass",
    }
    one = Candidate("tests/test_x.py::test_p", "tests/test_x.py", False)
    gone = Candidate("tests/test_x.py::test_gone", "tests/test_x.py", True)
    ran = ActionResult("", "", 1, 1, timed_out=True)
    results = prepatch._results([one, gone], seen, ran)
    assert [(r.nodeid, r.category) for r in results] == [
        ("tests/test_x.py::test_p[1]", "pass"),
        ("tests/test_x.py::test_gone", "timeout"),
    ]


def test_only_a_new_test_that_passed_is_a_hard_flag() -> None:
    def flag(added: bool, category: str) -> str:
        return prepatch._flag(prepatch.TestResult("t", "t", added, category))[0]

    assert flag(True, "pass") == "hard"
    assert flag(False, "pass") == "soft"
    assert flag(True, "flaky") == "soft"
    assert flag(True, "fail") == "none"


def test_the_policy_decides_what_a_flagged_check_does() -> None:
    flagged = prepatch.Evidence("b", "head", prepatch.FLAGGED)
    assert prepatch.routes("fail", flagged)
    assert not prepatch.routes("warn", flagged)
    assert prepatch.warns("warn", flagged)
    assert not prepatch.warns("allow", flagged)
    assert not prepatch.routes("fail", prepatch.skipped("why"))


def test_a_folder_that_is_no_repository_is_skipped_without_running_tests(tmp_path: Path) -> None:
    def never(*_args: object) -> ActionResult:
        raise AssertionError("no tests run")

    evidence = prepatch.examine(tmp_path, {}, never)
    assert (evidence.verdict, evidence.skipped_reason) == ("skipped", "not a git repository")
    make_repo(tmp_path / "r", {"app.py": "x = 1\n"})
    (tmp_path / "r" / "app.py").write_text("x = 2\n")
    nothing = prepatch.examine(tmp_path / "r", {}, never)
    assert nothing.skipped_reason == "no candidate tests identified"


def test_the_evidence_file_is_written_when_the_run_has_a_folder_and_an_issue(
    tmp_path: Path,
) -> None:
    evidence = prepatch.skipped("why", "abc", "head")
    prepatch.evidence_file({"run_dir": str(tmp_path), "issue_id": "BUG-1"}, evidence)
    written = (tmp_path / "prepatch_evidence_BUG-1.json").read_text()
    assert '"skipped_reason": "why"' in written
    prepatch.evidence_file({"run_dir": str(tmp_path)}, evidence)
    assert len(list(tmp_path.iterdir())) == 1


def test_the_evidence_file_never_goes_through_a_link_or_out_of_the_folder(
    tmp_path: Path,
) -> None:
    run_dir, outside = tmp_path / "run", tmp_path / "outside.json"
    run_dir.mkdir()
    outside.write_text("mine\n")
    (run_dir / "prepatch_evidence_BUG-1.json").symlink_to(outside)
    evidence = prepatch.skipped("why", "abc", "head")
    prepatch.evidence_file({"run_dir": str(run_dir), "issue_id": "BUG-1"}, evidence)
    assert outside.read_text() == "mine\n"
    written = run_dir / "prepatch_evidence_BUG-1.json"
    assert not written.is_symlink()
    assert '"skipped_reason": "why"' in written.read_text()
    prepatch.evidence_file({"run_dir": str(run_dir), "issue_id": "../../x"}, evidence)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.json", "run"]
