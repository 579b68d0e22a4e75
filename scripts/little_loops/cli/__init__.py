"""The `ll-loop` command line: a thin shell that parses arguments and calls little_loops.fsm.

Each subcommand lives in its own module with `register(subparsers)`; the module's
handler receives explicit arguments and returns an exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from little_loops import __version__

# Subcommand name -> (module under little_loops.cli, the line `--help` shows for it). Order
# is the order `--help` lists them.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run a loop (also: ll-loop NAME)"),
    "resume": ("resume", "continue a run from its saved state"),
    "stop": ("stop", "stop a running loop (it can be resumed)"),
    "approve": ("approve", "answer a run's approval question with yes (verdict success)"),
    "reject": ("reject", "answer a run's approval question with no (verdict failure)"),
    "status": ("status", "show the state of a loop's run"),
    "list": ("listing", "list the loops in .loops/ (or, with --running, the runs)"),
    "history": ("history", "show the events of a loop's last run"),
    "logs": ("logs", "print the output of a run's latest step (or follow it with -f)"),
    "runs": ("runs", "list a loop's finished runs kept in .loops/.history/"),
    "watch": ("watch", "a live full-screen view of every run, with keys to steer them"),
    "report": ("report", "a run's figures per state and pass, as text, JSON or an HTML page"),
    "worktree": ("worktree", "list, diff, merge or discard the git worktrees of --worktree runs"),
    "export": ("export", "write a finished run to one .tar.gz, for report --from"),
    "validate": ("validate", "check loop files without running them"),
    "migrate": ("migrate", "rewrite loop files into the spelling the docs recommend"),
    "compile": ("compile", "compile a paradigm loop file to the FSM it runs as"),
    "graph": ("graph", "print a loop's states and transitions as a Mermaid or Graphviz diagram"),
    "simulate": ("simulate", "walk a loop with scripted verdicts, running nothing"),
    "init": ("scaffold", "create .loops/ here with a .gitignore and an example loop"),
    "new": ("new", "write .loops/NAME.yaml: a skeleton, or a copy of a shipped loop"),
    "schema": ("schema", "print the path of the loop-file JSON Schema, for editors"),
    "completion": ("completion", "print a bash or zsh completion script"),
}


def terminal_columns() -> int:
    """The width `shutil.get_terminal_size()` gives argparse, found without importing shutil
    (and its bz2, lzma, fnmatch): COLUMNS when it is a number above 0, else the width of the
    terminal stdout is, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    """argparse's, handing its formatter the width argparse would find: argparse makes a
    formatter for each argument it is given (to check its metavar), and finding the width
    itself imports shutil, so every command would pay for a help it does not print."""

    def _get_formatter(self, *args: object, **kwargs: object) -> argparse.HelpFormatter:
        # *args*, *kwargs*: what a later argparse hands on to the colour check (3.14's asks
        # with `file=`, the stream the help goes to); refusing them made --help a TypeError.
        kind = self.formatter_class
        if not (isinstance(kind, type) and issubclass(kind, argparse.HelpFormatter)):
            return super()._get_formatter(*args, **kwargs)
        formatter = kind(prog=self.prog, width=terminal_columns() - 2)
        set_color = getattr(formatter, "_set_color", None)  # Python 3.14: coloured help
        if set_color is not None:
            set_color(getattr(self, "color", False), *args, **kwargs)
        return formatter


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, measuring the command names with the indent they are printed at (it
    counts them 2 columns short, so a name over 8 letters pushed its line down)."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            longest = max(map(len, action.choices), default=0)
            width = longest + self._current_indent + 4
            self._action_max_length = max(self._action_max_length, width)


def build_parser(only: str | None = None, *, outline: bool = False) -> argparse.ArgumentParser:
    """The full argument parser (also used to check the CLI reference in docs/).

    With `only=COMMAND`, the parser has just that subcommand: `main_loop` uses it when the
    command is known, so running one command does not import the modules of all the others
    (startup time is part of the product). Its parsing and messages are the same.

    With `outline=True`, every subcommand is listed with its line from SUBCOMMANDS but none
    is given its arguments, so no command module is imported: that is all `ll-loop --help`,
    `--version` and a bare `ll-loop` need.
    """
    parser = _Parser(
        prog="ll-loop",
        formatter_class=_HelpFormatter,
        description="Run finite-state automation loops defined in .loops/*.yaml.",
        epilog="Shorthand: `ll-loop [run flags] NAME [run flags]` is `ll-loop run NAME ...` "
        "(write `--` before a NAME that is also a command's name).",
    )
    parser.add_argument("--version", action="version", version=f"ll-loop {__version__}")
    # `prog` given: argparse would lay out this parser's usage to find it (it is "ll-loop").
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", prog="ll-loop")
    for name, (module_name, summary) in SUBCOMMANDS.items():
        if only is not None and name != only:
            continue
        if outline:
            subparsers.add_parser(name, help=summary)
            continue
        module = importlib.import_module(f"little_loops.cli.{module_name}")
        module.register(subparsers, summary)
    return parser


