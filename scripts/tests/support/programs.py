"""Tests that run a system program `scripts/dev test` installs (bubblewrap, gh): skipped
where it is missing, except under `CI=true`, where a missing one fails the tests instead of
hiding them."""

from __future__ import annotations

import os
import shutil

import pytest


def needs(program: str, package: str) -> pytest.MarkDecorator:
    """Skip unless *program* is on PATH, or under `CI=true` (then run, and fail without it)."""
    return pytest.mark.skipif(
        shutil.which(program) is None and os.environ.get("CI", "").lower() != "true",
        reason=f"{program} not installed (scripts/dev test installs Debian's {package})",
    )


needs_bwrap = needs("bwrap", "bubblewrap")
needs_gh = needs("gh", "gh")
