"""How the progress display shows a sub-loop's events: indented under the parent's state."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.engine.events import DEPTH_KEY
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.safetext import one_line

INDENT = "    "  # one level of sub-loop


def depth_of(event: dict[str, Any]) -> int:
    """How deep in sub-loops *event* happened (0: the run's own loop)."""
    depth = event.get(DEPTH_KEY)
    return depth if isinstance(depth, int) and depth > 0 else 0


def indented(text: str, depth: int) -> str:
    """*text* (whole lines) with each line moved in *depth* levels."""
    if not depth or not text:
        return text
    pad = INDENT * depth
    body, newline = (text[:-1], "\n") if text.endswith("\n") else (text, "")
    return pad + body.replace("\n", "\n" + pad) + newline


def child_line(event: dict[str, Any], limits: dict[int, int]) -> str | None:
    """The line for a sub-loop's start or end (None for its other events); a start
    records the sub-loop's max_iterations in *limits*, by depth."""
    kind, loop = event.get("event"), one_line(str(event.get("loop", "")))
    if kind == Event.LOOP_START:
        limit = event.get("max_iterations")
        if isinstance(limit, int):
            limits[depth_of(event)] = limit
        return f"↳ loop {loop}\n"
    if kind == Event.LOOP_COMPLETE:
        how = one_line(str(event.get("terminated_by", "")))
        final = one_line(str(event.get("final_state", "")))
        return f"↳ loop {loop} ended in {final} ({how})\n"
    return None


def where_in_children(child: object) -> str:
    """` > LOOP: STATE` for each running sub-loop of a saved run (its `child`), innermost
    last; empty when the run is in no sub-loop."""
    out = ""
    for _ in range(100):  # a saved file is data: never follow an endless chain
        if not isinstance(child, dict):
            break
        out += f" > {child.get('loop', '?')}: {child.get('current_state', '?')}"
        child = child.get("child")
    return out
