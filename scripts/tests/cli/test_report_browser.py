"""The HTML report in a real headless Chromium: it loads offline, with no console errors,
and shows the graph, the timeline and the steps; a screenshot of it can be taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import browser, llproc
from support.doc_checks import FIX
from support.project import LoopProject

from little_loops.fsm.runs.outcomes import ExitCode


@pytest.fixture(scope="module")
def chromium() -> str:
    return browser.chromium()


@pytest.fixture
def page(loop_project: LoopProject, tmp_path: Path) -> Path:
    loop_project.write("fix", FIX)  # fails until the third pass
    assert llproc.console(loop_project.root, "run", "fix").returncode == ExitCode.OK
    html = tmp_path / "report.html"
    result = llproc.console(loop_project.root, "report", "fix", "--html", str(html))
    assert result.returncode == ExitCode.OK, result.stderr
    return html


def test_the_report_loads_offline_with_no_console_errors(chromium: str, page: Path) -> None:
    loaded = browser.load(chromium, page)
    assert loaded.console == []
    assert '<svg class="graph"' in loaded.dom
    assert '<svg class="timeline"' in loaded.dom
    assert loaded.dom.count('class="edge taken"') == 3  # check→fix, fix→check, check→done
    assert loaded.dom.count("<details>") == 5  # check, fix, check, fix, check
    assert ">3×<" in loaded.dom  # check was visited three times


def test_console_errors_would_be_seen(chromium: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); nope();</script>")
    loaded = browser.load(chromium, broken)
    assert any("boom" in line for line in loaded.console)
    assert any("nope" in line for line in loaded.console)


def test_a_screenshot_of_the_report(chromium: str, page: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    browser.screenshot(chromium, page, png)
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a page with pictures, not a blank one
