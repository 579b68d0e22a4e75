"""`ll-loop history NAME`: the events of a loop's last run, one line each."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument, add_run_option
from little_loops.fsm.facts.events import Event


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "history",
        help=summary,
        description="Show the events of a loop's last run (resumes included), oldest first.",
    )
    add_run_argument(parser)
    add_run_option(parser)
    parser.add_argument("--tail", type=_count, metavar="N", help="only the last N events")
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print the events as a JSON list"
    )
    parser.set_defaults(handler=_handler)


def _count(text: str) -> int:
    """`--tail N`: an integer of at least 1, as every count flag reads one (`runs.flags`),
    without the run options' module: it imports the loop model, which history needs not."""
    from little_loops.fsm.runs.flags import positive_int

    try:
        return positive_int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _handler(args: argparse.Namespace) -> int:
    return history_command(args.loop, tail=args.tail, as_json=args.as_json, run_id=args.run_id)


def format_event(event: dict[str, Any], loop: str = "NAME") -> str:
    """One event as `ts event state → ...`; fields of unexpected types are shown as JSON."""
    from little_loops.fsm.facts.safetext import one_line

    try:
        return one_line(_format_known(event, loop))
    except (TypeError, ValueError, OverflowError):
        # Not what ll-loop writes (a file edited by hand, a newer version): show it raw
        # rather than fail the whole history.
        rest = {k: v for k, v in event.items() if k not in ("ts", "event")}
        line = f"{event.get('ts', '-')} {str(event.get('event', '?')):<15} {_raw(rest)}"
        return one_line(line)