_TOP_LEVEL_FLAGS = ("-h", "--help", "--version")


@functools.cache
def run_flags() -> tuple[frozenset[str], frozenset[str]]:
    """The option strings of `run`, as (those taking a value, the switches): read from the
    run parser itself, and only when a command line starts with a flag (start-up time)."""
    parser = build_parser("run")
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    flags = [a for a in commands.choices["run"]._actions if a.option_strings]
    switch = [a for a in flags if a.nargs == 0]
    with_value = [a for a in flags if a.nargs != 0]
    return (
        frozenset(f for a in with_value for f in a.option_strings),
        frozenset(f for a in switch for f in a.option_strings),
    )


def _with_run_shorthand(argv: list[str]) -> list[str]:
    """`ll-loop [run flags] NAME [run flags]` means `ll-loop run NAME ...` when NAME is not
    a subcommand (after `--`, NAME may be any word). Other argument lists are left as they
    are; `_misplaced_option` catches flags written before a subcommand."""
    if not argv or "run" not in SUBCOMMANDS:
        return argv
    first = argv[0]
    if not first.startswith("-") or first == "-":
        return argv if first in SUBCOMMANDS else ["run", *argv]
    if first in _TOP_LEVEL_FLAGS or _first_word(argv) is not None:
        return argv
    return ["run", *argv]


def _first_word(argv: list[str]) -> int | None:
    """The index of the first word that is no flag and no flag's value, if it names a
    subcommand (`ll-loop --json status x`) and comes before any `--`. A flag run does not
    know may be another command's with its value: `--format dot graph x` names `graph`."""
    with_value, switches = run_flags()
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            return index if arg in SUBCOMMANDS else None
        if arg in with_value:
            index += 2
            continue
        after = argv[index + 1 : index + 3]
        if (
            arg not in switches
            and "=" not in arg
            and len(after) == 2
            and not after[0].startswith("-")
            and after[0] not in SUBCOMMANDS
            and after[1] in SUBCOMMANDS
        ):
            return index + 2
        index += 1
    return None


def _misplaced_option(argv: list[str]) -> str | None:
    """A one-line usage error for flags written before the subcommand they belong to."""
    if not argv or not argv[0].startswith("-") or argv[0] in _TOP_LEVEL_FLAGS:
        return None
    index = _first_word(argv)
    if index is None:
        return None
    command, flags = argv[index], " ".join(argv[:index])
    return (
        f"options go after the command: write 'll-loop {command} ... {flags}', "
        f"not '{flags}' before '{command}'"
    )


_SAFE_ERRORS = "ll-loop-locale-safe"


