"""A scripted GitHub stand-in on 127.0.0.1 for the real `gh` (2.23): the GraphQL and REST calls
of auth status, repo view, pr create/view/edit/list/checks/merge, with every call recorded.

`gh` reaches it with `env()`: `GH_HOST=github.localhost` makes gh call
`http://api.github.localhost/`, and `HTTP_PROXY` brings that request here without DNS. A
pull request's head commit is read from a real bare repository on disk (the remote real git
pushes to), so the checks a test scripts belong to the commit that was pushed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from support.local_server import LocalServer

HOST = "github.localhost"
TOKEN = "gho_fakegithubtoken"
# A check's state as a test scripts it -> (CheckRun status, conclusion): what GitHub reports.
CHECK_STATES: dict[str, tuple[str, str | None]] = {
    "pending": ("IN_PROGRESS", None),
    "queued": ("QUEUED", None),
    "passed": ("COMPLETED", "SUCCESS"),
    "failed": ("COMPLETED", "FAILURE"),
    "cancelled": ("COMPLETED", "CANCELLED"),
    "skipped": ("COMPLETED", "SKIPPED"),
}
_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
_OPERATION = re.compile(r"\b(?:query|mutation)\s+(\w+)")


@dataclass(frozen=True)
class Check:
    """One check run on a commit, as a test scripts it: its name, state (a key of
    CHECK_STATES), whether branch protection requires it, and its job's log."""

    name: str
    state: str
    required: bool = True
    log: str = ""


@dataclass
class PullRequest:
    number: int
    title: str
    body: str
    head: str
    base: str
    state: str = "OPEN"  # OPEN / MERGED / CLOSED
    mergeable: str = "MERGEABLE"  # MERGEABLE / CONFLICTING / UNKNOWN
    merge_method: str | None = None
    fork_owner: str | None = None  # a pull request from a fork: its owner's login


@dataclass(frozen=True)
class Call:
    """One request gh made: method, path, GraphQL operation (or ""), variables or REST body,
    and for a merge, the checks' states on the head commit at that moment."""

    method: str
    path: str
    operation: str
    variables: Mapping[str, Any]
    checks_then: tuple[tuple[str, str], ...] = ()


@dataclass
class _Script:
    # checks by head commit version: the Nth distinct head commit pushed to the branch gets
    # the Nth list of steps; each read of its checks moves one step on, the last one stays.
    versions: list[list[list[Check]]] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # head commits in the order first seen
    reads: dict[str, int] = field(default_factory=dict)


