"""The pre-patch check (`prepatch_check:`): a state's new tests run on the code before its patch."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY
from little_loops.fsm.definition.model.run_keys import PREPATCH_FAIL, PREPATCH_WARN
from little_loops.fsm.engine.guard_policies import prepatch_policy
from little_loops.fsm.engine.nofollow import write_below
from little_loops.fsm.engine.prepatch_tests import (
    Candidate,
    base_of,
    candidates,
    changed_files,
    patch_key,
    support_files,
)
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.processes.gitcmd import git, repo_lock
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks

RECORD_KEY = "_prepatch_check"  # where a run's context lists the checks (little-loops' name)
PYTEST_TIMEOUT = 300.0  # seconds one pytest run in the fork may take (little-loops' default)
RUN_FOLDER = ".prepatch-run"  # in the fork: pytest's reports and output
FORK_PREFIX = "ll-prepatch-"  # the fork's folder, in the system's temporary folder
policy_of = prepatch_policy  # the pre-patch policy of a state (guard_policies.py)
# The fork's name after the prefix: the pid and start ticks of the process that made it,
# so a later check (a resumed run's) removes the forks of a process a crash ended.
_FORK_NAME = re.compile(re.escape(FORK_PREFIX) + r"(\d+)-(\d+)-[0-9a-f]+")
SRC_FOLDER = "src"  # put before the fork's top on PYTHONPATH when the project has one
CLEAN, FLAGGED, SKIPPED = "clean", "flagged", "skipped"  # a check's verdict
HARD, SOFT, NONE = "hard", "soft", "none"  # a test's flag: only `hard` flags the check
PASS, FAIL, ERROR, TIMEOUT, FLAKY = "pass", "fail", "error", "timeout", "flaky"

# Runs pytest in the fork on the test ids, writing its junit report to the path given.
RunTests = Callable[[Path, list[str], Path], ActionResult]


@dataclass
class TestResult:
    """How one candidate test did before the patch."""

    nodeid: str
    path: str
    added: bool
    category: str  # PASS, FAIL (a skip too), ERROR, TIMEOUT or FLAKY
    flag: str = NONE
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class Evidence:
    """What one check found: the base it forked at, each candidate's result, the verdict."""

    base_ref: str
    base_source: str
    verdict: str = CLEAN
    skipped_reason: str | None = None
    tests: list[TestResult] = field(default_factory=list)

    def flagged(self) -> list[str]:
        return [t.nodeid for t in self.tests if t.flag == HARD]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        tests = [TestResult(**t) for t in data["tests"]]
        evidence = cls(str(data["base_ref"]), str(data["base_source"]), str(data["verdict"]))
        evidence.skipped_reason, evidence.tests = data["skipped_reason"], tests
        return evidence

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "base_source": self.base_source,
            "verdict": self.verdict,
            "skipped_reason": self.skipped_reason,
            "tests": [t.to_dict() for t in self.tests],
        }


def skipped(reason: str, base: str = "", source: str = "") -> Evidence:
    return Evidence(base, source, SKIPPED, reason)


def examine(where: Path, memo: dict[str, object], run_tests: RunTests) -> Evidence:
    """Check the patch of the checkout *where*: its new and changed tests, run in a fork
    at the base (removed afterwards, whatever happens). A verdict is reused for the same
    patch (*memo*); a folder that is no git repository is skipped."""
    found = git(where, "rev-parse", "--show-toplevel", check=False)
    if not found.ok:
        return skipped("not a git repository")
    top = Path(found.out.strip())
    try:
        base, source = base_of(top)
        paths = changed_files(top, base)
        key = patch_key(top, base, paths)
        seen = memo.get(key)
        if isinstance(seen, Evidence):
            return seen
        tests = candidates(top, base, paths)
        if not tests:
            return skipped("no candidate tests identified", base, source)
        evidence = Evidence(base, source, tests=_in_fork(top, base, tests, paths, run_tests))
    except LoopRuntimeError as exc:
        return skipped(str(exc))
    if any(t.flag == HARD for t in evidence.tests):
        evidence.verdict = FLAGGED
    memo[key] = evidence
    return evidence


def _in_fork(
    top: Path, base: str, tests: list[Candidate], paths: list[str], run_tests: RunTests
) -> list[TestResult]:
    """Fork a worktree at *base* (detached: no branch is made), give it the test files of
    the patch, run *tests* there (the passing ones again: a pass must hold), remove it."""
    import secrets

    sweep_forks(top)
    pid = os.getpid()
    fork = Path(tempfile.gettempdir()) / (
        f"{FORK_PREFIX}{pid}-{process_start_ticks(pid) or 0}-{secrets.token_hex(4)}"
    )
    try:
        with repo_lock(top):
            git(top, "worktree", "add", "--detach", "--quiet", str(fork), base)
        for path in support_files(paths):
            try:  # never through a link: not the patch's, nor one the base checks out
                source = top / path
                data, mode = source.read_bytes(), source.stat().st_mode & 0o7777
                write_below(fork, path, data, mode)
            except OSError as exc:
                raise LoopRuntimeError(f"{path} cannot be copied into the fork ({exc})") from None
        (fork / RUN_FOLDER).mkdir()
        ids = sorted({t.nodeid for t in tests})
        first = run_tests(fork, ids, fork / RUN_FOLDER / "first.xml")
        results = _results(tests, _junit(fork / RUN_FOLDER / "first.xml", tests), first)
        passed = [r.nodeid for r in results if r.category == PASS]
        if passed and not first.timed_out and first.error is None:  # not cut short
            run_tests(fork, passed, fork / RUN_FOLDER / "again.xml")
            held = _junit(fork / RUN_FOLDER / "again.xml", tests)
            for r in results:
                if r.category == PASS and held.get(r.nodeid) != PASS:
                    r.category = FLAKY
        for r in results:
            r.flag, r.reason = _flag(r)
        return results
    finally:
        remove_fork(top, fork)


