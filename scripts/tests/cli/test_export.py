"""`ll-loop export` (cli/export.py): an archived run packed into one file, and read back."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from support.loops import ONE_STEP
from support.project import LoopProject

from little_loops.cli.export import export_command, read_exports
from little_loops.fsm.facts.errors import LoopRuntimeError


def test_an_exported_run_reads_back_as_its_report(
    loop_project: LoopProject, capsys: pytest.CaptureFixture[str]
) -> None:
    loop_project.write("one", ONE_STEP)
    assert loop_project.run("run", "one").code == 0
    capsys.readouterr()
    out = loop_project.root / "one.tar.gz"
    assert export_command("one", out, loops_dir=loop_project.loops) == 0
    assert capsys.readouterr().err.startswith(f"ll-loop: wrote {out} (loop one, run ")
    [report] = read_exports([out])
    assert (report.loop, report.outcome, report.final_state) == ("one", "terminal", "done")
    assert report.definition is not None
    assert report.definition["initial"] == "a"


def _tar(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            tar.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    return path


def test_what_is_not_an_export_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoopRuntimeError, match="no such file"):
        read_exports([tmp_path / "missing.tar.gz"])
    junk = tmp_path / "junk.tar.gz"
    junk.write_text("not a tar")
    with pytest.raises(LoopRuntimeError, match="not a run exported by ll-loop export"):
        read_exports([junk])
    link = tarfile.TarInfo("one/20260101-000000/events.jsonl")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    outside = tarfile.TarInfo("../escape")
    outside.size = 1
    with pytest.raises(LoopRuntimeError, match=r"\(no run files in it\)$"):
        read_exports([_tar(tmp_path / "links.tar.gz", [link, outside])])
