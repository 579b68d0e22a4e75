"""Turn executor events into the progress lines a person follows on stderr."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from little_loops.cli.gatelines import GateLines
from little_loops.cli.nesting import child_line, depth_of, indented
from little_loops.cli.outputtail import OutputTail, output_tail, signature
from little_loops.fsm.actions.registry import recorded
from little_loops.fsm.actions.supervisor import CANNOT_RUN_EXIT_CODE, NOT_FOUND_EXIT_CODE
from little_loops.fsm.definition.checks.prose import cannot_run_hint
from little_loops.fsm.engine.attempts import waiting_text
from little_loops.fsm.engine.events import tools_failed_text
from little_loops.fsm.engine.rules.fallback import switch_text
from little_loops.fsm.evaluators.exit_code import exit_detail
from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.evaluators.registry import verdict_went_well
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.layout import stderr_file
from little_loops.fsm.facts.outcomes import RAISABLE_LIMITS
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.facts.safetext import one_line, shown
from little_loops.fsm.facts.spend import format_cost, is_unkept
from little_loops.fsm.facts.timefmt import format_duration

ACTION_WIDTH = 60
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

_GREEN, _RED, _YELLOW, _DIM, _BOLD, _RESET = (
    "\033[32m",
    "\033[31m",
    "\033[33m",
    "\033[2m",
    "\033[1m",
    "\033[0m",
)


def use_color(stream: TextIO, no_color_flag: bool = False) -> bool:
    """Colour only on a terminal that reads escapes (use_live), and never with --no-color or
    NO_COLOR set (any value)."""
    if no_color_flag or "NO_COLOR" in os.environ:
        return False
    return use_live(stream)


def use_live(stream: TextIO) -> bool:
    """Whether *stream* is a terminal that reads ANSI escapes, which colours and the live
    ticker (its line redrawn with one) need: a TTY, but not one whose TERM is `dumb`."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def shorten(action: str, width: int = ACTION_WIDTH) -> str:
    """The first line of *action*, controls escaped, cut to *width* characters with `…`."""
    lines = action.strip().splitlines() or [""]
    first = one_line(lines[0].strip())
    if len(lines) > 1:
        first += " …"
    if len(first) > width:
        first = first[: width - 1].rstrip() + "…"
    return first


def printable(text: str) -> str:
    """*text* with control characters (escape sequences, tabs) shown as spaces."""
    return "".join(ch if ch.isprintable() else " " for ch in text)


def verdict_detail(event: dict[str, Any]) -> str:
    """The parenthesised detail after a verdict: `(exit 1)`, `(confidence: 0.92)`, ..."""
    if event.get("verdict") == ERROR_VERDICT and event.get("error"):
        return f"({shown(event['error'])})"  # whole (up to a size): its end is often the hint
    from little_loops.fsm.evaluators.registry import SPECS  # loads every evaluator: not at --help

    spec = SPECS.get(str(event.get("type")))
    if spec is not None and "llm_skipped" not in event:
        detail = spec.detail(event)
        if detail is not None:
            return one_line(detail)
    return one_line(exit_detail(event) or "")


def outcome_line(final: dict[str, Any]) -> str:
    """The closing line, e.g. `Loop completed: done (1 iteration, 2m 34s)`."""
    n = final.get("iterations", 0)
    stats = f"{n} iteration{'' if n == 1 else 's'}, {format_duration(final.get('duration_ms', 0))}"
    cost = final.get("cost_usd")
    if isinstance(cost, int | float) and cost > 0:
        stats += f", {format_cost(cost)}"
    state = one_line(final.get("final_state", "?"))
    how = final.get("terminated_by")
    if how == "terminal":
        return f"Loop completed: {state} ({stats})"
    if how == "terminal_failure":  # with an error when reached on the verdict error
        what = f": {shown(final['error'])}" if final.get("error") else " outcome"
        return f"Loop ended in {state}, a failure{what} ({stats})"
    if how == "budget" and is_unkept(final.get("error")):  # a step's spend was not counted
        return (
            f"Loop stopped in {state}: {shown(final['error'])} ({stats}); ll-loop resume NAME "
            "goes on, until the next step whose spend cannot be counted"
        )
    if how in RAISABLE_LIMITS:
        what = "cost budget" if how == "budget" else how
        return (
            f"Loop stopped: {what} reached in {state} ({stats}); to go on: {RAISABLE_LIMITS[how]}"
        )
    if how == "awaiting_approval":
        return f"Loop awaiting approval in {state} ({stats}); after the answer: ll-loop resume NAME"
    if how == "stall":
        return f"Loop stalled in {state}: {shown(final.get('error') or 'stall')} ({stats})"
    if how == "handoff":
        return f"Loop paused for handoff in {state} ({stats}); continue with: ll-loop resume NAME"
    if how == "handoff_ended":
        return f"Loop ended at a context handoff in {state} (on_handoff: terminate) ({stats})"
    if how in ("interrupted", "stopped"):
        return f"Loop {how} in {state} ({stats}); continue with: ll-loop resume NAME"
    error = shown(final.get("error") or "unknown error")
    return f"Loop failed in {state}: {error} ({stats})"


