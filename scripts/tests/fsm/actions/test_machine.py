"""Machine: the version a real program prints, and None for one that fails or is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.actions.machine import Machine


def _program(tmp_path: Path, body: str) -> str:
    path = tmp_path / "prog"
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_version_is_the_first_line_printed(tmp_path: Path) -> None:
    program = _program(tmp_path, 'echo; echo "  1.2.3 (Tool)"; echo more')
    assert Machine.here().version(program) == "1.2.3 (Tool)"


def test_a_failing_or_missing_program_has_no_version(tmp_path: Path) -> None:
    assert Machine.here().version(_program(tmp_path, "echo 1.0; exit 3")) is None
    assert Machine.here().version(str(tmp_path / "nowhere")) is None


def test_here_reads_this_process() -> None:
    here = Machine.here()
    assert here.which("bash") is not None
    assert here.home == Path.home()


def test_a_version_printed_without_end_is_read_only_so_far(tmp_path: Path) -> None:
    # A `codex` on PATH whose --version never stops printing: ll-loop must not hold all of
    # it (gigabytes within the time limit) nor wait out the limit; the first line will do.
    import time

    from support.slowdown import scaled

    program = _program(tmp_path, "echo 9.9.9; exec yes spam")
    started = time.monotonic()
    assert Machine.here().version(program) == "9.9.9"
    assert time.monotonic() - started < scaled(10)


def test_a_version_that_hangs_gives_none_within_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from support.slowdown import scaled

    monkeypatch.setattr("little_loops.fsm.actions.machine.VERSION_TIMEOUT", 0.5)
    program = _program(tmp_path, "echo 1.0; sleep 600")
    started = time.monotonic()
    assert Machine.here().version(program) is None
    assert time.monotonic() - started < scaled(10)


def test_version_numbers_are_the_first_x_y_z_said() -> None:
    from little_loops.fsm.actions.machine import shown_version, version_numbers

    assert version_numbers("codex-cli 0.171.0") == (0, 171, 0)
    assert version_numbers("1.18.33\n2.0.0") == (1, 18, 33)
    assert version_numbers("no version here") is None
    assert version_numbers(None) is None
    assert shown_version((0, 30, 0)) == "0.30.0"
