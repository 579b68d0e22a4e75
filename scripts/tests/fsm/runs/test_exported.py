"""`report --from` reads exports within bounds: hostile headers, special files, bombs, time."""

from __future__ import annotations

import gzip
import io
import os
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.pipe import READ_SECONDS_ENV, Deadline, read_deadline
from little_loops.fsm.runs import exported
from little_loops.fsm.runs.exported import unpack_export

EVENTS = b'{"event":"loop_start","ts":"2026-01-01T00:00:00+00:00","loop":"one"}\n'
MEMBER = "one/20260101-000000/one.events.jsonl"
MIB = 1024 * 1024
PEAK_LIMIT_KIB = 120 * 1024  # measured: about 20 MiB for the whole `ll-loop` process


def _extended(path: Path, kind: bytes, size: int) -> Path:
    """A .tar.gz whose first header is a GNU long name (`L`) or a pax header (`x`) of
    *size* bytes (a run of `a`: it compresses to almost nothing), then a run file."""
    head = tarfile.TarInfo("././@LongLink" if kind == tarfile.GNUTYPE_LONGNAME else "pax")
    head.type, head.size = kind, size
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(head.tobuf(format=tarfile.GNU_FORMAT))
        block = b"a" * MIB
        for _ in range(size // MIB):
            out.write(block)
        out.write(b"a" * (size % MIB) + b"\0" * (-size % 512))
        info = tarfile.TarInfo(MEMBER)
        info.size = len(EVENTS)
        out.write(info.tobuf(format=tarfile.USTAR_FORMAT) + EVENTS + b"\0" * (-len(EVENTS) % 512))
        out.write(b"\0" * 1024)
    return path


def _report_from(source: Path, cwd: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """`ll-loop report --from SOURCE` in a process of its own; its result and the peak
    memory of that process in KiB (ru_maxrss of the only child of a fresh Python)."""
    ll_loop = str(Path(sys.executable).parent / "ll-loop")
    limit = scaled(60)
    # The child is ended (and still measured) past the limit: nothing is left running.
    measure = (
        "import resource, subprocess, sys\n"
        "try:\n"
        "    limit = float(sys.argv[1])\n"
        "    run = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL, timeout=limit)\n"
        "    code = run.returncode\n"
        "except subprocess.TimeoutExpired:\n"
        "    code = 124\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, str(limit), ll_loop, "report", "--from", str(source)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=limit + scaled(60),
    )
    *lines, peak = done.stderr.splitlines()
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout, "\n".join(lines)
    ), int(peak)


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_a_huge_extended_header_is_refused_before_it_is_read(tmp_path: Path, kind: bytes) -> None:
    """Main read the whole header into memory first: 300 MiB of it, 300 MiB and more."""
    bomb = _extended(tmp_path / "bomb.tar.gz", kind, 300 * MIB)
    assert bomb.stat().st_size < 2 * MIB
    done, peak_kib = _report_from(bomb, tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        f"ll-loop: error: {bomb}: not a run exported by ll-loop export"
        " (a header of 314,572,800 bytes (more than 1 MiB))"
    )
    assert peak_kib < PEAK_LIMIT_KIB, f"peak {peak_kib} KiB"


def test_a_small_extended_header_is_read_as_tarfile_reads_it(tmp_path: Path) -> None:
    # A long name of 150 bytes: tarfile writes it as a GNU `L` header; not a run file here.
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in ((f"one/20260101-000000/{'x' * 150}", b"1"), (MEMBER, EVENTS)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "ok.tar.gz").write_bytes(gzip.compress(out.getvalue()))
    found = unpack_export(tmp_path / "ok.tar.gz", tmp_path / "into", read_deadline())
    assert found == [("one", "20260101-000000")]
    assert (tmp_path / "into" / MEMBER).read_bytes() == EVENTS


def _special(tmp_path: Path, what: str) -> tuple[Path, object]:
    if what == "fifo":
        os.mkfifo(tmp_path / "fifo")
        return tmp_path / "fifo", None
    if what == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(tmp_path / "sock"))
        return tmp_path / "sock", server
    return Path({"zero": "/dev/zero", "dir": str(tmp_path)}[what]), None


