"""Which transitions a state declares and which the executor can take: the one answer."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model.key_rows import ROUTE_ROWS
from little_loops.fsm.definition.model.route_keys import EXTRA_SHORTHANDS
from little_loops.fsm.definition.model.typed import (
    ROUTE_DEFAULT_KEY,
    ROUTE_ERROR_KEY,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.evaluators.spec import ERROR_VERDICT

# The label of the edge a `maintain: true` loop takes from a terminal state.
MAINTAIN_LABEL = "maintain"

NEXT_KEY = ("next",)
# Routes no verdict takes: a stall breaker's (`stall: {on_stall: ...}`) and an approval
# state's `on_timeout`. They are declared (checked, drawn) but taken by the executor itself.
STALL_KEY = ("stall", "on_stall")
TIMEOUT_KEY = ("on_timeout",)
STALL_LABEL = "stall"
TIMEOUT_LABEL = "timeout"
RETRY_EXHAUSTED_KEY = ("on_retry_exhausted",)
RETRY_EXHAUSTED_LABEL = "retry_exhausted"
# Taken only by the executor (when retry: runs out, or a key whose row is a route: the
# rate-limit waits, a guard ...), never by a verdict.
_EXHAUSTED = (RETRY_EXHAUSTED_KEY, *((row.name,) for row in ROUTE_ROWS))
_OWN_ROUTES = (("on_maintain",), STALL_KEY, TIMEOUT_KEY, *_EXHAUSTED)
_DEFAULT_KEY = ("route", ROUTE_DEFAULT_KEY)
_ERROR_KEY = ("route", ROUTE_ERROR_KEY)
_SHORTHAND = (
    ("success", "on_success"),
    ("failure", "on_failure"),
    (ERROR_VERDICT, "on_error"),
    *EXTRA_SHORTHANDS,
)


@dataclass(frozen=True)
class Transition:
    """One way out of a state: the label it answers, its raw target, the key it is under.

    Labels are verdicts, `next`, `_`, `_error` or `maintain`; targets are raw (they may be
    `$current` or hold `${...}`); `key` is the path within the state (`("route", "ok")`,
    `("on_success",)`), empty for the implicit restart at `initial`.
    """

    label: str
    target: str
    key: tuple[str, ...]
    theirs: bool = False  # a `_` read as little-loops reads it (`--compat`): it takes `error`

    def answers(self, verdict: str) -> bool:
        """Whether this transition is taken for *verdict* (`next` is taken for any).

        `_` catches every verdict but `error`: a catch-all must not hide a crashed action
        or a failed LLM call, which would keep an unattended loop spending. little-loops'
        `_` takes `error` too (before `_error:`, after a route `error:`): so with `--compat`.
        """
        if self.key == NEXT_KEY:
            return True
        if self.key in _EXHAUSTED:
            return False  # taken only by the executor, when retry: or the waits run out
        if self.key == _DEFAULT_KEY:
            return self.theirs or verdict != ERROR_VERDICT
        if self.key == _ERROR_KEY:
            return verdict == ERROR_VERDICT
        return self.label == verdict

    @property
    def is_error_route(self) -> bool:
        """Whether this is an error route (`on_error`, `error:`, `_error:`): not `next`,
        not a `_` (little-loops' `_` takes an `error` verdict, never a failed action)."""
        return self.key not in (NEXT_KEY, _DEFAULT_KEY) and self.answers(ERROR_VERDICT)

    @property
    def reason(self) -> str:
        """How a route event explains taking it (`next`, `route 'ok'`, `on_success`)."""
        if self.key == _DEFAULT_KEY:
            return f"route '{ROUTE_DEFAULT_KEY}' (default)"
        if self.key[:1] == ("route",):
            return f"route '{self.label}'"
        return self.key[0] if self.key else MAINTAIN_LABEL


def declared(state: StateConfig) -> list[Transition]:
    """Every transition written in *state*, in resolution order, taken or not."""
    out: list[Transition] = []
    if state.next is not None:
        out.append(Transition("next", state.next, NEXT_KEY))
    if state.route is not None:
        out.extend(Transition(v, t, ("route", v)) for v, t in state.route.routes.items())
        if state.route.default is not None:
            default = state.route.default
            out.append(Transition(ROUTE_DEFAULT_KEY, default, _DEFAULT_KEY, state.theirs))
        if state.route.error is not None:
            out.append(Transition(ROUTE_ERROR_KEY, state.route.error, _ERROR_KEY))
    for verdict, key in _SHORTHAND:
        target = getattr(state, key)
        if target is not None:
            out.append(Transition(verdict, target, (key,)))
    if state.on_maintain is not None:
        out.append(Transition(MAINTAIN_LABEL, state.on_maintain, ("on_maintain",)))
    if state.stall is not None and state.stall.on_stall is not None:
        out.append(Transition(STALL_LABEL, state.stall.on_stall, STALL_KEY))
    if state.on_timeout is not None:
        out.append(Transition(TIMEOUT_LABEL, state.on_timeout, TIMEOUT_KEY))
    if state.on_retry_exhausted is not None:
        out.append(Transition(RETRY_EXHAUSTED_LABEL, state.on_retry_exhausted, RETRY_EXHAUSTED_KEY))
    for row in ROUTE_ROWS:
        target = state.value(row)
        if target is not None and row.route is not None:
            out.append(Transition(row.route, target, (row.name,)))
    return out


def transitions(state: StateConfig) -> list[Transition]:
    """The transitions the executor can take after running *state*, in resolution order.

    `next` alone, plus the error route used when the action cannot run; else the `route:`
    table (which overrides the shorthand); else `on_success`/`on_failure`/`on_error`. A
    terminal state has none (see `restart`).
    """
    if state.terminal:
        return []
    written = declared(state)
    exhausted = [t for t in written if t.key in _EXHAUSTED]
    if state.route is not None:
        table = [t for t in written if t.key[0] == "route"]
    else:
        table = [t for t in written if t.key[0].startswith("on_") and t.key not in _OWN_ROUTES]
    if state.next is None:
        return table + exhausted
    error = next((t for t in table if t.is_error_route), None)
    return [written[0], *([] if error is None else [error]), *exhausted]


def restart(fsm: FSMLoop, state: StateConfig) -> Transition | None:
    """Where a `maintain: true` loop goes on from the terminal *state*, else None."""
    if not (state.terminal and fsm.maintain):
        return None
    if state.on_maintain is not None:
        return Transition(MAINTAIN_LABEL, state.on_maintain, ("on_maintain",))
    return Transition(MAINTAIN_LABEL, fsm.initial, ())


def moves(fsm: FSMLoop, state: StateConfig) -> list[Transition]:
    """Every transition a run can take out of *state*: `transitions`, or the restart."""
    restarted = restart(fsm, state)
    return transitions(state) if restarted is None else [restarted]
