"""The GitHub forge (github.com and GitHub Enterprise) through its CLI, `gh` (2.23 or later)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from little_loops.fsm.forges.forge import (
    Check,
    CheckState,
    ForgeError,
    Mergeable,
    Place,
    PullRequest,
    Status,
)
from little_loops.fsm.forges.merge import MergeMethod
from little_loops.fsm.forges.program import OUTPUT_BYTES, NotInstalled, Ran, run_program
from little_loops.fsm.processes.gitcmd import git

LOG_TAIL_LINES = 40  # of a failed check's job log handed on to the next state
LOG_TAIL_BYTES = 64 * 1024  # of the job log read at most (its end)
# How gh (not on a terminal) names a check's bucket in `gh pr checks`.
_BUCKETS = {
    "pass": CheckState.PASSED,
    "fail": CheckState.FAILED,
    "pending": CheckState.PENDING,
    "skipping": CheckState.SKIPPED,
    "cancel": CheckState.FAILED,
}
# gh's answer when the head commit has no checks (yet): the checks have not reported.
_NONE_REPORTED = re.compile(r"no (?:required )?checks reported on the")
# A GitHub Actions job's page: its log is `repos/OWNER/NAME/actions/jobs/ID/logs`.
_JOB = re.compile(r"/actions/runs/\d+/job/(\d+)(?:[/?#]|$)")
# A remote's address: https://HOST/OWNER/NAME(.git), ssh://git@HOST[:PORT]/OWNER/NAME,
# git@HOST:OWNER/NAME
_REMOTE = (
    re.compile(
        r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<repo>[^/]+/[^/]+?)(?:\.git)?/?$"
    ),
    re.compile(r"^[^@/]+@(?P<host>[^:/]+):(?P<repo>[^/]+/[^/]+?)(?:\.git)?/?$"),
)


@dataclass(frozen=True)
class Repo:
    """A repository on a GitHub host, as gh names it (`HOST/OWNER/NAME`)."""

    host: str
    name: str  # OWNER/NAME

    @property
    def full(self) -> str:
        return f"{self.host}/{self.name}"


def repo_of(url: str) -> Repo | None:
    """The GitHub repository a remote's address names; None when it names none."""
    for pattern in _REMOTE:
        found = pattern.match(url.strip())
        if found:
            return Repo(found["host"].lower(), found["repo"])
    return None


