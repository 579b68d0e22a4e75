"""docs/watch.md: its pictures of the view are `watch` itself, rendered headless at 80x24.

Regenerate them after a change to the view with
`LL_WRITE_SAMPLES=1 .venv/bin/python -m pytest scripts/tests/docs/test_watch_doc.py`.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import pytest
from support.paths import REPO
from support.slowdown import scaled

from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence

DOC = REPO / "docs" / "watch.md"
DEAD_PID = 2**22 + 1  # above pid_max's default: never a live process
LOOP = """\
name: fix-types
initial: check
max_iterations: 10
states:
  check:
    action: mypy src
    on_success: done
    on_failure: fix
  fix:
    action: Fix the type errors mypy reports.
    action_type: prompt
    next: check
  done:
    terminal: true
"""


def _ts(second: int) -> str:
    return f"2026-01-05T09:00:{second:02d}+00:00"


def _step(state: str, at: int, verdict: str, to: str, cost: float = 0.0) -> list[dict[str, object]]:
    start: dict[str, object] = {"event": Event.ACTION_START, "state": state, "ts": _ts(at)}
    done: dict[str, object] = {"event": Event.ACTION_COMPLETE, "state": state, "ts": _ts(at + 3)}
    if cost:
        start |= {"action_type": "prompt", "agent": "claude"}
        done |= {"cost_usd": cost, "models": {"claude-sonnet-4-5": cost}}
    return [
        {"event": Event.STATE_ENTER, "state": state, "iteration": 1, "ts": _ts(at)},
        start,
        done,
        {"event": Event.EVALUATE, "state": state, "verdict": verdict, "ts": _ts(at + 3)},
        {"event": Event.ROUTE, "from": state, "to": to, "ts": _ts(at + 3)},
    ]


def make_project(root: Path) -> Path:
    """Two saved runs of fix-types: one done, one whose runner was killed in `check`."""
    loops = root / ".loops"
    loops.mkdir(parents=True)
    (loops / "fix-types.yaml").write_text(LOOP)
    (loops / "lint.yaml").write_text(LOOP.replace("fix-types", "lint"))
    runs = [
        ("fix-types", "k3f9", Status.RUNNING, "check", 2, DEAD_PID, 0.42),
        ("lint", "a1b2", Status.COMPLETED, "done", 1, None, 0.0),
    ]
    for name, run_id, status, where, passes, pid, cost in runs:
        store = StatePersistence(name, loops)
        store.initialize()
        events = [{"event": Event.LOOP_START, "ts": _ts(0), "max_iterations": 10}]
        events += _step("check", 0, "failure", "fix")
        if cost:
            events += _step("fix", 4, "success", "check", cost)
            events += [{"event": Event.STATE_ENTER, "state": "check", "iteration": 2, "ts": _ts(9)}]
        for event in events:
            store.append_event(event)
        state = LoopState(
            loop_name=name,
            current_state=where,
            iteration=passes,
            status=status,
            pid=pid,
            run_id=run_id,
            elapsed_ms=9000 if cost else 3000,
            cost_usd=cost,
            loop_path=f".loops/{name}.yaml",
            captured={"errors": {"output": "src/app.py:3: error: Incompatible types"}},
            stall_watch={"same_output": 1} if cost else {},
            terminated_by=None if status == Status.RUNNING else "terminal",
        )
        store.save_state(state)
        state.updated_at = _ts(9)
        store.close()
    return loops


def rendered(loops: Path, key: str | None) -> str:
    """The view at 80x24 (the run screen of *key*, else the list), as text."""
    from little_loops.cli.watch.app import WatchApp

    found: list[str] = []

    async def drive() -> None:
        app = WatchApp(loops, key)
        async with app.run_test(size=(80, 24)) as pilot:
            # Drawn when the run is on screen and two looks a moment apart agree (a loaded
            # machine draws late).
            deadline, last = time.monotonic() + scaled(20), ""
            while time.monotonic() < deadline:
                await pilot.pause(0.3)
                text = "\n".join(s.text.rstrip() for s in app.screen._compositor.render_strips())
                if "fix-types" in text and "palette" in text and text == last:
                    break
                last = text
            found.append(last)

    asyncio.run(drive())
    return found[0].rstrip("\n")


BLOCK = re.compile(r"<!-- watch-sample: (\S+) -->\n```text\n(.*?)```", re.DOTALL)


def test_the_samples_in_the_doc_are_the_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("textual")
    monkeypatch.chdir(tmp_path)  # the runs' loop_path is relative to the project
    loops = make_project(tmp_path)
    text = DOC.read_text(encoding="utf-8")
    samples = {
        name: rendered(loops, None if name == "list" else name) for name in ("list", "fix-types")
    }
    if os.environ.get("LL_WRITE_SAMPLES"):
        text = BLOCK.sub(
            lambda m: f"<!-- watch-sample: {m[1]} -->\n```text\n{samples[m[1]]}\n```", text
        )
        DOC.write_text(text, encoding="utf-8")
    shown = {m[1]: m[2].removesuffix("\n") for m in BLOCK.finditer(text)}
    assert shown == samples
