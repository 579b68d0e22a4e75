"""Find or install the real Claude Code CLI (pinned npm version) for the end-to-end tests.

The CLI is installed once with npm into `<repo>/.cache/claude-code` and reused while
the installed version is the pinned one and runs. A file lock keeps parallel pytest
processes from installing at the same time. When it cannot be had, the tests skip
with the reason, except under `CI=true`, where they fail so that CI really runs them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.197"
REPO_ROOT = Path(__file__).resolve().parents[3]
INSTALL_DIR = REPO_ROOT / ".cache" / "claude-code"
INSTALL_TIMEOUT = 900  # seconds: the package pulls a ~240 MB native binary
VERSION_TIMEOUT = 60


class ClaudeCodeUnavailable(Exception):
    """Claude Code could not be found or installed; the message says why, in one line."""


def claude_binary(prefix: Path = INSTALL_DIR) -> Path:
    """Where `npm install --prefix <prefix>` puts the `claude` executable."""
    return prefix / "node_modules" / ".bin" / "claude"


def installed_version(prefix: Path = INSTALL_DIR) -> str | None:
    """The version the installed `claude` reports, or None if there is none that runs."""
    binary = claude_binary(prefix)
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
    words = proc.stdout.split()
    return words[0] if proc.returncode == 0 and words else None


def install_claude_code(prefix: Path = INSTALL_DIR, version: str = CLAUDE_CODE_VERSION) -> Path:
    """The path of a `claude` of *version* under *prefix*, installing it with npm if needed.

    Raises ClaudeCodeUnavailable when npm is missing, the install fails, or the installed
    binary does not report *version*.
    """
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing right now
        if installed_version(prefix) == version:
            return claude_binary(prefix)
        npm = shutil.which("npm")
        if npm is None:
            raise ClaudeCodeUnavailable("npm not found on PATH")
        argv = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix)]
        argv.append(f"{CLAUDE_CODE_PACKAGE}@{version}")
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
            raise ClaudeCodeUnavailable(
                f"npm install failed: no result after {INSTALL_TIMEOUT} s"
            ) from None
        if proc.returncode != 0:
            raise ClaudeCodeUnavailable(f"npm install failed: {_first_error_line(proc.stderr)}")
        found = installed_version(prefix)
        if found is None:
            # npm installed a stub `claude` and skipped the package's postinstall, which
            # puts the native binary in place (ignore-scripts, unapproved scripts): run it.
            _run_postinstall(prefix)
            found = installed_version(prefix)
        if found != version:
            raise ClaudeCodeUnavailable(
                f"npm installed {CLAUDE_CODE_PACKAGE}, but {claude_binary(prefix)} reports "
                f"version {found or '(none: it does not run)'}, not {version}"
            )
        return claude_binary(prefix)


def _run_postinstall(prefix: Path) -> None:
    script = prefix / "node_modules" / CLAUDE_CODE_PACKAGE / "install.cjs"
    node = shutil.which("node")
    if node is None or not script.exists():
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


def claude_code_or_skip(prefix: Path = INSTALL_DIR, version: str = CLAUDE_CODE_VERSION) -> Path:
    """The pinned `claude`, installed if needed; skips the test when it cannot be had,
    or fails it under `CI=true`."""
    try:
        return install_claude_code(prefix, version)
    except ClaudeCodeUnavailable as exc:
        reason = f"Claude Code CLI unavailable: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: the e2e tests must run)", pytrace=False)
        pytest.skip(reason)
