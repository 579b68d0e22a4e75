"""The goal paradigm: check with a tool until it passes, fixing in between."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.paradigms.assemble import DONE, build, loop_settings
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS, SpecReader

GOAL_KEYS = ("paradigm", "name", "goal", "tools", *LOOP_SETTINGS)

# Goal text words left out of a derived loop name (see goal_slug).
_SLUG_FILLER = frozenset(
    {"a", "an", "the", "in", "on", "at", "of", "for", "to", "from", "into", "under", "within"}
)
_SLUG_MAX_WORDS = 5


def goal_slug(goal: str) -> str:
    """A readable loop name from goal text: `No type errors in src/` -> `goal-no-type-errors`.

    Lowercase ASCII words of letters and digits; words naming a path (containing `/`) and
    the filler words in `_SLUG_FILLER` are dropped; at most five words are kept.
    """
    text = unicodedata.normalize("NFKD", goal).encode("ascii", "ignore").decode().lower()
    words: list[str] = []
    for token in text.replace("'", "").split():
        if "/" not in token:
            words.extend(re.findall(r"[a-z0-9]+", token))
    kept = [word for word in words if word not in _SLUG_FILLER][:_SLUG_MAX_WORDS]
    return "-".join(["goal", *kept])


def compile_goal(spec: dict[str, Any]) -> FSMLoop:
    """`evaluate -> (success: done | failure: fix)`, `fix -> evaluate`.

    Two tools: the first checks, the second fixes. One tool both checks and fixes: it runs
    in `evaluate` only, and `fix` (no action) hands straight back to `evaluate`, so a
    failed run is retried without running the tool a second, unevaluated time.
    """
    reader = SpecReader("paradigm 'goal'", spec)
    reader.check_keys(GOAL_KEYS)
    goal = reader.string("goal")
    tools = reader.strings("tools")
    if len(tools) > 2:
        raise reader.error(
            f"expected 1 tool (checks and fixes) or 2 (check, then fix), got {len(tools)};"
            " use paradigm 'imperative' for longer sequences",
            "tools",
        )
    name = reader.string("name") if "name" in spec else goal_slug(goal)
    fix: dict[str, Any] = {"action": tools[1]} if len(tools) == 2 else {}
    fix["next"] = "evaluate"
    states: dict[str, dict[str, Any]] = {
        "evaluate": {"action": tools[0], "on_success": DONE, "on_failure": "fix"},
        "fix": fix,
        DONE: {"terminal": True},
    }
    return build(reader, "goal", name, "evaluate", states, loop_settings(reader, name))
