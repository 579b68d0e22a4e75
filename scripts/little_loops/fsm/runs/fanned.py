"""A run's fan-out branches, as its events (or saved state) and each branch's own run tell them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.engine.kinds.fanout import progress_of
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import validate_loop_name

CRASHED = "crashed"  # a branch's run marked running whose process is gone


@dataclass
class BranchView:
    """One branch of a fan-out state as a viewer shows it: what its parent recorded (item,
    run key, git branch, worktree; verdict and cost once ended) and where its own run is."""

    state: str  # the parent's fan-out state
    index: int
    item: str
    loop: str
    key: str  # the branch's run: `LOOP@ID` (its files, `status`, `logs` name it)
    branch: str  # its git branch ("" outside a repository)
    worktree: str
    verdict: str = ""  # success, failure or stopped once ended; "" while it runs
    outcome: str = ""
    cost_usd: float = 0.0
    merged: str = ""  # what the merge did with it, once merged or refused
    status: str = ""  # its own run's status (running, completed, ...); "" before it wrote one
    at: str = ""  # the state its own run is at
    iteration: int = 0
    started_at: str = ""  # when its parent recorded its start
    finished_at: str = ""
    states: list[str] = field(default_factory=list)  # the states its own run went through
    duration_ms: int = 0  # its own run's time (a report fills these two in)

    @property
    def standing(self) -> str:
        """How it stands, in a word or three: its verdict once ended, else where its own
        run is (`running at fix`, `crashed at fix`), else `starting`."""
        if self.verdict:
            return self.verdict
        return f"{self.status} at {self.at}" if self.status else "starting"

    @property
    def label(self) -> str:
        """`#0 ITEM`: how lists name it."""
        return f"#{self.index} {self.item}" if self.item else f"#{self.index}"

    def to_dict(self) -> dict[str, Any]:
        """The branch as `--json` outputs show it."""
        return asdict(self)


def from_events(events: Iterable[Mapping[str, Any]], own: str = "") -> list[BranchView]:
    """The branches that the parent's events *events* (in order) started, in start order;
    each visit of a fan-out state starts new ones. Outside a repository the branches of
    one loop share its run key, one after another: an end is the latest start's of its key.
    A branch naming the parent's own run *own* (a planted event) is left out."""
    started: list[BranchView] = []
    by_key: dict[str, BranchView] = {}  # the latest start of each run key
    for event in events:
        kind = event.get("event")
        if kind == Event.BRANCH_START:
            view = _view(event)
            if view is not None and view.key != own:
                view.started_at = text_of(event.get("ts"))
                started.append(view)
                by_key[view.key] = view
        elif kind == Event.BRANCH_FINISH:
            found = by_key.get(text_of(event.get("key")))
            if found is not None:
                found.verdict = text_of(event.get("verdict"))
                found.outcome = text_of(event.get("outcome"))
                found.cost_usd = _cost(event.get("cost_usd"))
                found.finished_at = text_of(event.get("ts"))
        elif kind == Event.FANOUT_MERGE:
            _merged(by_key, event)
    return started


def from_captured(captured: Mapping[str, Any], own: str = "") -> list[BranchView]:
    """The branches of the latest visit of each fan-out state, from a saved run's
    `captured`: its events so far while it runs, its results once it ended (a branch
    naming the run's own key *own* left out)."""
    found: list[BranchView] = []
    for name, value in captured.items():
        progress = progress_of(value)
        if progress is not None:
            found += from_events(progress[1], own)
        elif not isinstance(value, dict):
            continue
        elif isinstance(value.get("branches"), list) and "stopped_by" in value:
            for each in value["branches"]:
                view = _view({"state": name, **each}) if isinstance(each, dict) else None
                if view is not None and view.key != own:
                    view.verdict = text_of(each.get("verdict"))
                    view.outcome = text_of(each.get("outcome"))
                    view.cost_usd = _cost(each.get("cost_usd"))
                    view.merged = text_of(each.get("merged"))
                    found.append(view)
    return found


def read_runs(views: list[BranchView], loops_dir: Path) -> list[BranchView]:
    """*views* with where each branch's own run is (status, state, pass, and its spend so
    far while it runs), read from its state file; a branch whose files are gone or
    unreadable keeps what its parent recorded."""
    from little_loops.fsm.facts.outcomes import Status
    from little_loops.fsm.runs.liveness import run_alive
    from little_loops.fsm.runs.store import StatePersistence

    for view in views:
        try:
            state = StatePersistence(view.key, loops_dir).load_state()
        except (LoopError, ValueError, OSError):
            continue
        if state is None:
            continue
        view.status = str(state.status)
        if state.status == Status.RUNNING and not run_alive(state, loops_dir):
            view.status = CRASHED  # its process is gone (a kill -9): resume goes on with it
        view.at = state.current_state
        view.iteration = state.iteration
        if not view.verdict:
            view.cost_usd = max(view.cost_usd, state.cost_usd)
    return views


def pick(views: list[BranchView], wanted: str) -> BranchView | None:
    """The branch *wanted* names: its index, its item, its run key or run id, or its git
    branch; the latest such when a state ran its fan-out more than once."""
    for view in reversed(views):
        run_id = view.key.rpartition("@")[2]
        names = {str(view.index), view.item, view.key, run_id, view.branch} - {""}
        if wanted in names:
            return view
    return None


def text_of(value: object) -> str:
    """A text field of an event (anything else, in a planted or newer file, is "")."""
    return value if isinstance(value, str) else ""


def texts_of(value: object) -> list[str]:
    """A list-of-texts field of an event (its texts; anything else is [])."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _view(event: Mapping[str, Any]) -> BranchView | None:
    index, key = event.get("index"), text_of(event.get("key"))
    if not isinstance(index, int) or isinstance(index, bool) or not key:
        return None
    try:
        validate_loop_name(key)  # a planted key never names a file outside .running/
    except LoopError:
        return None
    return BranchView(
        state=text_of(event.get("state")),
        index=index,
        item=text_of(event.get("item")),
        loop=text_of(event.get("loop")),
        key=key,
        branch=text_of(event.get("branch")),
        worktree=text_of(event.get("worktree")),
    )


def _merged(by_key: dict[str, BranchView], event: Mapping[str, Any]) -> None:
    for key in texts_of(event.get("merged")):
        if key in by_key:
            by_key[key].merged = "merged"
    refused = event.get("refused")
    for each in refused if isinstance(refused, list) else []:
        key = text_of(each.get("key")) if isinstance(each, dict) else ""
        if key in by_key:
            by_key[key].merged = f"refused: {text_of(each.get('reason'))}"


def _cost(value: object) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else 0.0  # type: ignore[arg-type]