class ProgressDisplay(GateLines):
    """An event callback that prints progress; live elapsed time on a TTY only."""

    def __init__(
        self,
        stream: TextIO,
        *,
        max_iterations: int,
        loop_name: str = "NAME",
        color: bool = False,
        live: bool = False,
        quiet: bool = False,
        verbose: bool = False,
    ) -> None:
        self.stream = stream
        self.max_iterations = max_iterations
        self.loop_name = loop_name
        self.color = color
        self.live = live
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self._output_tail: OutputTail | None = None
        self._action_started = 0.0
        # An agent's transcript file and how to read its latest step, while it runs.
        self._transcript: tuple[str, Callable[[str], str | None]] | None = None
        self._transcript_before: tuple[int, int] | None = None
        self._action_ms: int | None = None
        self._ticker: threading.Thread | None = None
        self._stop_ticking = threading.Event()
        self._pending_state = ""
        self._pending_iteration = 0
        self._header_printed = False
        self._last_exit: Any = None
        self._action_cost: float | None = None
        self._output_path: str | None = None
        self._output = self._stderr = self._tools_note = ""
        self._shell_action: str | None = None  # the running action, when it went to bash
        self._bash_failed = False  # bash could not run its command (126/127): always shown
        self._lock = threading.Lock()
        self._attempt = ""  # ` (attempt 2/3)` in the header of a retried state's action
        self._gone = False  # writing to the stream failed once: show nothing more
        self._depth = 0  # how deep in sub-loops the event being shown is
        self._limits: dict[int, int] = {}  # each sub-loop's max_iterations, by depth

    def __call__(self, event: dict[str, Any]) -> None:
        self._depth = depth_of(event)  # a sub-loop's events: indented (cli/nesting.py)
        line = child_line(event, self._limits) if self._depth else None
        if line is not None:
            return self._write(line)
        handler = getattr(self, f"_on_{event.get('event')}", None)
        if handler is not None:
            handler(event)

    def close(self) -> None:
        self._stop_ticker()

    # -- event handlers ----------------------------------------------------------------

    def _on_state_enter(self, event: dict[str, Any]) -> None:
        self._attempt = ""
        self._action_ms = None
        self._output_path, self._output, self._stderr = None, "", ""
        self._pending_state = event["state"]
        self._pending_iteration = event.get("iteration", 0)
        self._header_printed = False

    def _header(self, what: str) -> None:
        limit = self._limits.get(self._depth, self.max_iterations)
        n = self._pending_iteration  # 0 before any pass (a terminal initial state): no [0/N]
        counter = f"{self._paint(f'[{n}/{limit}]', _DIM)} " if n else ""
        state = self._paint(one_line(self._pending_state), _BOLD)
        self._write(f"{counter}{state}{self._attempt} → {what}\n")
        self._header_printed = True

    def _on_action_start(self, event: dict[str, Any]) -> None:
        kind = recorded(event.get("action_type"), event.get("agent"))
        # bash's own exit codes (127: not found, 126: cannot run) mean that for a command.
        command = kind is not None and kind.agent is None
        self._shell_action = str(event.get("action", "")) if command else None
        if self.quiet:
            return
        self._header(shorten(str(event.get("action", ""))))
        self._action_started = time.monotonic()
        # A Claude session streams into its output file: the ticker shows its latest step.
        path = event.get("output_path")
        self._output_path = path if isinstance(path, str) else None
        steps = kind.latest_step if kind is not None and isinstance(path, str) else None
        self._transcript = (path, steps) if isinstance(path, str) and steps is not None else None
        # The file still holds the state's last run until the runner empties it.
        live = self._transcript is not None and self.live
        self._transcript_before = signature(path) if isinstance(path, str) and live else None
        if self.verbose and isinstance(path, str):
            self._output_tail = OutputTail(path, kind.readable if kind is not None else None)
        if self.live or self._output_tail is not None:
            self._start_ticker()

    def _on_action_complete(self, event: dict[str, Any]) -> None:
        self._stop_ticker()
        if self._output_tail is not None:
            self._stream(self._output_tail.poll(final=True))
            self._output_tail = None
        self._action_ms = int(event.get("duration_ms", 0))
        self._last_exit = event.get("exit_code")
        self._output = str(event.get("output") or "")
        self._stderr = str(event.get("stderr") or "")
        cannot_run = self._last_exit in (NOT_FOUND_EXIT_CODE, CANNOT_RUN_EXIT_CODE)  # bash's
        self._bash_failed = cannot_run and bool(self._shell_action) and not event.get("error")
        cost = event.get("cost_usd")
        self._action_cost = float(cost) if isinstance(cost, int | float) else None
        self._tools_note = tools_failed_text(event.get("tools_failed"))  # after the verdict

    def _on_evaluate(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        if not self._header_printed:
            if event.get("type") == "none" and event.get("error"):
                self._header("(action not run)")  # e.g. a ${...} it names cannot be filled in
            else:
                self._header(f"(evaluate {one_line(event.get('type'))})")
        verdict = one_line(event.get("verdict"))
        base = verdict.removesuffix(UNCERTAIN_SUFFIX)
        went_well = verdict_went_well(verdict)
        if went_well:
            mark = self._paint("✓", _GREEN)
        elif went_well is False:
            mark = self._paint("✗", _RED)
        else:
            mark = self._paint("•", _YELLOW)
        detail = verdict_detail(event)
        note = " (LLM off: judged by exit code)" if "llm_skipped" in event else ""
        tools = f" {self._paint(self._tools_note, _YELLOW)}" if self._tools_note else ""
        text = f"       {mark} {verdict}" + (f" {detail}" if detail else "") + note + tools
        self._write(text + self._duration_suffix() + "\n")
        self._action_ms, self._tools_note = None, ""
        if base in ("failure", "error") or self._bash_failed:
            self._show_output()

    def _on_branch_start(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        if not self._header_printed:
            self._header("(fan-out)")
        where = f" in {one_line(event['worktree'])}" if event.get("worktree") else ""
        item = f" ({one_line(shorten(str(event.get('item') or '')))})" if event.get("item") else ""
        self._write(f"       ⇉ {one_line(event.get('key'))}{item} started{where}\n")

    def _on_branch_finish(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        verdict = one_line(event.get("verdict"))
        outcome = one_line(event.get("outcome"))
        self._write(f"       ⇇ {one_line(event.get('key'))}: {verdict} ({outcome})\n")

    def _on_fanout_merge(self, event: dict[str, Any]) -> None:
        # A refused merge is shown even with --quiet: that branch's work is not in the
        # checkout, whatever the verdict says.
        if not self.quiet:
            for key in event.get("merged") or []:
                self._write(f"       ⇶ merged {one_line(key)}\n")
        for refused in event.get("refused") or []:
            if isinstance(refused, dict):
                key, why = one_line(refused.get("key")), one_line(refused.get("reason"))
                self._write(f"       {self._paint('⚠', _YELLOW)} not merged {key}: {why}\n")

    def _on_session_lost(self, event: dict[str, Any]) -> None:
        if not self.quiet:
            self._write(f"         {self._paint(one_line(event.get('note')), _DIM)}\n")

    def _on_route(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        if event.get("reason") == "next" and self._action_ms is not None:
            self._exit_line()
        if event.get("reason") == "maintain restart":
            self._write(f"       ↻ maintain: restarting at {one_line(event['to'])}\n")
            return
        self._write(f"       → {one_line(event['to'])}\n")

    def _on_attempt(self, event: dict[str, Any]) -> None:
        number, most = event.get("attempt"), event.get("max_attempts")
        self._attempt = f" (attempt {number}/{most})" if number != 1 else ""

    def _on_retry_wait(self, event: dict[str, Any]) -> None:
        if not self.quiet:
            self._write(f"       ⏳ {one_line(waiting_text(event))}\n")

    def _on_agent_switch(self, event: dict[str, Any]) -> None:
        # Shown even with --quiet: which agent does the work changed, and why.
        self._stop_ticker()
        self._write(f"       ↪ {one_line(switch_text(event))}\n")

    def _on_rate_limit_wait(self, event: dict[str, Any]) -> None:
        # Shown even with --quiet: a run that seems stuck for hours says why.
        self._write(f"       ⏳ {one_line(waiting_text(event))}\n")

    def _on_orphans_killed(self, event: dict[str, Any]) -> None:
        pids = event.get("pids") or []
        self._write(
            f"ll-loop: ended {len(pids)} process(es) the crashed run's action left running "
            f"(pids {', '.join(map(str, pids))})\n"
        )

    def _on_loop_complete(self, event: dict[str, Any]) -> None:
        self._stop_ticker()
        if self._action_ms is not None and not self.quiet:
            self._exit_line()  # a terminal state's action: nothing evaluates or routes it
        line = outcome_line(event).replace(
            "ll-loop resume NAME", f"ll-loop resume {self.loop_name}"
        )
        color = _GREEN if event.get("terminated_by") == "terminal" else _RED
        blank = "" if self.quiet else "\n"
        self._write(f"{blank}{self._paint(line, color)}\n")

    # -- helpers -----------------------------------------------------------------------

    def _exit_line(self) -> None:
        """`• exit N` of an action that was not evaluated; what bash could not run is shown."""
        self._write(f"       • exit {self._last_exit}{self._duration_suffix()}\n")
        self._action_ms = None
        if self._bash_failed:  # whatever the route: `next:` would pass it by in silence
            self._show_output()

    def _show_output(self) -> None:
        """The end of the failed action's output, and where all of it is."""
        width = shutil.get_terminal_size().columns - 9
        lines = [] if self.verbose else output_tail(self._output, self._stderr, max(40, width))
        path = self._output_path
        if path is not None:
            where = f"full output: {one_line(display_path(path))}"
            if self._stderr:
                where += f" (stderr: {one_line(display_path(stderr_file(Path(path))))})"
            lines.append(where)
        if self._bash_failed:  # bash's own "command not found" is in the stderr lines above
            not_found = self._last_exit == NOT_FOUND_EXIT_CODE
            lines.append(f"hint: {cannot_run_hint(self._shell_action or '', not_found=not_found)}")
        for line in lines:
            self._write(f"         {self._paint(line, _DIM)}\n")
        self._output, self._stderr, self._output_path = "", "", None

    def _duration_suffix(self) -> str:
        if self._action_ms is None:
            return ""
        text = f"  {format_duration(self._action_ms)}"
        if self._action_cost:
            text += f"  {format_cost(self._action_cost)}"
            self._action_cost = None
        return self._paint(text, _DIM)

    def _paint(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def _write(self, text: str) -> None:
        # The run matters more than its display: a closed pipe (`2>&1 | head`) or a hung-up
        # terminal ends the display, never the run.
        with self._lock:
            if self._gone:
                return
            try:
                self.stream.write(indented(text, self._depth))
                self.stream.flush()
            except (OSError, ValueError):  # ValueError: the stream was closed
                self._gone = True

    def _start_ticker(self) -> None:
        self._stop_ticking.clear()
        self._ticker = threading.Thread(target=self._tick, name="ll-loop-ticker", daemon=True)
        self._ticker.start()

    def _stop_ticker(self) -> None:
        if self._ticker is None:
            return
        self._stop_ticking.set()
        self._ticker.join()
        self._ticker = None
        if self.live:
            self._write("\r\033[K")

    def _stream(self, lines: list[str]) -> None:
        """Lines of the running action's output (-v), under its state line."""
        if lines:
            clear = "\r\033[K" if self.live else ""
            self._write(
                clear + "".join(f"         {self._paint(one_line(x), _DIM)}\n" for x in lines)
            )

    def _tick(self) -> None:
        frame = 0
        step: str | None = None
        while not self._stop_ticking.wait(0.0 if frame == 0 else 0.1):
            if self._output_tail is not None:
                self._stream(self._output_tail.poll())
            if not self.live:
                frame += 1
                continue
            elapsed = int((time.monotonic() - self._action_started) * 1000)
            spinner = _SPINNER[frame % len(_SPINNER)]
            line = f"       {spinner} running {format_duration(elapsed)}"
            if self._transcript is not None:
                path, latest_step = self._transcript
                if self._transcript_before is not None:
                    if signature(path) != self._transcript_before:
                        self._transcript_before = None
                elif frame % 5 == 0:  # the file is read twice a second, not at every frame
                    step = latest_step(path)
                if step:
                    room = shutil.get_terminal_size().columns - len(line) - 4
                    if room >= 10:
                        line += " · " + shorten(printable(step), room)
            self._write(f"\r{line}\033[K")
            frame += 1
