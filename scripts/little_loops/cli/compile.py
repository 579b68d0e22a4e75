"""`ll-loop compile INPUT [-o OUTPUT]`: print (or write) the FSM a paradigm file compiles to."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from little_loops.cli.resolve import compiled_sources, project_loops_dir, resolve_loop_path
from little_loops.fsm.definition.reading.loop_files import SOURCE_SUFFIXES
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopRuntimeError, LoopValidationError
from little_loops.fsm.facts.outcomes import ExitCode

STDOUT = "-"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], summary: str) -> None:
    parser = subparsers.add_parser(
        "compile",
        help=summary,
        description=(
            "Compile a goal / convergence / invariants / imperative loop file to its FSM and"
            " print it as YAML on stdout, or write it to OUTPUT with -o."
        ),
    )
    parser.add_argument("input", metavar="INPUT", help="loop name (.loops/NAME.yaml) or path")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUTPUT",
        help="write the FSM to this file instead of stdout ('-': stdout)",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return compile_command(args.input, args.output)


def resolve_source(name_or_path: str, loops_dir: Path | None = None) -> Path:
    """The file to compile: a path as given; a NAME is `.loops/NAME.yaml` (or `.yml`);
    `library:NAME` a shipped loop.

    Unlike `ll-loop run`, a NAME does not pick `.loops/NAME.fsm.yaml` first: that is
    this command's output (`-o`), not a source.
    """
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    for suffix in SOURCE_SUFFIXES:
        candidate = loops_dir / f"{name_or_path}{suffix}"
        if "/" not in name_or_path and candidate.is_file():
            return candidate
    return resolve_loop_path(name_or_path, loops_dir)


def compile_command(input_name: str, output: str | None) -> int:
    """Compile INPUT and print the FSM on stdout, or write it to *output* (a path; `-` is
    stdout). Without `-o` nothing is written: a `.loops/NAME.fsm.yaml` would be what `run
    NAME` picks from then on, and go stale at the next edit of NAME.yaml.

    Raises LoopDefinitionError (exit 2) when the input is not a valid loop.
    """
    from little_loops.fsm.definition.reading.loopdoc import load_loop
    from little_loops.fsm.definition.writing.writer import dump_fsm_yaml
    from little_loops.fsm.paradigms.registry import compile_paradigm
    from little_loops.fsm.validate.loopfile import located, validate_fsm
    from little_loops.loops import LIBRARY_PREFIX

    source = resolve_source(input_name)
    doc = load_loop(source)
    try:
        fsm = compile_paradigm(doc.data)
    except LoopValidationError as exc:  # each at its line (of a fragment library too)
        raise located(exc.errors, doc) from None
    shipped = input_name.startswith(LIBRARY_PREFIX)
    errors = [p for p in validate_fsm(fsm) if p.severity == "error"]
    if errors:
        raise located(errors, doc)
    header = (
        f"Compiled by `ll-loop compile` from {input_name if shipped else source}"
        f" (paradigm: {fsm.paradigm or 'fsm'}).\n"
        "Edit the source file and compile again rather than editing this one."
    )
    text = dump_fsm_yaml(fsm, header=header)
    if output is None or output == STDOUT:
        if sys.stdout is None:  # `ll-loop compile x >&-`: nowhere to print the FSM
            raise LoopDefinitionError("standard output is closed: write the FSM with -o FILE")
        sys.stdout.write(text)
        return ExitCode.OK
    target = Path(output)
    if _same_file(source, target):
        print(
            f"ll-loop: error: refusing to overwrite the input file {source}; choose another -o",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    write_output(target, text)
    print(f"wrote {target}", file=sys.stderr)
    for shadowed in compiled_sources(target)[:1]:  # the user's own file now comes first
        print(
            f"ll-loop: note: a loop name now means {target}, not {shadowed}; after editing"
            f" {shadowed}, compile it again (or delete {target})",
            file=sys.stderr,
        )
    return ExitCode.OK


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def write_output(path: Path, text: str) -> None:
    """Write *text* to *path* atomically, readable like any file the user creates."""
    from little_loops.fsm.runs.atomic import write_user_file

    try:
        write_user_file(path, text)
    except OSError as exc:
        raise LoopRuntimeError(f"cannot write {path}: {exc.strerror or exc}") from None