class GhForge:
    """GitHub through `gh`: the repository is the one the remote's (fetch) address names."""

    name = "gh"
    program = "gh"
    install_hint = (
        "install GitHub's CLI (https://cli.github.com; Debian/Ubuntu: apt-get install gh)"
    )

    def problem(self, place: Place) -> str | None:
        try:
            repo = self._repo(place)
            ran = run_program(
                [self.program, "auth", "status", "--hostname", repo.host],
                place.where,
                self._env(place, repo),
            )
        except NotInstalled:
            return f"gh is not on PATH; {self.install_hint}"
        except ForgeError as exc:
            return str(exc)
        if ran.code != 0:
            return (
                f"gh is not logged in to {repo.host} ({ran.problem()}); run "
                f"`gh auth login --hostname {repo.host}` or set GH_TOKEN"
            )
        return None

    def open_or_update(
        self, place: Place, head: str, base: str | None, title: str, body: str
    ) -> PullRequest:
        listed = self._gh(
            place,
            "pr",
            "list",
            f"--head={head}",
            "--state=open",
            "--json",
            "number,url,isCrossRepository",
        )
        # GitHub lists by head branch *name* across forks: never take over a fork's.
        found = [
            p
            for p in _json(listed, list)
            if isinstance(p, dict) and p.get("isCrossRepository") is False
        ]
        if found:
            number, url = int(found[0]["number"]), str(found[0]["url"])
            self._gh(
                place, "pr", "edit", str(number), f"--title={title}", "--body-file", "-", stdin=body
            )
            return PullRequest(number, url)
        args = ["pr", "create", f"--head={head}", f"--title={title}", "--body-file", "-"]
        if base:
            args += [f"--base={base}"]
        out = self._gh(place, *args, stdin=body)
        url = out.strip().splitlines()[-1] if out.strip() else ""
        found_number = re.search(r"/pull/(\d+)$", url)
        if found_number is None:
            raise ForgeError(
                f"`gh pr create` did not print the new pull request's address: {out[-200:]!r}"
            )
        return PullRequest(int(found_number.group(1)), url, created=True)

    def status(self, place: Place, pr: PullRequest, *, required: bool) -> Status:
        viewed = _json(
            self._gh(place, "pr", "view", str(pr.number), "--json", "headRefOid,state,mergeable"),
            dict,
        )
        args = ["pr", "checks", str(pr.number), *(["--required"] if required else [])]
        ran = self._call(place, args)
        checks: tuple[Check, ...] | None
        if ran.code != 0 and not ran.out.strip():
            if not _NONE_REPORTED.search(ran.err):
                raise ForgeError(f"`gh {' '.join(args)}` failed: {ran.problem()}")
            checks = None
        else:
            checks = tuple(
                self._check(place, line) for line in ran.out.splitlines() if line.strip()
            )
            # gh exits in error only for a failed (1) or pending (8) check: rows that all
            # passed with an error exit are gh failing part way, never a green light.
            unsettled = (CheckState.FAILED, CheckState.PENDING)
            if ran.code != 0 and not any(c.state in unsettled for c in checks):
                raise ForgeError(f"`gh {' '.join(args)}` failed: {ran.problem()}")
        mergeable = str(viewed.get("mergeable", "")).lower()
        return Status(
            head=str(viewed.get("headRefOid", "")),
            state=str(viewed.get("state", "")),
            mergeable=Mergeable(mergeable) if mergeable in set(Mergeable) else Mergeable.UNKNOWN,
            checks=checks,
        )

    def merge(self, place: Place, pr: PullRequest, method: MergeMethod, head: str) -> None:
        if method is MergeMethod.NONE:
            raise ValueError("merge method `none` merges nothing")
        self._gh(
            place, "pr", "merge", str(pr.number), f"--{method.value}", "--match-head-commit", head
        )

    def _check(self, place: Place, line: str) -> Check:
        """One row of `gh pr checks` (name, bucket, elapsed, link; tab-separated)."""
        fields = line.split("\t")
        name, bucket = fields[0], fields[1] if len(fields) > 1 else ""
        link = fields[3] if len(fields) > 3 else ""
        state = _BUCKETS.get(bucket, CheckState.PENDING)
        tail = self._log_tail(place, link) if state is CheckState.FAILED else ""
        return Check(name, state, link, tail)

    def _log_tail(self, place: Place, link: str) -> str:
        """The last LOG_TAIL_LINES of a GitHub Actions job's log; "" for a check of another
        kind or a log the forge does not give."""
        job = _JOB.search(link)
        if job is None:
            return ""
        path = f"repos/{{owner}}/{{repo}}/actions/jobs/{job.group(1)}/logs"
        ran = self._call(place, ["api", path], out_bytes=LOG_TAIL_BYTES)
        if ran.code != 0:
            return ""
        return "\n".join(ran.out.splitlines()[-LOG_TAIL_LINES:])

    def _repo(self, place: Place) -> Repo:
        url = git(place.where, "remote", "get-url", place.remote, check=False)
        if not url.ok:
            raise ForgeError(f"no remote '{place.remote}' in {place.where}: {url.problem()}")
        repo = repo_of(url.out)
        if repo is None:
            raise ForgeError(
                f"remote '{place.remote}' ({url.out.strip()}) is not a repository address gh knows"
            )
        return repo

    def _env(self, place: Place, repo: Repo) -> dict[str, str]:
        """gh's environment: the repository named, never a prompt, pager, colour or update check."""
        return {
            **place.env,
            "GH_REPO": repo.full,
            "GH_PROMPT_DISABLED": "1",
            "GH_NO_UPDATE_NOTIFIER": "1",
            "GH_PAGER": "cat",
            "NO_COLOR": "1",
            "CLICOLOR": "0",
        }

    def _call(
        self, place: Place, args: list[str], stdin: str = "", out_bytes: int = OUTPUT_BYTES
    ) -> Ran:
        try:
            return run_program(
                [self.program, *args],
                place.where,
                self._env(place, self._repo(place)),
                stdin,
                out_bytes,
            )
        except NotInstalled:
            raise ForgeError(f"gh is not on PATH; {self.install_hint}") from None

    def _gh(self, place: Place, *args: str, stdin: str = "") -> str:
        """gh's stdout for *args*; ForgeError with gh's words when it fails."""
        ran = self._call(place, list(args), stdin)
        if ran.code != 0:
            raise ForgeError(f"`gh {' '.join(args[:2])}` failed: {ran.problem()}")
        return ran.out


def _json(text: str, kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """gh's JSON answer, a list or a dict as *kind* says; ForgeError when it is not."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, kind):
        raise ForgeError(f"gh answered what is not JSON: {text[:200]!r}")
    return value


FORGE = GhForge()
