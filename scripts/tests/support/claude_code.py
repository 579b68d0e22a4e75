"""Find or install the real Claude Code CLI (pinned npm version) for the end-to-end tests:
the Claude Code entry of npm_cli, under the names the tests have always used."""

from __future__ import annotations

from pathlib import Path

from support.npm_cli import CLAUDE_CODE, CliUnavailable, binary_path, cli_or_skip, install

CLAUDE_CODE_PACKAGE = CLAUDE_CODE.package
CLAUDE_CODE_VERSION = CLAUDE_CODE.version
INSTALL_DIR = CLAUDE_CODE.prefix
ClaudeCodeUnavailable = CliUnavailable


def claude_binary(prefix: Path = INSTALL_DIR) -> Path:
    """Where `npm install --prefix <prefix>` puts the `claude` executable."""
    return binary_path(CLAUDE_CODE, prefix)


def install_claude_code(prefix: Path = INSTALL_DIR, version: str = CLAUDE_CODE_VERSION) -> Path:
    """The path of a `claude` of *version* under *prefix*, installing it with npm if needed."""
    return install(CLAUDE_CODE, prefix, version)


def claude_code_or_skip(prefix: Path = INSTALL_DIR, version: str = CLAUDE_CODE_VERSION) -> Path:
    """The pinned `claude`, installed if needed; skips (fails under CI=true) when it cannot."""
    return cli_or_skip(CLAUDE_CODE, prefix, version)
