"""`ll-loop run NAME --background`: start the run detached and say how to follow it."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from little_loops.cli.options import RunOptions
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.runs.background import START_WAIT_SECONDS, start_detached
from little_loops.fsm.runs.new_run import Where


def child_argv(command: str, target: str, options: RunOptions) -> list[str]:
    """The command line of the detached run: `run`/`resume` with every option but --background."""
    return [sys.executable, "-m", "little_loops.cli", command, target, *options.argv()]


def start_background(
    target: str,
    loop_name: str,
    scope: Sequence[str],
    options: RunOptions,
    loops_dir: Path,
    *,
    command: str = "run",
    wait: float = START_WAIT_SECONDS,
    where: Where | None = None,
    root: Path | None = None,
) -> int:
    """Start `ll-loop COMMAND TARGET` (a loop file's absolute path, or for `resume` the run's
    key) in a new session and report its pid; a failed start is reported here. *loop_name*
    is the run's key (`NAME@ID` in a worktree), *where* says where a `run` happens, *root*
    where a resumed worktree run's scope lies.

    Without `--queue` the scope is checked first, so an overlap is refused by this command
    (exit 1) rather than in the log. The child's pid goes to stdout (a JSON object with
    `--json`); how to follow, inspect and stop it goes to stderr.
    """
    argv = child_argv(command, target, options) + ([] if where is None else where.argv())
    in_worktree = where is not None and where.worktree
    started = start_detached(
        argv,
        loop_name,
        scope,
        loops_dir,
        queue=options.queue,
        wait=wait,
        command=command,
        check_scope=not in_worktree,
        root=root,
    )
    code = started.exit_code
    shown = display_path(started.log)
    if code is not None and code != ExitCode.OK:
        print(
            f"ll-loop: error: the background run of loop '{loop_name}' exited with code {code};"
            f" its output ({shown}):",
            file=sys.stderr,
        )
        for line in started.log_tail:
            print(f"  {line}", file=sys.stderr)
        return code
    if options.as_json:
        print(json.dumps({"loop": loop_name, "pid": started.pid, "log": shown}))
    else:
        print(started.pid)
    how = " and already finished" if code == ExitCode.OK else ""
    print(
        f"started loop '{loop_name}' in the background (pid {started.pid}){how}\n"
        f"  follow: ll-loop status {loop_name} --follow (or tail -f {shown})\n"
        f"  status: ll-loop status {loop_name}\n"
        f"  stop:   ll-loop stop {loop_name}",
        file=sys.stderr,
    )
    return ExitCode.OK
