"""Progress lines of stalls, approvals, pull requests and checkpoints (in ProgressDisplay)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.engine.attempts import waiting_text
from little_loops.fsm.engine.commits import commit_text
from little_loops.fsm.facts.safetext import one_line

_YELLOW, _RED = "\033[33m", "\033[31m"


class GateLines:
    """Prints the `stall`, `approval_wait`, `approval`, `pull_request`, `checks_wait`,
    `checks`, `checkpoint` and `rollback` events."""

    quiet: bool
    loop_name: str
    _header_printed: bool

    def _write(self, text: str) -> None:
        raise NotImplementedError

    def _paint(self, text: str, code: str) -> str:
        raise NotImplementedError

    def _header(self, what: str) -> None:
        raise NotImplementedError

    def _on_stall(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        to = event.get("to")
        where = f" → {one_line(to)}" if isinstance(to, str) else ""
        line = f"       ⊘ stall: {one_line(event.get('detector'))}{where}"
        self._write(self._paint(line, _RED) + "\n")

    def _on_approval_wait(self, event: dict[str, Any]) -> None:
        # Shown even with --quiet: a person has to read the question to answer it.
        if not self._header_printed and not self.quiet:
            self._header("(approval)")
        question = [one_line(line) for line in str(event.get("question", "")).splitlines()]
        lines = [f"       ? {self._paint('awaiting approval', _YELLOW)}"]
        lines += [f"         │ {line}" for line in question or [""]]
        deadline = event.get("deadline")
        if isinstance(deadline, str):
            lines.append(f"         unanswered at {one_line(deadline)}: on_timeout is taken")
        answer = one_line(event.get("answer_with", "")).replace(" / ", "\n         or:     ")
        lines.append(f"         answer: {answer}")
        self._write("".join(line + "\n" for line in lines))

    def _on_approval(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        verdict = one_line(event.get("verdict"))
        said = {"success": "approved", "failure": "rejected"}.get(verdict, "no answer in time")
        note = event.get("note")
        noted = f": {one_line(note)}" if isinstance(note, str) and note else ""
        self._write(f"       • {said} ({verdict}){noted}\n")

    def _on_pull_request(self, event: dict[str, Any]) -> None:
        if not self._header_printed and not self.quiet:
            self._header("(pull request)")
        if self.quiet:
            return
        how = "opened" if event.get("created") else "updated"
        head = one_line(event.get("head"))[:12]
        url = one_line(event.get("url"))
        self._write(f"       ⇡ pushed {one_line(event.get('branch'))} ({head}), {how} {url}\n")

    def _on_checks_wait(self, event: dict[str, Any]) -> None:
        # Shown even with --quiet: a run that waits for CI says so.
        self._write(f"       ⏳ {one_line(waiting_text(event))}\n")

    def _on_checks(self, event: dict[str, Any]) -> None:
        # Shown even with --quiet: the checks' verdict decides where the run goes.
        verdict = one_line(event.get("verdict"))
        mark = "✓" if verdict == "success" else "✗"
        merged = " (merged)" if event.get("merged") else ""
        self._write(f"       {mark} checks: {verdict}{merged}: {one_line(event.get('reason'))}\n")

    def _on_checkpoint(self, event: dict[str, Any]) -> None:
        # A failed commit is shown even with --quiet: the run goes on without it.
        if self.quiet and not event.get("error"):
            return
        if not self._header_printed and not self.quiet:
            self._header(f"({one_line(event.get('event'))})")  # a state without an action
        mark = "✗" if event.get("error") else "●"
        self._write(f"       {mark} {one_line(commit_text(event))}\n")

    _on_rollback = _on_checkpoint
