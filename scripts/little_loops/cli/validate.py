"""`ll-loop validate [NAME|PATH...]`: check the files of `.loops/` without running anything.

Each file is checked as the kind of file it is (a loop, the agents file, a fragment
library: `fsm.validate.project_files`); with no argument, every YAML file of the project's
`.loops/` and its subfolders is. The list of problems is this command's data, so it goes to
stdout: one line per problem, `path:line: severity: message` (`path:line:column:` for YAML
syntax errors, `path:` when there is no line), then `path: ok` for each valid file. Exit 0
when every file is valid (warnings allowed unless --strict), 2 when any is not.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from little_loops.cli.resolve import project_loops_dir, resolve_loop_path, stale_compiled_note
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError, ValidationError
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.safetext import one_line

if TYPE_CHECKING:
    from little_loops.fsm.definition.reading.loop_files import FolderNames
    from little_loops.fsm.validate.loopfile import FileReport


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "validate",
        help=summary,
        description=(
            "Check loop files, .loops/agents.yaml and fragment libraries, and list every "
            "problem. NAME means .loops/NAME.yaml; with none, every file of .loops/ is checked."
        ),
    )
    parser.add_argument(
        "loops",
        nargs="*",
        metavar="NAME|PATH",
        help="loop names or file paths (default: every file of the project's .loops/)",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print a JSON report on stdout"
    )
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument(
        "--compat",
        action="store_true",
        help="check the loop as little-loops does: our stricter checks are warnings, and the "
        "keys it reads otherwise have its meaning",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only problems, not 'path: ok'"
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="first rewrite the files into the recommended spelling (as ll-loop migrate)",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    loops: list[str] = list(args.loops)
    if not loops:
        found = whole_project(project_loops_dir())
        if isinstance(found, str):
            print(f"ll-loop validate: error: {found}", file=sys.stderr)
            return ExitCode.USAGE
        loops = found
    if args.fix:  # `migrate`'s lines first, then the check of the files it wrote
        from little_loops.cli.migrate import migrate_command

        fixed = loops if args.loops else [i for i in loops if not Path(i).is_symlink()]
        # (with no argument, a linked file is checked, not rewritten: migrate refuses one)
        migrate_command(migratable(fixed), out=sys.stderr if args.as_json else None)
    return validate_command(
        loops, as_json=args.as_json, strict=args.strict, quiet=args.quiet, compat=args.compat
    )


def whole_project(loops_dir: Path) -> list[str] | str:
    """The files `ll-loop validate` with no argument checks (as the paths it shows), or why
    there are none to check."""
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.validate.project_files import project_files

    if not loops_dir.is_dir():
        return f"no {loops_dir.name}/ folder here or above: name the files to check"
    files = project_files(loops_dir)
    if not files:
        return f"no .yaml or .yml file in {display_path(loops_dir)}: nothing to check"
    return [display_path(path) for path in files]


def migratable(items: Sequence[str]) -> list[str]:
    """Those of *items* `--fix` rewrites as `migrate` does: loops and fragment libraries, not
    the agents file (it has no states to rewrite)."""
    from little_loops.fsm.validate.project_files import FILE_KINDS, kind_of_file

    loops_dir = project_loops_dir()
    out = []
    for item in items:
        try:
            path = resolve_loop_path(item, loops_dir)
        except (LoopFileError, LoopDefinitionError):
            out.append(item)  # migrate says what is wrong with it
            continue
        if kind_of_file(path) is not FILE_KINDS["agents"]:
            out.append(item)
    return out


def validate_file(
    name_or_path: str,
    *,
    strict: bool = False,
    loops_dir: Path | None = None,
    folder: FolderNames | None = None,
    compat: bool = False,
) -> FileReport:
    """The report for one command-line argument (a loop that cannot be found is an error);
    *folder* keeps the names of the loop files of each `.loops/` between calls."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    # Imported here so that building the parser (`ll-loop --help`) does not load YAML and
    # the validators: startup time is part of the product.
    from little_loops.fsm.definition.reading.loop_files import FolderNames
    from little_loops.fsm.validate.loopfile import FileReport
    from little_loops.fsm.validate.project_files import check_project_file

    try:
        path = resolve_loop_path(name_or_path, loops_dir)
    except LoopFileError as exc:
        return FileReport(name_or_path, errors=[ValidationError(exc.detail)])
    except LoopDefinitionError as exc:
        return FileReport(name_or_path, errors=[ValidationError(str(exc))])
    report = check_project_file(path, FolderNames() if folder is None else folder, compat)
    note = stale_compiled_note(path)
    if note is not None:
        report.warnings.append(ValidationError(note, severity="warning"))
    if strict and report.warnings:
        promoted = [replace(w, severity="error") for w in report.warnings]
        report = FileReport(
            report.path, None, sorted([*report.errors, *promoted], key=_line), [], report.notes
        )
    return report


def _line(problem: ValidationError) -> int:
    return problem.line or 0


def format_problem(path: str, problem: ValidationError) -> str:
    """`path:line[:column]: severity: message`."""
    where = problem.file or path
    if problem.line is not None:
        where += f":{problem.line}"
        if problem.column is not None:
            where += f":{problem.column}"
    return f"{one_line(where)}: {problem.severity}: {one_line(problem)}"


def problem_json(problem: ValidationError) -> dict[str, Any]:
    """One problem in the documented `--json` shape."""
    return {
        "severity": problem.severity,
        "message": str(problem),
        "detail": problem.message,
        "line": problem.line,
        "column": problem.column,
        "file": problem.file,
        "loop": problem.loop,
        "state": problem.state,
        "key": problem.key,
        "keys": [str(k) for k in problem.path],
    }


def report_json(reports: Sequence[FileReport]) -> dict[str, Any]:
    """The whole `--json` document: `{"valid": bool, "files": [...]}`."""
    files = []
    for report in reports:
        problems = report.problems()
        loop = report.fsm.name if report.fsm is not None else None
        loop = loop or next((p.loop for p in problems if p.loop), None)
        files.append(
            {
                "path": report.path,
                "loop": loop,
                "valid": report.valid,
                "errors": [problem_json(p) for p in problems],
                "notes": [problem_json(p) for p in report.notes],
            }
        )
    return {"valid": all(r.valid for r in reports), "files": files}


def validate_command(
    loops: Sequence[str],
    *,
    as_json: bool = False,
    strict: bool = False,
    compat: bool = False,
    quiet: bool = False,
    loops_dir: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """Validate each of *loops* (names or paths); exit 0 when all are valid, 2 otherwise."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    stream = sys.stdout if out is None else out
    from little_loops.fsm.definition.reading.loop_files import FolderNames

    folder = FolderNames()
    reports = [
        validate_file(item, strict=strict, loops_dir=loops_dir, folder=folder, compat=compat)
        for item in loops
    ]
    if as_json:
        import json  # only for --json: startup time is part of the pre-commit hook

        json.dump(report_json(reports), stream, indent=2)
        stream.write("\n")
    else:
        for report in reports:
            for problem in sorted([*report.problems(), *report.notes], key=_line):
                print(format_problem(report.path, problem), file=stream)
            if report.valid and not quiet:
                count = len(report.warnings)
                note = f" ({count} warning{'s' if count != 1 else ''})" if count else ""
                print(f"{report.path}: ok{note}", file=stream)
    return ExitCode.OK if all(r.valid for r in reports) else ExitCode.USAGE