@pytest.mark.parametrize(
    ("what", "named"),
    [
        ("zero", "a character device"),
        ("socket", "a socket"),
        ("dir", "a directory"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_at_once(
    tmp_path: Path, what: str, named: str
) -> None:
    """Main never ended on /dev/zero and waited forever on a FIFO with no writer."""
    source, keep = _special(tmp_path, what)
    began = time.monotonic()
    done, _ = _report_from(source, tmp_path)
    assert time.monotonic() - began < scaled(30)
    assert (done.returncode, done.stderr) == (
        1,
        f"ll-loop: error: {source}: is {named}, not a file ll-loop export wrote",
    )
    del keep


def test_a_fifo_nobody_writes_to_ends_by_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe is read (`report --from <(...)`); a FIFO is waited on for a writer (it said
    "nothing was written to it" before one could open it), until the read deadline."""
    seconds = round(scaled(1.0), 1)
    monkeypatch.setenv(READ_SECONDS_ENV, str(seconds))
    source, _ = _special(tmp_path, "fifo")
    began = time.monotonic()
    done, _ = _report_from(source, tmp_path)
    assert seconds <= time.monotonic() - began < scaled(30)
    assert (done.returncode, done.stderr) == (
        1,
        f"ll-loop: error: {source}: not a run exported by ll-loop export"
        f" (not read within {seconds:g}s (all the files together))",
    )


def test_a_pipe_whose_writer_wrote_nothing_says_so(tmp_path: Path) -> None:
    script = '"$1" report --from <(true)'
    ll_loop = str(Path(sys.executable).parent / "ll-loop")
    done = subprocess.run(
        ["bash", "-c", script, "bash", ll_loop],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )
    assert done.returncode == 1
    assert done.stderr.endswith(
        ": not a run exported by ll-loop export (nothing was written to it)\n"
    )


NO_TEMP = "no temporary file could hold a copy of it"


def test_a_full_temporary_folder_is_said_in_one_line_naming_the_file(tmp_path: Path) -> None:
    # A pipe is copied to a temporary file, an export unpacked into a temporary folder: a
    # full disk (here a file-size limit, EFBIG: Python ignores SIGXFSZ) said "File too
    # large (errno 27)" naming nothing, or blamed the export ("not a run exported").
    export = tmp_path / "big.tar.gz"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(MEMBER)
        info.size = MIB
        tar.addfile(info, io.BytesIO(b"\n" * MIB))
    export.write_bytes(out.getvalue())
    ll_loop = str(Path(sys.executable).parent / "ll-loop")
    # The third fills the limit exactly, then 100 bytes stay buffered: closing the copy
    # failed again, and its bare "File too large" took the place of the error (seen under
    # load, where the second's reads came in such sizes).
    exact = "<(head -c 262144 /dev/zero; head -c 100 /dev/zero)"
    for source in ("<(head -c 2000000 /dev/zero)", "big.tar.gz", exact):
        done = subprocess.run(
            ["bash", "-c", f'ulimit -f 256; "$1" report --from {source}', "bash", ll_loop],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=scaled(30),
        )
        named = "/dev/fd/63" if source.startswith("<") else "big.tar.gz"
        assert (done.returncode, done.stderr) == (
            1,
            f"ll-loop: error: {named}: {NO_TEMP} (File too large; TMPDIR sets where)\n",
        )


def test_no_usable_temporary_folder_is_said_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from little_loops.cli.export import read_exports

    (tmp_path / "x.tar.gz").write_bytes(b"")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with pytest.raises(LoopRuntimeError) as refused:
        read_exports([tmp_path / "x.tar.gz"])
    assert str(refused.value) == (
        f"{tmp_path}/x.tar.gz: {NO_TEMP} (No such file or directory; TMPDIR sets where)"
    )


def test_a_link_to_an_export_is_read(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(EVENTS)
        tar.addfile(info, io.BytesIO(EVENTS))
    (tmp_path / "real.tar.gz").write_bytes(out.getvalue())
    (tmp_path / "link.tar.gz").symlink_to("real.tar.gz")
    found = unpack_export(tmp_path / "link.tar.gz", tmp_path / "into", read_deadline())
    assert found == [("one", "20260101-000000")]


def _refusal(tmp_path: Path, data: bytes, deadline: Deadline | None = None) -> str:
    (tmp_path / "x.tar.gz").write_bytes(gzip.compress(data))
    with pytest.raises(LoopRuntimeError) as refused:
        unpack_export(tmp_path / "x.tar.gz", tmp_path / "into", deadline or read_deadline())
    return str(refused.value)


def _long_names(count: int, size: int) -> bytes:
    head = tarfile.TarInfo("././@LongLink")
    head.type, head.size = tarfile.GNUTYPE_LONGNAME, size
    one = head.tobuf(format=tarfile.GNU_FORMAT) + b"n" * size + b"\0" * (-size % 512)
    return one * count + b"\0" * 1024


def test_extended_headers_count_against_their_own_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exported, "ALL_HEADER_BYTES", 64 * 1024)
    assert "(more than 16 MiB of long-name and pax headers)" in _refusal(
        tmp_path, _long_names(40, 4096)
    )


def test_a_chain_of_small_extended_headers_is_refused(tmp_path: Path) -> None:
    assert _refusal(tmp_path, _long_names(5000, 100)).endswith("(headers chained too deep)")


def test_a_global_pax_header_is_refused(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", pax_headers={"comment": "x" * 400}) as tar:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(EVENTS)
        tar.addfile(info, io.BytesIO(EVENTS))
    assert _refusal(tmp_path, out.getvalue()).endswith(
        "(a global pax header; ll-loop export writes none)"
    )


def test_the_unpacked_total_is_counted_while_streaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small pax headers (one block each, so no header cap sees them) before one member:
    # every byte tarfile reads counts against the unpacked total all the same.
    monkeypatch.setattr(exported, "TOTAL_BYTES", 64 * 1024)
    monkeypatch.setattr(exported, "ALL_HEADER_BYTES", 0)
    monkeypatch.setattr(exported, "MAX_MEMBERS", 10)
    record = b"20 comment=xxxxxxxx\n"
    pax = tarfile.TarInfo("pax")
    pax.type, pax.size = tarfile.XHDTYPE, len(record)
    one = pax.tobuf(format=tarfile.USTAR_FORMAT) + record + b"\0" * (-len(record) % 512)
    info = tarfile.TarInfo(MEMBER)
    info.size = len(EVENTS)
    member = info.tobuf(format=tarfile.USTAR_FORMAT) + EVENTS + b"\0" * (-len(EVENTS) % 512)
    data = one * 200 + member + b"\0" * 1024
    assert "(more than 10 files or 1 GiB unpacked)" in _refusal(tmp_path, data)
    monkeypatch.setattr(exported, "TOTAL_BYTES", 1024 * 1024)
    found = unpack_export(tmp_path / "x.tar.gz", tmp_path / "into", read_deadline())
    assert found == [("one", "20260101-000000")]


def test_the_read_has_a_deadline(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(EVENTS)
        tar.addfile(info, io.BytesIO(EVENTS))
    # The message gives the seconds the deadline was made with (not LL_LOOP_READ_SECONDS again).
    assert "(not read within 7s (all the files together))" in _refusal(
        tmp_path, out.getvalue(), deadline=Deadline(time.monotonic() - 1, 7.0)
    )
