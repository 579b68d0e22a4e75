"""`ll-loop report NAME [--run ID] | --from FILE...`: a run's figures as text, JSON or HTML."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_option
from little_loops.fsm.facts.spend import format_cost

if TYPE_CHECKING:
    from little_loops.fsm.runs.archive import ArchivedRun
    from little_loops.fsm.runs.report import Report
    from little_loops.fsm.runs.store import StatePersistence


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "report",
        help=summary,
        description="Report a run: per state its visits, verdicts, time, cost and tokens; per "
        "pass its path and time; totals; the slowest and the costliest state. The current "
        "(or last) run of NAME, an archived one (--run ID), or the runs in exported files "
        "(--from FILE..., one combined report).",
    )
    parser.add_argument("loop", metavar="NAME", nargs="?", help="loop name")
    add_run_option(parser)
    parser.add_argument(
        "--from",
        dest="sources",
        metavar="FILE",
        nargs="+",
        type=Path,
        help="report the runs in these `ll-loop export` files instead (NAME then picks one loop)",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print the figures as JSON"
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        type=Path,
        help="also write one self-contained HTML page (graph, timeline, costs, outputs)",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    if args.loop is None and not args.sources:
        raise SystemExit(_usage("give a loop NAME, or --from FILE..."))
    if args.sources and args.run_id is not None:
        raise SystemExit(_usage("--run picks an archived run; --from reads exported files"))
    return report_command(
        args.loop, run_id=args.run_id, sources=args.sources, as_json=args.as_json, html=args.html
    )


def _usage(message: str) -> int:
    from little_loops.fsm.facts.outcomes import ExitCode

    print(f"ll-loop report: error: {message}", file=sys.stderr)
    return ExitCode.USAGE


def report_command(
    name: str | None,
    *,
    run_id: str | None = None,
    sources: list[Path] | None = None,
    as_json: bool = False,
    html: Path | None = None,
    loops_dir: Path | None = None,
) -> int:
    """Print the report of one run (or of the runs in *sources*); 1 when there is no run."""
    from little_loops.fsm.facts.outcomes import ExitCode

    if sources:
        from little_loops.cli.export import read_exports

        reports = [r for r in read_exports(sources) if name is None or r.loop == name]
        if not reports:
            print(f"ll-loop: no run of loop '{name}' in {len(sources)} file(s)", file=sys.stderr)
            return ExitCode.FAILED
    else:
        loops_dir = project_loops_dir() if loops_dir is None else loops_dir
        assert name is not None
        found = one_report(name, run_id, loops_dir)
        if found is None:
            print(f"ll-loop: loop '{name}' has no run to report yet", file=sys.stderr)
            return ExitCode.FAILED
        reports = [found]
    if as_json:
        document: Any = reports[0].to_dict() if len(reports) == 1 and not sources else None
        if document is None:
            document = {"runs": [r.to_dict() for r in reports], "totals": _totals(reports)}
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print("\n\n".join(text_report(report) for report in reports))
        if len(reports) > 1:
            print("\n" + _totals_line(_totals(reports)))
    if html is not None:
        from little_loops.cli.report_html import write_html

        write_html(reports, html)
        print(f"ll-loop: wrote {html}", file=sys.stderr)
    return ExitCode.OK


def one_report(name: str, run_id: str | None, loops_dir: Path) -> Report | None:
    """The report of NAME's archived run *run_id*, else of its current (or last) run."""
    from little_loops.cli.runref import archived_name, run_name
    from little_loops.fsm.facts.layout import RunFiles, split_run_key
    from little_loops.fsm.runs.archive import (
        archived_definition,
        find_run,
        list_runs,
        read_definition,
    )
    from little_loops.fsm.runs.report import build_report
    from little_loops.fsm.runs.store import StatePersistence

    if run_id is not None:
        loop = archived_name(name, loops_dir)
        run, files = find_run(loops_dir, loop, run_id)
        store = StatePersistence(loop, loops_dir, folder=files.running_dir)
        report = build_report(loop, run.run_id, store.log.events())
        report.definition = archived_definition(files.running_dir)
        return with_lanes(report, loops_dir)
    key = run_name(name, loops_dir)
    loop = split_run_key(key)[0]  # a worktree run's files are named NAME@ID
    store = StatePersistence(key, loops_dir)
    report = build_report(loop, None, store.log.events())
    if not report.events:  # no current run files: the last archived run, if any
        runs, _ = list_runs(loops_dir, loop)
        return one_report(loop, runs[-1].run_id, loops_dir) if runs else None
    archived, _ = list_runs(loops_dir, loop)
    report.run_id = _archived_id(archived, store)
    # The loop as the run started it; a run from before runs kept it: the file NAME names.
    report.definition = read_definition(RunFiles(key, loops_dir).definition)
    if report.definition is None:
        report.definition = _current_definition(name, loops_dir)
    return with_lanes(report, loops_dir)


