"""The GitHub Actions recipe of docs/guide.md: its `run:` steps, run as the jobs would, make
one combined report of the matrix's runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from support.doc_blocks import all_blocks
from support.project import LoopProject

BIN = Path(sys.executable).parent
LOOP = "name: {name}\ninitial: check\nstates:\n  check:\n    action: '{action}'\n    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"  # noqa: E501


def _workflow() -> dict[str, Any]:
    (block,) = [b for b in all_blocks() if b.starts("docs/guide.md", "jobs:\n  loop:")]
    return yaml.safe_load(block.text)


def _run_steps(job: dict[str, Any], **matrix: str) -> list[str]:
    """The job's `run:` lines that call ll-loop, `${{ matrix.X }}` filled in."""
    lines = []
    for step in job["steps"]:
        line = step.get("run", "")
        for key, value in matrix.items():
            line = line.replace("${{ matrix." + key + " }}", value)
        if "ll-loop" in line:
            lines.append(line)
    return lines


def _bash(cwd: Path, line: str) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{line}: {done.stderr}"


def test_the_matrix_jobs_and_the_report_job(loop_project: LoopProject, tmp_path: Path) -> None:
    jobs = _workflow()["jobs"]
    names = jobs["loop"]["strategy"]["matrix"]["loop"]
    assert jobs["report"]["needs"] == "loop"
    runs = tmp_path / "report-job" / "runs"  # what download-artifact gives the report job
    runs.mkdir(parents=True)
    for index, name in enumerate(names):  # each job: a fresh checkout of the project
        job_dir = tmp_path / f"job-{name}"
        shutil.copytree(loop_project.root, job_dir)
        action = "true" if index == 0 else "false"  # one loop ends done, one failed
        (job_dir / ".loops" / f"{name}.yaml").write_text(LOOP.format(name=name, action=action))
        for line in _run_steps(jobs["loop"], loop=name):
            _bash(job_dir, line)
        shutil.copy(job_dir / f"{name}.tar.gz", runs)
    for line in _run_steps(jobs["report"]):
        _bash(runs.parent, line)
    page = (runs.parent / "report.html").read_text()
    assert page.count('<article id="run-') == len(names)
    for name in names:
        assert name in page
    _bash(runs.parent, "ll-loop report --from runs/*.tar.gz --json > combined.json")
    combined = json.loads((runs.parent / "combined.json").read_text())
    assert sorted(run["loop"] for run in combined["runs"]) == sorted(names)
    assert combined["totals"]["runs"] == len(names)
