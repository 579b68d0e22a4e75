"""`ll-loop export NAME [--run ID] -o FILE`: an archived run as one .tar.gz, for `report --from`."""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_option

if TYPE_CHECKING:
    from little_loops.fsm.runs.report import Report


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "export",
        help=summary,
        description="Write a finished run kept in .loops/.history/ (the last one, or --run ID) "
        "to one .tar.gz file: `ll-loop report --from FILE...` reports it anywhere, several "
        "such files together (runs made in CI jobs, say).",
    )
    parser.add_argument("loop", metavar="NAME", help="loop name")
    add_run_option(parser)
    parser.add_argument(
        "-o", "--output", metavar="FILE", type=Path, required=True, help="the .tar.gz to write"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return export_command(args.loop, args.output, run_id=args.run_id)


def export_command(
    name: str, output: Path, *, run_id: str | None = None, loops_dir: Path | None = None
) -> int:
    """Write NAME's archived run *run_id* (the last one) to *output*; 0 when written."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import archived_name
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.runs.archive import find_run
    from little_loops.fsm.runs.atomic import write_user_file

    loop = archived_name(name, loops_dir)
    run, files = find_run(loops_dir, loop, run_id or "last")
    folder = files.running_dir
    with tempfile.TemporaryFile() as packed:
        with tarfile.open(fileobj=packed, mode="w:gz") as tar:
            for path in sorted(folder.iterdir()):
                if path.is_file() and not path.is_symlink():
                    tar.add(path, arcname=f"{loop}/{run.run_id}/{path.name}", recursive=False)
        packed.seek(0)
        write_user_file(output, packed.read())
    print(f"ll-loop: wrote {output} (loop {loop}, run {run.run_id})", file=sys.stderr)
    return ExitCode.OK


def read_exports(sources: list[Path]) -> list[Report]:
    """The report of every run in the exported files *sources*, in the order given;
    LoopRuntimeError naming the file when one is not an export ll-loop can read."""
    from little_loops.fsm.facts.errors import LoopRuntimeError
    from little_loops.fsm.facts.pipe import NoTempFile, read_deadline
    from little_loops.fsm.runs.archive import archived_definition
    from little_loops.fsm.runs.exported import unpack_export
    from little_loops.fsm.runs.report import build_report
    from little_loops.fsm.runs.store import StatePersistence

    reports, deadline = [], read_deadline()
    for source in sources:
        try:
            unpacking = tempfile.TemporaryDirectory(prefix="ll-loop-report-")
        except OSError as exc:  # no usable temporary folder: said as for a pipe's copy
            raise LoopRuntimeError(f"{source}: {NoTempFile(exc)}") from None
        with unpacking as unpacked:
            root = Path(unpacked)
            for loop, run_id in unpack_export(source, root, deadline):
                folder = root / loop / run_id
                store = StatePersistence(loop, root, folder=folder)
                try:
                    report = build_report(loop, run_id, store.log.events())
                except LoopRuntimeError as exc:  # named by the member, not the temp folder
                    raise LoopRuntimeError(f"{source}: {exc}".replace(f"{root}/", "")) from None
                report.definition = archived_definition(folder)
                reports.append(report)
    return reports
