"""Find or install a real agent CLI from npm (a pinned version) for the end-to-end tests.

Each CLI is an `NpmCli` in `CLIS`: its package, pinned version, executable and the script
that puts a native binary in place when npm skipped the package's postinstall. It is
installed once with npm into `<repo>/.cache/<name>` and reused while the installed version
is the pinned one and runs. A file lock keeps parallel pytest processes from installing at
the same time. When it cannot be had, the tests skip with the reason, except under
`CI=true`, where they fail so that CI really runs them.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
INSTALL_TIMEOUT = 900  # seconds: some packages pull a native binary of ~240 MB
VERSION_TIMEOUT = 60
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


class CliUnavailable(Exception):
    """The CLI could not be found or installed; the message says why, in one line."""


@dataclass(frozen=True)
class NpmCli:
    """One agent CLI on npm: *package* at *version*, run as *binary*."""

    name: str  # its folder under .cache/ and its name in messages
    package: str
    version: str
    binary: str
    title: str  # as messages name it: `Claude Code CLI`
    postinstall: str | None = None  # a script of the package that installs its native binary

    @property
    def prefix(self) -> Path:
        return REPO_ROOT / ".cache" / self.name


def binary_path(cli: NpmCli, prefix: Path | None = None) -> Path:
    """Where `npm install --prefix <prefix>` puts the CLI's executable."""
    return (prefix or cli.prefix) / "node_modules" / ".bin" / cli.binary


def installed_version(cli: NpmCli, prefix: Path | None = None) -> str | None:
    """The version the installed CLI reports (the first x.y.z it prints), or None if there
    is none that runs."""
    binary = binary_path(cli, prefix)
    if not binary.exists():
        return None
    try:
        proc = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(proc.stdout)
    return found.group(0) if proc.returncode == 0 and found else None


def install(cli: NpmCli, prefix: Path | None = None, version: str | None = None) -> Path:
    """The path of the CLI at *version* (default: the pinned one) under *prefix*, installing
    it with npm if needed. Raises CliUnavailable when npm is missing, the install fails, or
    the installed binary does not report *version*."""
    prefix = prefix or cli.prefix
    version = version or cli.version
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing right now
        if installed_version(cli, prefix) == version:
            return binary_path(cli, prefix)
        npm = shutil.which("npm")
        if npm is None:
            raise CliUnavailable("npm not found on PATH")
        argv = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix)]
        argv.append(f"{cli.package}@{version}")
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CliUnavailable(
                f"npm install failed: no result after {INSTALL_TIMEOUT} s"
            ) from None
        if proc.returncode != 0:
            raise CliUnavailable(f"npm install failed: {_first_error_line(proc.stderr)}")
        found = installed_version(cli, prefix)
        if found is None and cli.postinstall:
            # npm installed a stub and skipped the package's postinstall, which puts the
            # native binary in place (ignore-scripts, unapproved scripts): run it.
            _run_postinstall(cli, prefix)
            found = installed_version(cli, prefix)
        if found != version:
            raise CliUnavailable(
                f"npm installed {cli.package}, but {binary_path(cli, prefix)} reports "
                f"version {found or '(none: it does not run)'}, not {version}"
            )
        return binary_path(cli, prefix)


def _run_postinstall(cli: NpmCli, prefix: Path) -> None:
    script = prefix / "node_modules" / cli.package / (cli.postinstall or "")
    node = shutil.which("node")
    if node is None or not script.is_file():
        return
    subprocess.run(
        [node, script.name],
        cwd=script.parent,
        capture_output=True,
        timeout=INSTALL_TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _first_error_line(stderr: str) -> str:
    """npm's first `npm error` line (its warnings come first), else its first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("npm error", "npm ERR!")):
            return line
    return lines[0] if lines else "(npm printed nothing)"


def cli_or_skip(cli: NpmCli, prefix: Path | None = None, version: str | None = None) -> Path:
    """The pinned CLI, installed if needed; skips the test when it cannot be had, or fails
    it under `CI=true`."""
    try:
        return install(cli, prefix, version)
    except CliUnavailable as exc:
        reason = f"{cli.title} unavailable: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: the e2e tests must run)", pytrace=False)
        pytest.skip(reason)


# The agent CLIs the e2e tests run, by name. To test another: one line here.
CLAUDE_CODE = NpmCli(
    "claude-code",
    "@anthropic-ai/claude-code",
    "2.1.197",
    "claude",
    "Claude Code CLI",
    "install.cjs",
)
# Codex's npm package carries its native binary (an optional dependency per platform).
CODEX = NpmCli("codex", "@openai/codex", "0.171.0", "codex", "Codex CLI")
GEMINI_CLI = NpmCli("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini", "Gemini CLI")
OPENCODE = NpmCli(
    "opencode", "opencode-ai", "1.18.33", "opencode", "opencode CLI", "postinstall.mjs"
)
CLIS: dict[str, NpmCli] = {cli.name: cli for cli in (CLAUDE_CODE, CODEX, GEMINI_CLI, OPENCODE)}