def _raw(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except ValueError:  # an integer too long to print
        return "(unprintable event)"


def _format_known(event: dict[str, Any], loop: str) -> str:
    from little_loops.cli.display import outcome_line, shorten, verdict_detail
    from little_loops.cli.nesting import INDENT, depth_of
    from little_loops.fsm.engine.commits import commit_text
    from little_loops.fsm.facts.timefmt import format_duration

    kind = str(event.get("event", "?"))
    state = event.get("state")
    head = f"{event.get('ts', '-')} {kind:<15}" + INDENT * depth_of(event)  # a sub-loop's
    if kind == Event.LOOP_START:
        resumed = " (resumed)" if event.get("resumed") else ""
        tree = event.get("worktree")
        if isinstance(tree, dict) and event.get("run_id"):  # a run in a worktree: NAME@ID
            where = f" (branch {tree.get('branch', '?')})"
            return f"{head} {event.get('loop', '')}@{event['run_id']} at {state}{where}{resumed}"
        return f"{head} {event.get('loop', '')} at {state}{resumed}"
    if kind == Event.STATE_ENTER:
        return f"{head} {state} (iteration {event.get('iteration', '?')})"
    if kind == Event.ACTION_START:
        return f"{head} {state} → {shorten(str(event.get('action', '')))}"
    if kind == Event.ACTION_COMPLETE:
        took = format_duration(event.get("duration_ms", 0))
        return f"{head} {state} → exit {event.get('exit_code')} in {took}"
    if kind == Event.EVALUATE:
        detail = verdict_detail(event)
        return f"{head} {state} → {event.get('verdict')}" + (f" {detail}" if detail else "")
    if kind == Event.ROUTE:
        why = event.get("verdict") or event.get("reason") or ""
        return f"{head} {event.get('from')} → {event.get('to')}" + (f" ({why})" if why else "")
    if kind == Event.STALL:
        return f"{head} {state} → {event.get('message')}" + (
            f" → {event['to']}" if event.get("to") else ""
        )
    if kind == Event.APPROVAL_WAIT:
        return f"{head} {state} asks: {event.get('question')}"
    if kind == Event.APPROVAL:
        note = f": {event['note']}" if event.get("note") else ""
        return f"{head} {state} → {event.get('verdict')}{note}"
    if kind == Event.ATTEMPT:
        return f"{head} {state} attempt {event.get('attempt')} of {event.get('max_attempts')}"
    if kind in (Event.RETRY_WAIT, Event.RATE_LIMIT_WAIT, Event.CHECKS_WAIT):
        from little_loops.fsm.engine.attempts import waiting_text

        return f"{head} {state} {waiting_text(event)}"
    if kind == Event.GUARDS:
        return f"{head} {state} → {_guards_text(event)}"
    if kind in (Event.CHECKPOINT, Event.ROLLBACK):
        return f"{head} {state} {commit_text(event)}"
    if kind in _FANOUT_EVENTS:
        return f"{head} {state} {_fanout_text(event)}"
    if kind == Event.LOOP_COMPLETE:
        line = outcome_line(event)
        return f"{head} {line.replace('ll-loop resume NAME', f'll-loop resume {loop}')}"
    rest = {k: v for k, v in event.items() if k not in ("ts", "event")}
    return f"{head} {_raw(rest)}"


_FANOUT_EVENTS = (Event.BRANCH_START, Event.BRANCH_FINISH, Event.FANOUT_JOIN, Event.FANOUT_MERGE)


def _fanout_text(event: dict[str, Any]) -> str:
    """A fan-out event: `⇉ #0 parser: fix@ab12 on ll/fix/ab12` (a branch started), `⇇ #0
    parser: fix@ab12 success (terminal) $0.0100` (ended), its join and its merge."""
    from little_loops.fsm.facts.spend import format_cost
    from little_loops.fsm.runs.fanned import from_events, text_of, texts_of

    kind = event.get("event")
    if kind == Event.FANOUT_JOIN:
        picked = ", ".join(texts_of(event.get("picked"))) or "-"
        why = text_of(event.get("stopped_by"))
        early = f", stopped early: {why}" if why else ""
        verdict = text_of(event.get("verdict"))
        return f"join {text_of(event.get('join'))} → {verdict} (picked: {picked}{early})"
    if kind == Event.FANOUT_MERGE:
        merged = ", ".join(texts_of(event.get("merged"))) or "-"
        refused = event.get("refused")
        said = "; ".join(
            f"{text_of(r.get('key'))} refused: {text_of(r.get('reason'))}"
            for r in (refused if isinstance(refused, list) else [])
            if isinstance(r, dict)
        )
        return f"merge {text_of(event.get('merge'))}: merged {merged}" + (
            f"; {said}" if said else ""
        )
    views = from_events([{**event, "event": Event.BRANCH_START}])
    if not views:
        raise ValueError("a branch event without its index and key")
    view = views[0]
    if kind == Event.BRANCH_START:
        on = f" on {view.branch}" if view.branch else ""
        return f"⇉ {view.label}: {view.key}{on} (its steps: ll-loop history {view.key})"
    cost = event.get("cost_usd")
    spent = f" {format_cost(cost)}" if isinstance(cost, int | float) and cost > 0 else ""
    ended = f"{text_of(event.get('verdict'))} ({text_of(event.get('outcome'))})"
    return f"⇇ {view.label}: {view.key} {ended}{spent}"


def branch_steps(event: dict[str, Any], loops_dir: Path, own: str, since: str) -> list[str]:
    """The lines of the steps a fan-out branch took (its own run's events from *since*, its
    start, to its `branch_finish` *event*, indented under it); none when its files are gone
    (or were replaced by a later run of its loop), or it names the run *own* itself."""
    from little_loops.cli.nesting import INDENT
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.runs.fanned import from_events
    from little_loops.fsm.runs.store import StatePersistence

    views = from_events([{**event, "event": Event.BRANCH_START}], own)
    if not views:
        return []
    key, until = views[0].key, str(event.get("ts") or "")
    try:
        return [
            INDENT + format_event(e, key)
            for e in StatePersistence(key, loops_dir).iter_events()
            if since <= str(e.get("ts") or "") <= until
        ]
    except (LoopError, OSError, ValueError):
        return []


def _guards_text(event: dict[str, Any]) -> str:
    """The guards' verdicts, each after its guard's key: `KEY: tests/x.py (modified)` (the
    tamper guard's findings), `KEY: flagged` (the pre-patch check's), `; ` between."""
    from little_loops.fsm.definition.model.run_keys import PREPATCH_CHECK, TAMPER_GUARD

    parts = []
    tamper = event.get(TAMPER_GUARD.name)
    if isinstance(tamper, dict):
        found = [f for f in tamper.get("findings") or [] if isinstance(f, dict)]
        shown = ", ".join(f"{f.get('path')} ({f.get('kind')})" for f in found) or "no change"
        parts.append(f"{TAMPER_GUARD.name}: {shown}")
    prepatch = event.get(PREPATCH_CHECK.name)
    if isinstance(prepatch, dict):
        parts.append(f"{PREPATCH_CHECK.name}: {prepatch.get('verdict')}")
    return "; ".join(parts) or "-"


def history_command(
    name: str,
    *,
    tail: int | None = None,
    as_json: bool = False,
    loops_dir: Path | None = None,
    run_id: str | None = None,
) -> int:
    """Print the events of NAME's last run (of its archived run *run_id*); 1 when it has none.

    The events are streamed (a long run's log is never held in memory) and `--tail N`
    reads only the end of the log."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import shown_run
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.runs.store import StatePersistence

    loop_name, folder = shown_run(name, run_id, loops_dir)
    store = StatePersistence(loop_name, loops_dir, folder=folder)
    events = store.tail_events(tail) if tail is not None else store.iter_events()
    count = 0
    started: dict[str, str] = {}  # when each fan-out branch's run key last started
    for event in events:
        if as_json:
            text = json.dumps(event, ensure_ascii=False, indent=2).replace("\n", "\n  ")
            sys.stdout.write(("[\n  " if count == 0 else ",\n  ") + text)
        else:
            print(format_event(event, loop_name))
            if event.get("event") == Event.BRANCH_START:
                started[str(event.get("key"))] = str(event.get("ts") or "")
            if event.get("event") == Event.BRANCH_FINISH and tail is None:
                since = started.get(str(event.get("key")), "")
                for line in branch_steps(event, loops_dir, loop_name, since):
                    print(line)
        count += 1
    if as_json:
        print("\n]" if count else "[]")
    elif not count:
        print(f"ll-loop: loop '{loop_name}' has no events yet", file=sys.stderr)
    dropped = store.log.first_kept() > 1
    if count and dropped and tail is None:
        print(
            f"ll-loop: note: older events of this run were rotated away (the log keeps about"
            f" {store.log.kept_mib()} MiB)",
            file=sys.stderr,
        )
    return ExitCode.OK if count else ExitCode.FAILED
