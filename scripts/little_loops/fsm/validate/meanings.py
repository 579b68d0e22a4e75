"""Keys little-loops reads with another meaning: a note for each, and its meaning for `--compat`.

One row per key (`MEANINGS`), naming the key's row (its place and name: the key tables
check it there): where a loop file's meaning differs there (`differs`, a note `validate`
prints in one line), how each reads it (`ours`, `theirs`: the row of docs/little-loops.md's
table between the `meanings` markers, which a test holds to these) and what `--compat` does
about it. A key read when the file is loaded is rewritten into little-loops' meaning here
(`as_theirs`); one read while the loop runs is read as little-loops reads it when the model
says so (`FSMLoop.theirs`, the evaluators' `EvaluateConfig.theirs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from little_loops.fsm.definition.model.blocks import ROUTE_DEFAULT_KEY, ROUTE_ERROR_KEY
from little_loops.fsm.definition.model.key_row import LOOP
from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY
from little_loops.fsm.definition.model.spellings import ROUTE, STATE, spellings_at
from little_loops.fsm.evaluators.judge_theirs import CANNOT_JUDGE, HOLD_CAP
from little_loops.fsm.evaluators.spec import ERROR_VERDICT as ERROR
from little_loops.fsm.facts.errors import ValidationError

# little-loops' step cap of a loop that sets neither max_steps nor max_iterations.
THEIR_MAX_STEPS = 50
MAX_STEPS = "max_steps"
MAX_ITERATIONS = "max_iterations"
ON_CANNOT_JUDGE = "on_cannot_judge"
PREV_REFERENCE = "${prev."
EXIT_KEY = "evaluate"  # an evaluator that does not judge the exit code, on a non-zero exit

Where = tuple[tuple[str, ...], str]  # a key path and what differs there
# A cell of the docs' table of meanings; a function: worked out when the table is written
# (it reads every evaluator, which validating a loop does not load).
Cell = str | Callable[[], str]


@dataclass(frozen=True)
class Meaning:
    """One key little-loops reads otherwise: its row, where a file uses it so, how it differs,
    and what `--compat` does."""

    key: str
    # The place of the key's row (key_row.LOOP, STATE, or a `route:` table); None: no key of
    # a loop file but a value read otherwise (an evaluator, a parameter, a reference).
    place: str | None
    # Where a file's meaning differs, and how: given the file and whether it is written in
    # little-loops' spelling (a note per place, in one line).
    differs: Callable[[Mapping[str, Any], bool], Iterator[Where]]
    # docs/little-loops.md's table: the key as it names it, what it means in ll-loop, what in
    # little-loops (and with `--compat`).
    shown: Cell
    ours: Cell
    theirs: Cell
    # Rewrites a file into little-loops' meaning (`--compat`); None: the engine reads it so.
    as_theirs: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def table_row(self) -> str:
        """Its row of docs/little-loops.md's table of meanings."""
        cells = (c if isinstance(c, str) else c() for c in (self.shown, self.ours, self.theirs))
        return f"| {' | '.join(cells)} |"


def _evaluators(judge_exit_code: bool) -> str:
    """The evaluators that judge the exit code (or that do not), for the docs' table."""
    from little_loops.fsm.evaluators.registry import SPECS  # the docs' table alone reads all

    return ", ".join(
        f"`{name}`" for name, spec in SPECS.items() if spec.reads_exit_code is judge_exit_code
    )


def _exit_shown() -> str:
    return (
        f"`{EXIT_KEY}` that does not judge the exit code ({_evaluators(False)}), after a "
        "non-zero exit"
    )


def _exit_theirs() -> str:
    return f"`{ERROR}` (the evaluators that judge it: {_evaluators(True)})"


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _in_their_spelling(data: Mapping[str, Any]) -> bool:
    """Whether a state of *data* uses a key in little-loops' spelling (`on_yes`, `failure:`,
    a route's `yes:`, ...): a file its reader may read with little-loops' meaning."""
    at_state, at_route = spellings_at(STATE), spellings_at(ROUTE)
    for _, state in _states(data):
        route = state.get("route")
        if not at_state.keys().isdisjoint(state) or (
            isinstance(route, Mapping) and not at_route.keys().isdisjoint(route)
        ):
            return True
    return False


