"""A real headless Chromium (Debian's `chromium`): load a page with no network, read its DOM,
its console messages, and take a screenshot. `scripts/dev screenshot HTML PNG` uses it too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

# No name resolves, so nothing can be fetched from the network; the page is a local file.
FLAGS = (
    "--headless=new",
    "--no-sandbox",  # as root, Chromium refuses to start with its sandbox
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr",
    "--v=0",
)


@dataclass
class Loaded:
    """What the browser made of a page."""

    dom: str
    console: list[str]  # console messages it logged (errors among them)


def chromium() -> str:
    """The path of `chromium`; the test is skipped without it, or fails under `CI=true`
    (`scripts/dev test` installs it with apt-get)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "no chromium (scripts/dev test installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return found


def _run(binary: str, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="ll-chromium-") as profile:
        return subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": profile},
        )


def load(binary: str, page: Path) -> Loaded:
    """The DOM Chromium built from *page* (after its scripts ran) and its console lines."""
    done = _run(binary, page, "--dump-dom")
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return Loaded(done.stdout, console)


def screenshot(binary: str, page: Path, png: Path, width: int = 1280, height: int = 2400) -> None:
    """Write a PNG of *page* as Chromium shows it, *width* by *height* pixels."""
    done = _run(binary, page, f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot: {done.stderr.strip()[-500:]}")


if __name__ == "__main__":  # scripts/dev screenshot HTML PNG
    if len(sys.argv) != 3:
        raise SystemExit("usage: scripts/dev screenshot REPORT.html OUT.png")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise SystemExit("dev: no chromium; install Debian's chromium (apt-get install chromium)")
    screenshot(binary, Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"dev: wrote {sys.argv[2]}", file=sys.stderr)