MAX_LANE_STATES = 40  # a branch's lane shows the last this many states its run went through


def with_lanes(report: Report, loops_dir: Path) -> Report:
    """*report* with each fan-out branch's lane: where its own run is, the states it went
    through and its time, from its own files (a branch whose files are gone keeps what
    its parent recorded)."""
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.runs.fanned import read_runs
    from little_loops.fsm.runs.report import build_report
    from little_loops.fsm.runs.store import StatePersistence

    for view in read_runs(report.branches, loops_dir):
        try:
            own = build_report(view.loop, None, StatePersistence(view.key, loops_dir).log.events())
        except (LoopError, OSError, ValueError):
            continue
        states = [step.state for step in own.steps]
        if own.final_state and states[-1:] != [own.final_state]:
            states.append(own.final_state)  # its terminal state (no step of its own)
        view.states = states[-MAX_LANE_STATES:]
        view.duration_ms = own.duration_ms
        if not view.verdict:
            view.cost_usd = max(view.cost_usd, own.cost_usd)
    return report


def _archived_id(archived: list[ArchivedRun], store: StatePersistence) -> str | None:
    """The archive's id of the run in *store*: the entry with its short id, or (a run from
    before run ids) with the start its state file says (the archive copied that one; the
    first event's time may be a millisecond later)."""
    from little_loops.fsm.facts.errors import LoopError

    try:
        state = store.load_state()
    except LoopError:
        return None
    if state is None:
        return None
    for run in archived:
        if (state.run_id and run.id == state.run_id) or run.started_at == state.started_at:
            return run.run_id
    return None


def _current_definition(name: str, loops_dir: Path) -> dict[str, Any] | None:
    """The loop file NAME resolves to, compiled, as data; None when it cannot be read."""
    from little_loops.cli.resolve import resolve_loop_path
    from little_loops.fsm.definition.reading.loopdoc import load_loop
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.paradigms.registry import compile_paradigm

    try:
        return compile_paradigm(load_loop(resolve_loop_path(name, loops_dir)).data).to_dict()
    except (LoopError, OSError):
        return None


def _money(value: float) -> str:
    return format_cost(value) if value else "-"