def _escape_unencodable(exc: UnicodeError) -> tuple[bytes, int]:
    """Bytes read undecoded (surrogate escapes) go out as they came; any other character the
    stream's encoding cannot hold is written as JSON writes it (`\\u00b7`, 😀 as
    `\\ud83d\\ude00`), so `--json` output stays JSON under any locale."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(code - 0xDC00)
        elif code > 0xFFFF:
            code -= 0x10000
            out += b"\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
        else:
            out += b"\\u%04x" % code
    return bytes(out), exc.end


def locale_safe_streams() -> None:
    """Make stdout and stderr write what their encoding (a C, Latin-1 or GBK locale) cannot
    hold as a `\\u00b7` escape instead of raising: a message never crashes for the locale."""
    import codecs

    try:
        codecs.lookup_error(_SAFE_ERRORS)
    except LookupError:
        codecs.register_error(_SAFE_ERRORS, _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = str(getattr(stream, "encoding", "") or "").lower().replace("-", "")
        if reconfigure is not None and encoding != "utf8":
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors=_SAFE_ERRORS)


def main_loop(argv: Sequence[str] | None = None) -> int:
    """Entry point of `ll-loop`; returns the process exit code.

    The error classes and exit codes are imported once a command is chosen, so that
    `ll-loop --help` loads no more than argparse and this module.
    """
    code = _command(argv)
    if argv is None:
        # The program (the console script, `python -m`) is about to exit: what it made lives
        # until then, so the collections Python runs at exit would only walk it (40 M of a
        # shell loop's 900 M instructions). Frozen, they skip it. Not for a call with *argv*
        # (the tests'): its process goes on, and its garbage must still be collected.
        gc.freeze()
    return code


def _command(argv: Sequence[str] | None) -> int:
    """`main_loop`'s work: parse *argv* (None: `sys.argv`), run the command, map its errors."""
    locale_safe_streams()
    args_list = _with_run_shorthand(list(sys.argv[1:] if argv is None else argv))
    misplaced = _misplaced_option(args_list)
    if misplaced is not None:
        from little_loops.fsm.facts.outcomes import ExitCode

        print(
            f"usage: ll-loop [-h] [--version] COMMAND ...\nll-loop: error: {misplaced}",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    # After the shorthand and the check above, a list that does not start with a command
    # is empty or starts with -h, --help or --version: the outline parser answers those.
    if args_list and args_list[0] in SUBCOMMANDS:
        parser = build_parser(args_list[0])
    else:
        parser = build_parser(outline=True)
    try:
        args = parse_command_line(parser, args_list)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        if isinstance(exc.code, int):
            return int(exc.code)
        from little_loops.fsm.facts.outcomes import ExitCode

        return ExitCode.USAGE
    from little_loops.fsm.facts.errors import LoopDefinitionError, LoopError, LoopSetupError
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.facts.safetext import one_line

    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return ExitCode.USAGE
    try:
        code: int = args.handler(args)
        return code
    except (LoopDefinitionError, LoopSetupError) as exc:
        print(f"ll-loop: error: {one_line(exc)}", file=sys.stderr)
        return ExitCode.USAGE
    except LoopError as exc:
        print(f"ll-loop: error: {one_line(exc)}", file=sys.stderr)
        return ExitCode.FAILED
    except BrokenPipeError:
        # The reader went away (`ll-loop history x | head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return ExitCode.FAILED
    except KeyboardInterrupt:
        print("ll-loop: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except OSError as exc:
        # The file system said no (.loops/.running is a file, a disk is full, ...): that is
        # the user's to fix, not a bug, so one line naming the file.
        where = f"{_user_path(exc.filename)}: " if exc.filename else ""
        number = f" (errno {exc.errno})" if exc.errno else ""
        print(f"ll-loop: error: {one_line(where)}{exc.strerror or exc}{number}", file=sys.stderr)
        return ExitCode.FAILED


def parse_command_line(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, but a loop's VALUEs may also follow run flags."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        _late_values(parser, args, extra)
    return args


def _late_values(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]
) -> None:
    """Words argparse left over because they came after a flag (`run NAME --dry-run 123`,
    `run NAME -q -- -5`): a command that takes VALUEs gets them in order; anything else is
    a usage error."""
    before, _, after = _split_at_dashes(extra)
    values = getattr(args, "values", None)
    if any(word.startswith("-") for word in before):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not isinstance(values, list):
        if getattr(args, "command", None) == "resume":
            parser.error(
                f"resume takes no parameter values (got {' '.join(before + after)}): "
                "the run goes on with the values it was started with"
            )
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.values = [*values, *before, *after]  # (not extended in place: it may be the default)


def _split_at_dashes(words: list[str]) -> tuple[list[str], bool, list[str]]:
    if "--" not in words:
        return words, False, []
    at = words.index("--")
    return words[:at], True, words[at + 1 :]


def _user_path(filename: object) -> str:
    """*filename* as users see it: relative to here, a write_atomic temp file as its target."""
    from little_loops.fsm.facts.layout import TEMP_SUFFIX
    from little_loops.fsm.facts.runfile import display_path

    path = str(filename)
    folder, _, name = path.rpartition("/")
    stem = name.removesuffix(TEMP_SUFFIX)
    if stem != name and name.startswith(".") and len(stem) > 10 and stem[-9] == ".":
        name = stem[1:-9]
        path = f"{folder}/{name}" if folder else name
    return display_path(path)