def sweep_forks(top: Path) -> None:
    """Remove the forks a crashed run left (a process that is gone made them), and git's
    records of them in the repository *top*."""
    folder = Path(tempfile.gettempdir())
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        names = []
    for name in names:
        found = _FORK_NAME.fullmatch(name)
        if found is None or pid_alive(int(found[1]), int(found[2]) or None):
            continue
        try:
            if (folder / name).stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        remove_fork(top, folder / name)


def remove_fork(top: Path, fork: Path) -> None:
    """Remove the fork *fork* of the repository *top* (git's record of it too)."""
    with repo_lock(top):
        git(top, "worktree", "remove", "--force", str(fork), check=False)
        git(top, "worktree", "prune", check=False)
    shutil.rmtree(fork, ignore_errors=True)


def _results(tests: list[Candidate], seen: dict[str, str], ran: ActionResult) -> list[TestResult]:
    """Each candidate's results (a whole file: each test pytest found in it); a candidate
    with none: it timed out, or pytest could not run it."""
    missing = TIMEOUT if ran.timed_out else ERROR
    results: list[TestResult] = []
    for test in tests:
        prefix = test.nodeid + ("::" if test.nodeid == test.path else "[")
        mine = sorted(n for n in seen if n == test.nodeid or n.startswith(prefix))
        results += [TestResult(n, test.path, test.added, seen[n]) for n in mine]
        if not mine:
            results.append(TestResult(test.nodeid, test.path, test.added, missing))
    return results


def _junit(report: Path, tests: list[Candidate]) -> dict[str, str]:
    """The category of each test case in pytest's junit *report*, by its test id."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return {}
    dotted = {t.path[: -len(".py")].replace("/", "."): t.path for t in tests}
    found: dict[str, str] = {}
    for case in root.iter("testcase"):
        owner, name = case.get("classname", ""), case.get("name", "")
        module = next((d for d in dotted if owner == d or owner.startswith(d + ".")), None)
        if module is None:
            continue
        inner = owner[len(module) + 1 :].replace(".", "::")
        nodeid = "::".join(p for p in (dotted[module], inner, name) if p)
        if case.find("failure") is not None or case.find("skipped") is not None:
            found[nodeid] = FAIL
        else:
            found[nodeid] = ERROR if case.find("error") is not None else PASS
    return found


def _flag(result: TestResult) -> tuple[str, str | None]:
    """A new test that passed before the patch proves nothing (hard); a changed one, or a
    pass that did not hold, may (soft)."""
    if result.category == FLAKY:
        return SOFT, "its pass before the patch did not hold when run again"
    if result.category != PASS:
        return NONE, None
    if result.added:
        return HARD, "a new test passed before the patch"
    return SOFT, "a changed test passed before the patch"


def pytest_request(fork: Path, ids: list[str], report: Path, timeout: float) -> ActionRequest:
    """The shell action that runs pytest on *ids* in *fork* (python, else python3, from
    PATH; the fork's own code first on PYTHONPATH)."""
    script = (
        "PY=python; command -v python >/dev/null 2>&1 || PY=python3\n"
        f'exec "$PY" -m pytest -q -p no:cacheprovider --rootdir=. '
        f"--junit-xml={shlex.quote(str(report))} {shlex.join(ids)}"
    )
    path = [str(fork / SRC_FOLDER)] if (fork / SRC_FOLDER).is_dir() else []
    path += [str(fork), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])]
    env = {"PYTHONPATH": os.pathsep.join(path)}
    out = fork / RUN_FOLDER / f"{report.stem}.txt"  # pytest's output
    return ActionRequest(script, timeout, "shell", cwd=fork, env=env, output_file=out)


def evidence_file(context: dict[str, Any], evidence: Evidence) -> None:
    """Write *evidence* to `${context.run_dir}/prepatch_evidence_<issue_id>.json` when the
    run has both (as little-loops does)."""
    run_dir, issue = context.get(RUN_DIR_KEY), context.get("issue_id")
    if not run_dir or not issue:
        return
    try:  # never through a link, nor out of run_dir (an issue id with a `/`)
        data = json.dumps(evidence.to_dict(), indent=2).encode()
        write_below(Path(str(run_dir)), f"prepatch_evidence_{issue}.json", data, 0o644)
    except OSError:
        pass


def routes(policy: str, evidence: Evidence) -> bool:
    """Whether the check makes the state route as a failure (`fail` and a hard flag)."""
    return policy == PREPATCH_FAIL and evidence.verdict == FLAGGED


def warns(policy: str, evidence: Evidence) -> bool:
    """Whether the check is reported as an event (`warn` and a hard flag)."""
    return policy == PREPATCH_WARN and evidence.verdict == FLAGGED