def text_report(report: Report) -> str:
    """The report as a person reads it in a terminal."""
    from little_loops.cli.listing import text_table
    from little_loops.fsm.facts.timefmt import format_duration

    head = f"loop {report.loop}" + (f" · run {report.run_id}" if report.run_id else "")
    ending = f"{report.outcome} in {report.final_state}" if report.outcome else "not ended"
    ending += {True: " (success)", False: " (failure)", None: ""}[report.success]
    lines = [
        f"{head} · {ending} · {report.pass_count} passes · {report.step_count} steps"
        f" · {format_duration(report.duration_ms)} · {_money(report.cost_usd)}"
    ]
    rows = [["STATE", "VISITS", "VERDICTS", "TIME", "MEDIAN", "COST", "TOKENS"]]
    for state, f in report.states.items():
        verdicts = ", ".join(f"{verdict} {count}" for verdict, count in f.verdicts.items())
        rows.append(
            [
                state,
                str(f.visits),
                verdicts or "-",
                format_duration(f.total_ms),
                format_duration(f.median_ms),
                _money(f.cost_usd),
                f"{f.tokens:,}" if f.tokens else "-",
            ]
        )
    lines += ["", text_table(rows), ""]
    passes = [["PASS", "PATH", "TIME"]]
    shown = list(report.passes)[-20:]
    if len(shown) < report.pass_count:
        lines.append(f"(the last {len(shown)} of {report.pass_count} passes)")
    for item in shown:
        path = " → ".join(item["path"])
        passes.append([str(item["pass"]), path, format_duration(item["duration_ms"])])
    lines.append(text_table(passes))
    lines += _agents_lines(report)
    if report.sandboxed:
        confined = sum(report.sandboxed.values())
        which = ", ".join(f"{name} {count}" for name, count in report.sandboxed.items())
        lines += ["", f"sandboxed: {confined} of {report.step_count} steps ({which})"]
    slow, costly = report.slowest, report.costliest
    tail = []
    if slow is not None:
        tail.append(f"slowest: {slow} ({format_duration(report.states[slow].total_ms)})")
    if costly is not None:
        tail.append(f"costliest: {costly} ({_money(report.states[costly].cost_usd)})")
    if report.resumed:
        tail.append(f"resumed {report.resumed} time{'s' if report.resumed > 1 else ''}")
    if tail:
        lines += ["", " · ".join(tail)]
    lines += _lanes_lines(report)
    if report.error:
        from little_loops.fsm.facts import safetext

        lines.append(f"why: {safetext.shown(report.error)}")
    return "\n".join(lines)


def _lanes_lines(report: Report) -> list[str]:
    """A row per fan-out branch: its state, label, verdict, the states its run went
    through, time, cost, run and git branch."""
    from little_loops.cli.listing import text_table
    from little_loops.fsm.facts.timefmt import format_duration

    if not report.branches:
        return []
    rows = [["FAN-OUT", "BRANCH", "VERDICT", "STATES", "TIME", "COST", "RUN", "GIT BRANCH"]]
    for view in report.branches:
        said = view.standing + (f", {view.merged}" if view.merged else "")
        rows.append(
            [
                view.state,
                view.label,
                said,
                " → ".join(view.states) or "-",
                format_duration(view.duration_ms),
                _money(view.cost_usd),
                view.key,
                view.branch or "-",
            ]
        )
    return ["", text_table(rows)]


def _agents_lines(report: Report) -> list[str]:
    """Cost per agent and model, and each step that went on with another agent."""
    from little_loops.cli.listing import text_table
    from little_loops.fsm.engine.rules.fallback import switch_text

    book = report.agents
    if not book.rows and not book.switches:
        return []
    rows = [["AGENT", "MODEL", "ACTIONS", "COST", "TOKENS"]]
    for name, row in book.rows.items():
        tokens = sum(row.tokens.values())
        rows.append(
            [name, "", str(row.actions), _money(row.cost_usd), f"{tokens:,}" if tokens else "-"]
        )
        rows += [["", model, "", _money(cost), ""] for model, cost in row.models.items()]
    lines = ["", text_table(rows)]
    for switch in book.switches:
        lines.append(f"switch in {switch.get('state')}: {switch_text(switch)}")
    return lines


def _totals(reports: list[Report]) -> dict[str, Any]:
    outcomes: dict[str, int] = {}
    for report in reports:
        key = report.outcome or "not ended"
        outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "runs": len(reports),
        "outcomes": outcomes,
        "steps": sum(r.step_count for r in reports),
        "duration_ms": sum(r.duration_ms for r in reports),
        "cost_usd": round(sum(r.cost_usd for r in reports), 6),
    }


def _totals_line(totals: dict[str, Any]) -> str:
    from little_loops.fsm.facts.timefmt import format_duration

    outcomes = ", ".join(f"{name} {count}" for name, count in totals["outcomes"].items())
    return (
        f"{totals['runs']} runs ({outcomes}) · {totals['steps']} steps"
        f" · {format_duration(totals['duration_ms'])} · {_money(totals['cost_usd'])}"
    )