class FakeGitHub(LocalServer[object]):
    """The stand-in: `owner/name` served for *bare* (the remote's bare repository, made
    when missing). Script
    checks with `script_checks`; read `calls` / `operations()` afterwards."""

    def __init__(self, bare: Path, owner: str = "octo", name: str = "repo") -> None:
        if not bare.exists():
            subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        self.bare = bare
        self.owner = owner
        self.name = name
        self.default_branch = "main"
        self.logged_in = True
        self.down = False  # every request answered 502, as when the forge cannot be reached
        self.prs: dict[int, PullRequest] = {}
        self.calls: list[Call] = []
        self._scripts: dict[str, _Script] = {}
        super().__init__(type("Handler", (_Handler,), {"fake": self}))
        self._lock = threading.RLock()  # type: ignore[assignment]  # held again inside

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def env(self, config_dir: Path) -> dict[str, str]:
        """What gh needs to talk to this stand-in (its config in *config_dir*, no prompts).
        gh caches some answers for a day under $TMPDIR/gh-cli-cache: *config_dir* holds it."""
        return {
            "TMPDIR": str(config_dir),
            "GH_HOST": HOST,
            "GH_TOKEN": TOKEN,
            "GH_ENTERPRISE_TOKEN": TOKEN,
            "HTTP_PROXY": f"http://127.0.0.1:{self.port}",
            "HTTPS_PROXY": f"http://127.0.0.1:{self.port}",
            "NO_PROXY": "",
            "GH_CONFIG_DIR": str(config_dir),
            "GH_NO_UPDATE_NOTIFIER": "1",
            "GH_PROMPT_DISABLED": "1",
            "GH_PAGER": "cat",
            "NO_COLOR": "1",
        }

    @property
    def remote_url(self) -> str:
        """The URL gh reads the repository from (a git remote pushes to `bare` instead)."""
        return f"https://{HOST}/{self.owner}/{self.name}.git"

    def connect(self, work: Path, remote: str = "origin") -> None:
        """Give the repository *work* the remote *remote*: gh reads `remote_url` from it, and
        real git pushes go to `bare` (`url.<bare>.pushInsteadOf`)."""
        subprocess.run(
            ["git", "-C", str(work), "remote", "add", remote, self.remote_url], check=True
        )
        subprocess.run(
            ["git", "-C", str(work), "config", f"url.{self.bare}.pushInsteadOf", self.remote_url],
            check=True,
        )

    def checkout(self, root: Path, branch: str = "fix") -> Path:
        """A repository in *root* with its `main` pushed and a branch *branch* one commit
        ahead (not pushed), checked out: what a run's worktree is when its work is done."""

        def git(*args: str) -> None:
            subprocess.run(
                ["git", "-C", str(root), *args], check=True, capture_output=True, env=_GIT_ENV
            )

        root.mkdir(parents=True, exist_ok=True)
        git("init", "-q", "-b", self.default_branch)
        git("config", "user.name", "Test User")
        git("config", "user.email", "test@example.com")
        (root / "README").write_text("hello\n")
        git("add", "README")
        git("commit", "-q", "-m", "first")
        self.connect(root)
        git("push", "-q", "origin", self.default_branch)
        git("checkout", "-q", "-b", branch)
        (root / "README").write_text("fixed\n")
        git("commit", "-qam", "fix the readme")
        return root

    # -- scripting and reading ---------------------------------------------------------------
    def script_checks(self, branch: str, *versions: Sequence[Sequence[Check]]) -> None:
        """The checks of *branch*'s head commits: the first distinct head commit gets
        versions[0] (a list of steps, each a list of checks), the second versions[1] ..."""
        with self._lock:
            script = self._scripts.setdefault(branch, _Script())
            script.versions = [[list(step) for step in steps] for steps in versions]

    def operations(self) -> list[str]:
        """The GraphQL operation names (or `METHOD path`) of the calls made, in order."""
        with self._lock:
            return [c.operation or f"{c.method} {c.path}" for c in self.calls]

    def merges(self) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.operation == "PullRequestMerge"]

    def head_oid(self, branch: str) -> str:
        """The commit *branch* points at in the bare repository ("" when it has none)."""
        done = subprocess.run(
            [
                "git",
                "--git-dir",
                str(self.bare),
                "rev-parse",
                "--verify",
                "-q",
                f"refs/heads/{branch}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip()

    def checks_of(self, branch: str, *, advance: bool = False) -> list[Check]:
        """The checks on *branch*'s head commit now; *advance* counts a read (gh's)."""
        with self._lock:
            oid = self.head_oid(branch)
            script = self._scripts.get(branch)
            if script is None or not oid:
                return []
            if oid not in script.seen:
                script.seen.append(oid)
            version = script.seen.index(oid)
            if version >= len(script.versions) or not script.versions[version]:
                return []
            steps = script.versions[version]
            read = script.reads.get(oid, 0)
            if advance:
                script.reads[oid] = read + 1
            return steps[min(read, len(steps) - 1)]

    # -- the answers -----------------------------------------------------------------------
    def _url_root(self) -> str:
        return f"https://{HOST}/{self.owner}/{self.name}"

    def _url(self, number: int) -> str:
        return f"{self._url_root()}/pull/{number}"

    def _repository(self) -> dict[str, Any]:
        return {
            "id": "R_1",
            "name": self.name,
            "nameWithOwner": f"{self.owner}/{self.name}",
            "owner": {"login": self.owner, "id": "U_1"},
            "url": f"https://{HOST}/{self.owner}/{self.name}",
            "description": "",
            "hasIssuesEnabled": True,
            "hasWikiEnabled": False,
            "viewerPermission": "ADMIN",
            "defaultBranchRef": {"name": self.default_branch},
            "parent": None,
            "isPrivate": False,
            "visibility": "PUBLIC",
            "mergeCommitAllowed": True,
            "rebaseMergeAllowed": True,
            "squashMergeAllowed": True,
        }

    def _contexts(self, pr: PullRequest, *, advance: bool) -> list[dict[str, Any]]:
        nodes = []
        for i, check in enumerate(self.checks_of(pr.head, advance=advance)):
            status, conclusion = CHECK_STATES[check.state]
            nodes.append(
                {
                    "__typename": "CheckRun",
                    "name": check.name,
                    "checkSuite": {"workflowRun": {"workflow": {"name": "ci"}}},
                    "status": status,
                    "conclusion": conclusion or "",
                    "startedAt": "2026-01-01T00:00:00Z",
                    "completedAt": "2026-01-01T00:01:00Z" if conclusion else "0001-01-01T00:00:00Z",
                    "detailsUrl": f"{self._url_root()}/actions/runs/7/job/{self._job_id(pr, i)}",
                    "isRequired": check.required,
                }
            )
        return nodes

    def _job_id(self, pr: PullRequest, index: int) -> int:
        return pr.number * 1000 + index + 1

    def _pr_node(self, pr: PullRequest, *, advance: bool = False) -> dict[str, Any]:
        contexts = self._contexts(pr, advance=advance)
        oid = self.head_oid(pr.head) if pr.fork_owner is None else "f" * 40
        return {
            "id": f"PR_{pr.number}",
            "number": pr.number,
            "title": pr.title,
            "body": pr.body,
            "url": self._url(pr.number),
            "state": pr.state,
            "closed": pr.state != "OPEN",
            "merged": pr.state == "MERGED",
            "isDraft": False,
            "headRefName": pr.head,
            "headRefOid": oid,
            "baseRefName": pr.base,
            "isCrossRepository": pr.fork_owner is not None,
            "headRepositoryOwner": {"login": pr.fork_owner or self.owner, "id": "U_1"},
            "headRepository": {"id": "R_1", "name": self.name},
            "maintainerCanModify": False,
            "mergeable": pr.mergeable,
            "mergeStateStatus": "CLEAN" if pr.mergeable == "MERGEABLE" else "DIRTY",
            "author": {"login": "ll-loop-bot"},
            "viewerMergeHeadlineText": "",
            "viewerMergeBodyText": "",
            "autoMergeRequest": None,
            "statusCheckRollup": {
                "nodes": [
                    {
                        "commit": {
                            "oid": oid,
                            "statusCheckRollup": {
                                "contexts": {
                                    "nodes": contexts,
                                    "pageInfo": {"hasNextPage": False, "endCursor": ""},
                                }
                            },
                        }
                    }
                ]
            },
        }

    def _find(self, number: object) -> PullRequest | None:
        return self.prs.get(number) if isinstance(number, int) else None

    def answer_graphql(self, operation: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON answer to one GraphQL operation of gh's."""
        repo = self._repository()
        if operation == "UserCurrent":
            return {"data": {"viewer": {"login": "ll-loop-bot"}}}
        if operation in ("RepositoryInfo", "RepositoryNetwork", "RepositoryFindParent"):
            return {
                "data": {"repository": repo, "repo_000": repo, "viewer": {"login": "ll-loop-bot"}}
            }
        if operation in ("PullRequest_fields", "Issue_fields", "Repository_fields"):
            # gh's feature detection: a GitHub without merge queues or newer fields
            kind = operation.split("_", 1)[0]
            return {"data": {kind: {"fields": []}}}
        if operation == "PullRequestProjectItems":
            items = {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": ""}}
            return {"data": {"repository": {"pullRequest": {"projectItems": items}}}}
        if operation in ("PullRequestTemplates", "IssueTemplates"):
            return {"data": {"repository": {"pullRequestTemplates": [], "issueTemplates": []}}}
        if operation == "PullRequestCreate":
            given = variables.get("input", {})
            head = str(given.get("headRefName", ""))
            if any(
                p.head == head and p.state == "OPEN" and p.fork_owner is None
                for p in self.prs.values()
            ):
                return _error(f"A pull request already exists for {self.owner}:{head}.")
            number = len(self.prs) + 1
            pr = PullRequest(
                number,
                str(given.get("title", "")),
                str(given.get("body", "")),
                head,
                str(given.get("baseRefName", self.default_branch)),
            )
            self.prs[number] = pr
            return {"data": {"createPullRequest": {"pullRequest": self._pr_node(pr)}}}
        if operation == "PullRequestByNumber":
            pr = self._find(variables.get("pr_number"))
            if pr is None:
                number = variables.get("pr_number")
                return _error(f"Could not resolve to a PullRequest with the number of {number}.")
            return {"data": {"repository": {"pullRequest": self._pr_node(pr)}}}
        if operation in ("PullRequestForBranch", "PullRequestList"):
            head = variables.get("headRefName", variables.get("headBranch"))
            states = variables.get("states", variables.get("state")) or ["OPEN"]
            found = [
                self._pr_node(p)
                for p in sorted(self.prs.values(), key=lambda p: -p.number)
                if (head is None or p.head == head) and p.state in states
            ]
            return {
                "data": {
                    "repository": {
                        "pullRequests": {
                            "totalCount": len(found),
                            "nodes": found,
                            "pageInfo": {"hasNextPage": False, "endCursor": ""},
                        },
                        "defaultBranchRef": {"name": self.default_branch},
                    }
                }
            }
        if operation == "PullRequestStatusChecks":
            pr = self._find(_pr_number(variables.get("id")))
            if pr is None:
                return _error("Could not resolve to a node")
            return {"data": {"node": self._pr_node(pr, advance=True)}}
        if operation == "PullRequestUpdate":
            given = variables.get("input", {})
            pr = self._find(_pr_number(given.get("pullRequestId")))
            if pr is None:
                return _error("Could not resolve to a node")
            pr.title = str(given.get("title", pr.title))
            pr.body = str(given.get("body", pr.body))
            return {"data": {"updatePullRequest": {"__typename": "UpdatePullRequestPayload"}}}
        if operation == "PullRequestMergeText":
            return {"data": {"node": {"viewerMergeHeadlineText": "", "viewerMergeBodyText": ""}}}
        if operation == "PullRequestMerge":
            given = variables.get("input", {})
            pr = self._find(_pr_number(given.get("pullRequestId")))
            if pr is None:
                return _error("Could not resolve to a node")
            expected = given.get("expectedHeadOid")
            if expected and expected != self.head_oid(pr.head):
                return _error("Head branch was modified. Review and try the merge again.")
            if pr.mergeable != "MERGEABLE" or pr.state != "OPEN":
                return _error("Pull Request is not mergeable")
            pr.state = "MERGED"
            pr.merge_method = str(given.get("mergeMethod", "MERGE"))
            return {"data": {"mergePullRequest": {"clientMutationId": ""}}}
        return _error(f"the GitHub stand-in does not answer {operation!r}")

    def answer_rest(self, method: str, path: str) -> tuple[int, str, str]:
        """(status, content type, body) of one REST call of gh's."""
        if method == "GET" and path in ("", "/"):
            return (
                200,
                "application/json",
                json.dumps({"current_user_url": f"http://api.{HOST}/user"}),
            )
        if method == "GET" and path == "/user":
            return 200, "application/json", json.dumps({"login": "ll-loop-bot"})
        job = re.fullmatch(rf"/repos/{self.owner}/{self.name}/actions/jobs/(\d+)/logs", path)
        if method == "GET" and job:
            job_id = int(job.group(1))
            pr = self.prs.get(job_id // 1000)
            checks = self.checks_of(pr.head) if pr else []
            index = job_id % 1000 - 1
            if pr is None or not 0 <= index < len(checks):
                return 404, "application/json", json.dumps({"message": "Not Found"})
            return 200, "text/plain", checks[index].log
        return 404, "application/json", json.dumps({"message": "Not Found"})


def _error(message: str) -> dict[str, Any]:
    return {"data": None, "errors": [{"type": "UNPROCESSABLE", "message": message}]}


def _pr_number(node_id: object) -> int | None:
    if isinstance(node_id, str) and node_id.startswith("PR_") and node_id[3:].isdigit():
        return int(node_id[3:])
    return None


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def _send(self, status: int, content_type: str, body: str, scopes: bool = True) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if scopes:
            self.send_header("X-Oauth-Scopes", "repo, read:org, workflow")
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = re.sub(r"^https?://[^/]+", "", self.path).split("?", 1)[0]
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = {}
        with fake._lock:
            if fake.down:
                fake.calls.append(Call(self.command, path, "", {}))
                self._send(502, "text/plain", "Bad Gateway", scopes=False)
                return
            if not fake.logged_in or self.headers.get("Authorization") != f"token {TOKEN}":
                fake.calls.append(Call(self.command, path, "", {}))
                self._send(
                    401,
                    "application/json",
                    json.dumps({"message": "Bad credentials"}),
                    scopes=False,
                )
                return
            if path == "/graphql" and self.command == "POST":
                query = str(payload.get("query", ""))
                found = _OPERATION.search(query)
                operation = found.group(1) if found else "anonymous"
                variables = payload.get("variables") or {}
                checks_then: tuple[tuple[str, str], ...] = ()
                if operation == "PullRequestMerge":
                    pr = fake._find(_pr_number(variables.get("input", {}).get("pullRequestId")))
                    if pr is not None:
                        checks_then = tuple((c.name, c.state) for c in fake.checks_of(pr.head))
                fake.calls.append(Call("POST", path, operation, variables, checks_then))
                self._send(
                    200, "application/json", json.dumps(fake.answer_graphql(operation, variables))
                )
                return
            fake.calls.append(
                Call(self.command, path, "", payload if isinstance(payload, dict) else {})
            )
            status, content_type, body = fake.answer_rest(self.command, path)
            self._send(status, content_type, body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle
