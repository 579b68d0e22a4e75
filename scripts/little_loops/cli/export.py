"""`ll-loop export NAME [--run ID] -o FILE`: an archived run as one .tar.gz, for `report --from`."""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runs import add_run_option

if TYPE_CHECKING:
    from little_loops.fsm.runs.report import Report

# What `report --from` reads of a file: members `<loop>/<run id>/<file name>`, regular files
# only, each at most MEMBER_BYTES and all together at most TOTAL_BYTES once unpacked.
_MEMBER = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,199})/(\d{8}-\d{6}(?:-\d+)?)/([^/\0]{1,255})$")
MEMBER_BYTES = 64 * 1024 * 1024
TOTAL_BYTES = 1024 * 1024 * 1024
MAX_MEMBERS = 100_000


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
    from little_loops.cli.runs import archived_name
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
    from little_loops.fsm.runs.archive import archived_definition
    from little_loops.fsm.runs.report import build_report
    from little_loops.fsm.runs.store import StatePersistence

    reports = []
    for source in sources:
        with tempfile.TemporaryDirectory(prefix="ll-loop-report-") as unpacked:
            root = Path(unpacked)
            for loop, run_id in _unpack(source, root):
                folder = root / loop / run_id
                store = StatePersistence(loop, root, folder=folder)
                try:
                    report = build_report(loop, run_id, store.log.events())
                except LoopRuntimeError as exc:  # named by the member, not the temp folder
                    raise LoopRuntimeError(f"{source}: {exc}".replace(f"{root}/", "")) from None
                report.definition = archived_definition(folder)
                reports.append(report)
    return reports


def _unpack(source: Path, into: Path) -> list[tuple[str, str]]:
    """Unpack the run files in *source* under *into*; the (loop, run id) pairs found.

    Only members shaped `<loop>/<run id>/<name>` that are regular files are unpacked, by
    our own writes (never tarfile's extraction): no link, device, absolute path or `..`
    can reach outside *into*, and the sizes are capped."""
    from little_loops.fsm.facts.errors import LoopRuntimeError

    def bad(why: str) -> LoopRuntimeError:
        return LoopRuntimeError(f"{source}: not a run exported by ll-loop export ({why})")

    found: list[tuple[str, str]] = []
    total = members = 0
    try:
        with tarfile.open(source, mode="r:*") as tar:
            for member in tar:
                # Every member counts, even one skipped: reading past it unpacks it too.
                members += 1
                total += max(0, member.size)
                if total > TOTAL_BYTES or members > MAX_MEMBERS:
                    raise bad(f"more than {MAX_MEMBERS:,} files or 1 GiB unpacked")
                match = _MEMBER.match(member.name)
                if not member.isfile() or match is None:
                    continue
                loop, run_id, name = match.groups()
                if name in (".", ".."):
                    raise bad(f"{member.name}: not a file name")
                if member.size > MEMBER_BYTES:
                    raise bad(f"{member.name}: more than 64 MiB")
                reader = tar.extractfile(member)
                if reader is None:
                    continue
                folder = into / loop / run_id
                folder.mkdir(parents=True, exist_ok=True)
                with reader, open(folder / name, "xb") as out:
                    out.write(reader.read(MEMBER_BYTES + 1)[:MEMBER_BYTES])
                if (loop, run_id) not in found:
                    found.append((loop, run_id))
    except FileNotFoundError:
        raise LoopRuntimeError(f"{source}: no such file") from None
    except FileExistsError:
        raise bad("a file is in it twice") from None
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise bad(str(exc) or type(exc).__name__) from None
    if not found:
        raise bad("no run files in it")
    return found