def _steps_differ(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    # Our own safety net, in every loop of ours: noted in a file in their spelling only.
    if MAX_STEPS not in data and _is_count(data.get(MAX_ITERATIONS)) and in_theirs:
        yield (
            (MAX_ITERATIONS,),
            f"little-loops reads max_iterations without max_steps as a cap of "
            f"{data[MAX_ITERATIONS]} steps; ll-loop, of {data[MAX_ITERATIONS]} passes",
        )


def _steps_as_theirs(data: dict[str, Any]) -> dict[str, Any]:
    """max_iterations without max_steps is the step cap; neither is a cap of 50 steps. The
    pass cap stays at the step cap: a pass takes a step at least, so it never ends first."""
    if MAX_STEPS in data:
        return data
    steps = data.get(MAX_ITERATIONS)
    if not _is_count(steps):
        return {**data, MAX_STEPS: THEIR_MAX_STEPS} if steps is None else data
    return {**data, MAX_STEPS: steps}


def _states(data: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    states = data.get("states")
    if isinstance(states, Mapping):
        for name, state in states.items():
            if isinstance(state, Mapping):
                yield str(name), state


def _evaluating(
    data: Mapping[str, Any], in_theirs: bool, kind: str, without: str
) -> Iterator[tuple[str, ...]]:
    """The key path of each state's `evaluate: {type: KIND}` that has no key *without*, in
    a file in little-loops' spelling (in loops of ours it keeps our reading: not noted)."""
    if not in_theirs:
        return
    for name, state in _states(data):
        evaluate = state.get("evaluate")
        if (
            isinstance(evaluate, Mapping)
            and evaluate.get("type") == kind
            and evaluate.get(without) is None
        ):
            yield ("states", name, "evaluate", "type")


def _numbers_differ(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    for where in _evaluating(data, in_theirs, "output_numeric", without="key"):
        yield (
            where,
            "little-loops reads the whole output as the number (several lines are an "
            "error there); ll-loop reads its last non-empty line",
        )


def _routes_cannot_judge(state: Mapping[str, Any]) -> bool:
    route = state.get("route")
    return isinstance(route, Mapping) and CANNOT_JUDGE in route


def _judge_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    states: dict[str, Mapping[str, Any]] = {}  # read when a state is noted (few are)
    for where in _evaluating(data, in_theirs, "llm_structured", without="schema"):
        states = states or dict(_states(data))
        held = (
            ""
            if _routes_cannot_judge(states[where[1]])
            else (
                f" (with no route for cannot_judge the state is judged again, {HOLD_CAP} times "
                "at most, then takes its error route)"
            )
        )
        yield (
            where,
            f"little-loops' judge answers cannot_judge too{held}, and a verdict it gives "
            "without quoting the output is failure there; ll-loop takes the judge's verdict",
        )


def _on_cannot_judge_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    for name, state in _states(data):
        if state.get(ON_CANNOT_JUDGE) is not None:
            yield (
                ("states", name, ON_CANNOT_JUDGE),
                "little-loops' judge answers cannot_judge and routes it here; ll-loop's "
                "judge never does",
            )


def _default_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    # Our own safety net, in every loop of ours: noted in a file in their spelling only.
    if not in_theirs:
        return
    for name, state in _states(data):
        route = state.get("route")
        if isinstance(route, Mapping) and ROUTE_DEFAULT_KEY in route and ERROR not in route:
            yield (
                ("states", name, "route", ROUTE_DEFAULT_KEY),
                "little-loops' '_' takes an error verdict too (before _error:); ll-loop's "
                "never does",
            )


def _prev_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    initial = data.get("initial")
    # (the initial state is most often the first: the walk stops at it)
    found = (s for name, s in _states(data) if name == initial) if isinstance(initial, str) else ()
    state = next(iter(found), None)
    action = state.get("action") if state is not None else None
    if isinstance(action, str) and PREV_REFERENCE in action:
        yield (
            ("states", str(initial), "action"),
            "little-loops cannot write out an action reading ${prev...} before any action "
            "ran (its error route); ll-loop reads it as empty",
        )


def _exit_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    from little_loops.fsm.evaluators.registry import SPECS  # only for a file in their spelling

    if not in_theirs:
        return
    for name, state in _states(data):
        evaluate = state.get("evaluate")
        kind = evaluate.get("type") if isinstance(evaluate, Mapping) else None
        spec = SPECS.get(kind) if isinstance(kind, str) else None
        if spec is not None and not spec.reads_exit_code and state.get("action"):
            yield (
                ("states", name, "evaluate", "type"),
                f"little-loops' {kind} gives error when the action exits non-zero; ll-loop "
                "reads the output whatever the exit code",
            )


def _run_dir_differs(data: Mapping[str, Any], in_theirs: bool) -> Iterator[Where]:
    parameters = data.get("parameters")
    spec = parameters.get(RUN_DIR_KEY) if isinstance(parameters, Mapping) else None
    if isinstance(spec, Mapping) and spec.get("required") is True:
        yield (
            ("parameters", RUN_DIR_KEY),
            "little-loops fills a required run_dir with the run's folder; ll-loop asks for it",
        )


MEANINGS: tuple[Meaning, ...] = (
    Meaning(
        MAX_ITERATIONS,
        LOOP,
        _steps_differ,
        f"`{MAX_ITERATIONS}` without `{MAX_STEPS}`",
        "a cap on passes (back to the initial state)",
        f"a cap on steps; a loop that sets neither stops at {THEIR_MAX_STEPS} steps",
        _steps_as_theirs,
    ),
    Meaning(
        "output_numeric",
        None,  # an evaluator
        _numbers_differ,
        "`output_numeric` without `key:`",
        "the number is the last non-empty line",
        "the number is the whole output: several lines are an `error` verdict",
    ),
    Meaning(
        "llm_structured",
        None,  # an evaluator; it reads it so: judge_theirs.py
        _judge_differs,
        "`llm_structured` without `schema:`",
        "the judge's verdict, from `success`, `failure`, `blocked`, `partial`",
        f"also `{CANNOT_JUDGE}` (route it with `route: {{{CANNOT_JUDGE}: ...}}` or "
        f"`{ON_CANNOT_JUDGE}:`; a state with no route for it runs again, {HOLD_CAP} times at "
        "most in a row, then takes its error route); the judge is asked to quote the output "
        "it rests on, and a verdict without a quote is `failure`",
    ),
    Meaning(
        RUN_DIR_KEY,
        None,  # a parameter; the run fills it: definition/model/arguments.py
        _run_dir_differs,
        f"a required `{RUN_DIR_KEY}` parameter",
        "must be given",
        "filled in: the run's folder",
    ),
    Meaning(
        EXIT_KEY,
        STATE,  # the evaluators read it: evaluators/dispatch.py
        _exit_differs,
        _exit_shown,
        "reads the output as always",
        _exit_theirs,
    ),
    Meaning(
        ON_CANNOT_JUDGE,
        STATE,  # the run reads it: rules/abstentions
        _on_cannot_judge_differs,
        f"`{ON_CANNOT_JUDGE}`",
        f"allowed; our judge never answers `{CANNOT_JUDGE}`",
        f"routes the judge's `{CANNOT_JUDGE}` there at once (not held); beside a `route:` "
        "table it is not held either, but the table alone routes it (`_` or no valid "
        "transition)",
    ),
    Meaning(
        ROUTE_DEFAULT_KEY,
        ROUTE,  # the run reads it: definition/graph/transitions.py
        _default_differs,
        f"`{ROUTE_DEFAULT_KEY}` in a `route:` table with no `{ERROR}:`",
        f"takes any verdict but `{ERROR}` (that goes to `{ROUTE_ERROR_KEY}:`)",
        f"takes `{ERROR}` too, before `{ROUTE_ERROR_KEY}:` (a route's own `{ERROR}:` comes first)",
    ),
    Meaning(
        "${prev.*}",
        None,  # the action's text: engine/kinds/action.py
        _prev_differs,
        "`${prev.*}` in an action, before any action ran (noted for the initial state's)",
        "empty",
        "the action cannot be written out: its error route (in `simulate` too)",
    ),
)
NOTE = "; run with --compat to read it as little-loops does"


def notes(data: Mapping[str, Any], loop: str | None = None) -> list[ValidationError]:
    """One line for each place *data* means something else in little-loops."""
    in_theirs = _in_their_spelling(data)
    return [
        ValidationError.at(loop, path, f"{text}{NOTE}", severity="note")
        for meaning in MEANINGS
        for path, text in meaning.differs(data, in_theirs)
    ]


def as_theirs(data: Mapping[str, Any]) -> dict[str, Any]:
    """*data* rewritten into little-loops' meaning of each key read at load time."""
    out = dict(data)
    for meaning in MEANINGS:
        if meaning.as_theirs is not None:
            out = meaning.as_theirs(out)
    return out
