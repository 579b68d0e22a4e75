"""Installing Claude Code for the e2e tests: reuse, skip without npm, fail under CI."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from support.claude_code import (
    ClaudeCodeUnavailable,
    claude_binary,
    claude_code_or_skip,
    install_claude_code,
)


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `npm` on PATH that records its arguments and installs a `claude` 9.9.9."""
    bin_dir = tmp_path / "bin"
    _script(
        bin_dir / "npm",
        'echo "$@" >> "$NPM_LOG"\n'
        'bin="$5/node_modules/.bin"; mkdir -p "$bin"\n'
        'printf \'#!/bin/sh\\necho "9.9.9 (Claude Code)"\\n\' > "$bin/claude"\n'
        'chmod +x "$bin/claude"',
    )
    log = tmp_path / "npm.log"
    monkeypatch.setenv("NPM_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    return log


def test_installs_once_then_reuses(fake_npm: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "cache"
    assert install_claude_code(prefix, "9.9.9") == claude_binary(prefix)
    assert install_claude_code(prefix, "9.9.9") == claude_binary(prefix)
    assert fake_npm.read_text() == (
        f"install --no-audit --no-fund --prefix {prefix} @anthropic-ai/claude-code@9.9.9\n"
    )


def test_wrong_version_after_install_is_unavailable(fake_npm: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "cache"
    with pytest.raises(ClaudeCodeUnavailable) as info:
        install_claude_code(prefix, "1.0.0")
    assert str(info.value) == (
        f"npm installed @anthropic-ai/claude-code, but {claude_binary(prefix)} reports "
        "version 9.9.9, not 1.0.0"
    )


def _failing_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    _script(
        bin_dir / "npm",
        "echo 'npm warn Unknown user config \"nodedir\".' >&2\n"
        "echo 'npm error code E404' >&2\necho 'npm error 404 Not Found' >&2\nexit 1",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")


def test_failed_install_skips_with_npm_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_npm(tmp_path, monkeypatch)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        claude_code_or_skip(tmp_path / "cache")
    assert str(info.value) == "Claude Code CLI unavailable: npm install failed: npm error code E404"


def test_failed_install_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_npm(tmp_path, monkeypatch)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as info:
        claude_code_or_skip(tmp_path / "cache")
    assert str(info.value) == (
        "Claude Code CLI unavailable: npm install failed: npm error code E404 "
        "(CI=true: the e2e tests must run)"
    )


def test_without_npm_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        claude_code_or_skip(tmp_path / "cache")
    assert str(info.value) == "Claude Code CLI unavailable: npm not found on PATH"


def test_postinstall_runs_when_npm_skipped_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    # npm with ignore-scripts leaves the package's stub `claude`, which exits 1.
    _script(
        bin_dir / "npm",
        'bin="$5/node_modules/.bin"; pkg="$5/node_modules/@anthropic-ai/claude-code"\n'
        'mkdir -p "$bin" "$pkg"; touch "$pkg/install.cjs"\n'
        'printf \'#!/bin/sh\\nexit 1\\n\' > "$bin/claude"; chmod +x "$bin/claude"',
    )
    # The postinstall puts the real binary in place.
    _script(
        bin_dir / "node",
        '[ "$1" = install.cjs ] || exit 9\n'
        "printf '#!/bin/sh\\necho 9.9.9\\n' > ../../.bin/claude",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    prefix = tmp_path / "cache"
    assert install_claude_code(prefix, "9.9.9") == claude_binary(prefix)
