"""Turn goal / convergence / invariants / imperative specs into an FSM by fixed templates.

Each compiler is a pure function from the spec (a plain dict, as loaded from YAML) to an
`FSMLoop`; `compile_paradigm` picks one through the `COMPILERS` registry. The templates
and naming rules are documented in docs/paradigms.md; keep the two in step.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Protocol

from little_loops.fsm.definition.model import DIRECTIONS, FSMLoop
from little_loops.fsm.definition.validation import validate_definition
from little_loops.fsm.errors import LoopDefinitionError, LoopValidationError
from little_loops.fsm.paradigms.spec import (
    LOOP_SETTINGS,
    SpecReader,
    read_loop_settings,
    type_name,
)
from little_loops.fsm.suggest import did_you_mean

DONE = "done"
ALL_VALID = "all_valid"

# Goal text words left out of a derived loop name (see goal_slug).
_SLUG_FILLER = frozenset(
    {"a", "an", "the", "in", "on", "at", "of", "for", "to", "from", "into", "under", "within"}
)
_SLUG_MAX_WORDS = 5


class ParadigmCompiler(Protocol):
    """A compiler: a paradigm spec in, an FSM out; a bad spec raises LoopDefinitionError."""

    def __call__(self, spec: dict[str, Any]) -> FSMLoop: ...


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


def constraint_state_suffix(name: str) -> str:
    """The part of `check_<x>` / `fix_<x>` taken from a constraint name.

    Lowercased, every run of characters other than letters and digits becomes `_`:
    `tests-pass` -> `tests_pass`, `Lint clean` -> `lint_clean`.
    """
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _strings(reader: SpecReader, key: str) -> list[str]:
    """A required non-empty list of non-empty strings."""
    out: list[str] = []
    for index, value in enumerate(reader.items(key)):
        where = f"{key}[{index}]"
        if not isinstance(value, str):
            raise reader.error(f"expected a string, got {type_name(value)}", where)
        if not value.strip():
            raise reader.error("must not be empty", where)
        out.append(value)
    return out


def _build(
    reader: SpecReader,
    paradigm: str,
    name: str,
    initial: str,
    states: dict[str, dict[str, Any]],
    context: dict[str, Any] | None = None,
) -> FSMLoop:
    """Assemble the FSM from generated states plus the spec's loop-level settings."""
    settings = read_loop_settings(reader)
    action_type = settings.pop("action_type", None)
    if action_type is not None:
        for state in states.values():
            if "action" in state:
                state["action_type"] = action_type
    user_context = settings.pop("context", {})
    merged = dict(context or {})
    for key, value in user_context.items():
        if key in merged:
            raise reader.error(f"'{key}' is set by the {paradigm} compiler", "context")
        merged[key] = value
    data: dict[str, Any] = {"name": name, "initial": initial, "paradigm": paradigm}
    if merged:
        data["context"] = merged
    data["states"] = states
    data.update(settings)
    return FSMLoop.from_dict(data)


GOAL_KEYS = ("paradigm", "name", "goal", "tools", *LOOP_SETTINGS)


def compile_goal(spec: dict[str, Any]) -> FSMLoop:
    """`evaluate -> (success: done | failure: fix)`, `fix -> evaluate`.

    Two tools: the first checks, the second fixes. One tool both checks and fixes: it runs
    in `evaluate` only, and `fix` (no action) hands straight back to `evaluate`, so a
    failed run is retried without running the tool a second, unevaluated time.
    """
    reader = SpecReader("paradigm 'goal'", spec)
    reader.check_keys(GOAL_KEYS)
    goal = reader.string("goal")
    tools = _strings(reader, "tools")
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
    return _build(reader, "goal", name, "evaluate", states)


CONVERGENCE_KEYS = (
    "paradigm",
    "name",
    "check",
    "toward",
    "using",
    "tolerance",
    "direction",
    *LOOP_SETTINGS,
)


def compile_convergence(spec: dict[str, Any]) -> FSMLoop:
    """`measure -> (target: done | progress: apply | stall: done)`, `apply -> measure`."""
    reader = SpecReader("paradigm 'convergence'", spec)
    reader.check_keys(CONVERGENCE_KEYS)
    name = reader.string("name")
    check = reader.string("check")
    toward = reader.number("toward")
    using = reader.string("using")
    tolerance = reader.number("tolerance", minimum=0) if "tolerance" in spec else 0
    evaluate: dict[str, Any] = {
        "type": "convergence",
        "target": "${context.target}",
        "tolerance": "${context.tolerance}",
        "previous": "${prev.output}",
    }
    if "direction" in spec:
        evaluate["direction"] = reader.choice("direction", DIRECTIONS)
    states: dict[str, dict[str, Any]] = {
        "measure": {
            "action": "${context.metric_cmd}",
            "capture": "current_value",
            "evaluate": evaluate,
            "route": {"target": DONE, "progress": "apply", "stall": DONE},
        },
        "apply": {"action": using, "next": "measure"},
        DONE: {"terminal": True},
    }
    context = {"metric_cmd": check, "target": toward, "tolerance": tolerance}
    return _build(reader, "convergence", name, "measure", states, context)


INVARIANTS_KEYS = ("paradigm", "name", "constraints", *LOOP_SETTINGS)
CONSTRAINT_KEYS = ("name", "check", "fix")


def compile_invariants(spec: dict[str, Any]) -> FSMLoop:
    """`check_<a> -> (success: check_<b> | failure: fix_<a>)`, `fix_<a> -> check_<a>`, ...

    The last check succeeds into `all_valid`, which is terminal and, with `maintain: true`,
    restarts at the first check (`on_maintain`).
    """
    reader = SpecReader("paradigm 'invariants'", spec)
    reader.check_keys(INVARIANTS_KEYS)
    name = reader.string("name")
    suffixes: list[str] = []
    pairs: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for index, item in enumerate(reader.items("constraints")):
        constraint = reader.item("constraints", index, item)
        constraint.check_keys(CONSTRAINT_KEYS)
        label = constraint.string("name")
        suffix = constraint_state_suffix(label)
        if not suffix:
            raise constraint.error(f"'{label}' has no letters or digits to name a state", "name")
        if suffix in seen:
            raise constraint.error(
                f"'{label}' gives the same state names as constraint '{seen[suffix]}'"
                f" (check_{suffix}, fix_{suffix})",
                "name",
            )
        seen[suffix] = label
        suffixes.append(suffix)
        pairs.append((constraint.string("check"), constraint.string("fix")))
    maintain = reader.boolean("maintain") if "maintain" in spec else False
    states: dict[str, dict[str, Any]] = {}
    for index, (suffix, (check, fix)) in enumerate(zip(suffixes, pairs, strict=True)):
        following = f"check_{suffixes[index + 1]}" if index + 1 < len(suffixes) else ALL_VALID
        states[f"check_{suffix}"] = {
            "action": check,
            "on_success": following,
            "on_failure": f"fix_{suffix}",
        }
        states[f"fix_{suffix}"] = {"action": fix, "next": f"check_{suffix}"}
    first = f"check_{suffixes[0]}"
    states[ALL_VALID] = {"terminal": True}
    if maintain:
        states[ALL_VALID]["on_maintain"] = first
    return _build(reader, "invariants", name, first, states)


IMPERATIVE_KEYS = ("paradigm", "name", "steps", "until", *LOOP_SETTINGS)
UNTIL_KEYS = ("check", "passes")


def compile_imperative(spec: dict[str, Any]) -> FSMLoop:
    """`step_0 -> ... -> step_N -> check_done -> (success: done | failure: step_0)`.

    `until.passes: false` swaps the two routes: the loop ends when the check fails.
    """
    reader = SpecReader("paradigm 'imperative'", spec)
    reader.check_keys(IMPERATIVE_KEYS)
    name = reader.string("name")
    steps = _strings(reader, "steps")
    until = reader.mapping("until")
    until.check_keys(UNTIL_KEYS)
    check = until.string("check")
    passes = until.boolean("passes") if "passes" in until.data else True
    states: dict[str, dict[str, Any]] = {}
    for index, step in enumerate(steps):
        following = f"step_{index + 1}" if index + 1 < len(steps) else "check_done"
        states[f"step_{index}"] = {"action": step, "next": following}
    finished, again = (DONE, "step_0") if passes else ("step_0", DONE)
    states["check_done"] = {"action": check, "on_success": finished, "on_failure": again}
    states[DONE] = {"terminal": True}
    return _build(reader, "imperative", name, "step_0", states)


def compile_fsm(spec: dict[str, Any]) -> FSMLoop:
    """The native format: the raw definition checks every loop file gets, then the model.

    Raises LoopValidationError (a LoopDefinitionError) carrying every error found.
    """
    errors = [p for p in validate_definition(spec) if p.severity == "error"]
    if errors:
        raise LoopValidationError(errors)
    return FSMLoop.from_dict(spec)


COMPILERS: dict[str, ParadigmCompiler] = {
    "goal": compile_goal,
    "convergence": compile_convergence,
    "invariants": compile_invariants,
    "imperative": compile_imperative,
    "fsm": compile_fsm,
}
PARADIGMS: tuple[str, ...] = tuple(COMPILERS)


def compile_paradigm(spec: dict[str, Any]) -> FSMLoop:
    """Compile a loaded loop file of any paradigm into an FSM.

    No `paradigm:` key means `fsm`. A document that already has both `initial:` and
    `states:` is an FSM whatever its `paradigm:` says: that key then only records the
    paradigm it was compiled from (the output of `ll-loop compile` loads back unchanged).
    """
    if not isinstance(spec, dict):
        raise LoopDefinitionError(f"a loop must be a mapping, got {type_name(spec)}")
    paradigm = spec.get("paradigm", "fsm")
    if not isinstance(paradigm, str):
        raise LoopDefinitionError(
            f"paradigm: expected a string, got {type_name(paradigm)}; known: {', '.join(PARADIGMS)}"
        )
    compiler = COMPILERS.get(paradigm)
    if compiler is None:
        hint = did_you_mean(paradigm, PARADIGMS)
        raise LoopDefinitionError(
            f"unknown paradigm '{paradigm}'{hint}; known: {', '.join(PARADIGMS)}"
        )
    if "initial" in spec and "states" in spec:
        return compile_fsm(spec)
    return compiler(spec)
