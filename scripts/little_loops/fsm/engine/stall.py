"""Stall breakers: notice a run spinning without progress, and say which detector saw it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.definition.model.circuit_keys import ABORT
from little_loops.fsm.definition.model.guard_keys import THROTTLE as THROTTLE_ROW
from little_loops.fsm.definition.model.learning_keys import LEARNING_TYPE
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.volatile import masked
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.processes.gitcmd import NO_SUBMODULE_RUN, git_bytes

if TYPE_CHECKING:  # the policy blocks' classes load when a loop has one (model/blocks.py)
    from little_loops.fsm.definition.model.state_guards import ThrottleConfig
    from little_loops.fsm.definition.model.typed import StallConfig

SAME_RESULT = "same_result"
NO_CHANGE_PASSES = "no_change_passes"
MAX_VISITS = "max_visits"
REPEATED_FAILURE = "repeated_failure"  # circuit: {repeated_failure: ...} (little-loops')
THROTTLE = THROTTLE_ROW.name  # the detector of a state's block of that key and on_throttle_hard:
# When a detector looks: as a pass begins, as a state is entered, once a state gave a verdict.
AT_PASS, AT_ENTRY, AT_VERDICT = "pass", "entry", "verdict"


@dataclass(frozen=True)
class Stall:
    """A detector fired: which, at which state, its limit, the count, and where it leads."""

    detector: str
    state: str
    limit: int
    count: int
    target: str | None  # the on_stall state; None: the run ends (terminated_by stall)

    def message(self) -> str:
        says = STALL_DETECTORS[self.detector].says
        said = says.format(state=self.state, count=self.count, limit=self.limit)
        return f"stall ({self.detector}: {self.limit}): {said}"


def tree_fingerprint(cwd: Path | None) -> str:
    """A hash of the git working tree in *cwd*: `git status --porcelain=v1 -z` and
    `git diff HEAD --binary`, the untracked files' contents, and HEAD (a pass that commits
    its changes, `commit:`, leaves a clean tree on a new commit). LoopRuntimeError when *cwd*
    is not in a git repository."""
    import hashlib  # only a stall breaker that hashes loads it (OpenSSL: start-up time)

    digest = hashlib.sha256()
    for argv in (
        ("status", "--porcelain=v1", "-z", "--untracked-files=all", NO_SUBMODULE_RUN),
        ("diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", NO_SUBMODULE_RUN),
        ("rev-parse", "--verify", "--quiet", "HEAD"),
    ):
        code, out = _git(cwd, argv)
        if code != 0 and argv[0] == "status":
            where = str(cwd) if cwd is not None else str(Path.cwd())
            raise LoopRuntimeError(
                f"stall: no_change_passes needs a git repository, and {where} is not in one"
            )
        # `git diff HEAD` and `rev-parse` fail in a repository with no commit yet: the status
        # still tells.
        digest.update(out if code == 0 else b"")
        digest.update(b"\0--\0")
        if argv[0] == "status":
            _hash_untracked(digest, cwd)
    return digest.hexdigest()


def _git(cwd: Path | None, argv: tuple[str, ...]) -> tuple[int, bytes]:
    """One git command of the fingerprint in *cwd* (this directory when None)."""
    try:
        return git_bytes(cwd if cwd is not None else Path.cwd(), *argv)
    except LoopRuntimeError as exc:
        raise LoopRuntimeError(f"stall: no_change_passes cannot run git: {exc}") from None


def _hash_untracked(digest: Any, cwd: Path | None) -> None:
    """Add the contents of the untracked files to *digest*: the status lists them by name
    only, and `git diff HEAD` leaves them out, so an edit of one would go unseen."""
    code, out = _git(cwd, ("ls-files", "-z", "--others", "--exclude-standard"))
    base = cwd if cwd is not None else Path.cwd()
    for name in sorted(out.split(b"\0")) if code == 0 else []:
        if not name:
            continue
        digest.update(name + b"\0")
        path = base / os.fsdecode(name)
        try:
            if path.is_symlink():
                digest.update(os.fsencode(os.readlink(path)))
            elif path.is_file():
                with open(path, "rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
        except OSError:
            digest.update(b"\0?")  # gone or unreadable between the listing and the read
        digest.update(b"\0")


class StallWatch:
    """The counts the stall breakers go by (saved with the run: a resume keeps them)."""

    def __init__(
        self,
        fsm: FSMLoop,
        cwd: Path | None = None,
        fingerprint: Callable[[Path | None], str] = tree_fingerprint,
    ) -> None:
        self.fsm = fsm
        self.cwd = cwd
        self.fingerprint = fingerprint
        self.visits: dict[str, int] = {}
        self.results: dict[str, list[Any]] = {}  # state -> [hash of verdict+output, streak]
        self.tree: list[Any] = [None, 0]  # [last fingerprint, passes in a row with no change]
        # circuit.repeated_failure: [state, exit code, verdict] of the last steps (same in a
        # row), each such triple's count in all, and each state's progress_paths fingerprint.
        self.repeats: list[list[Any]] = []
        self.seen_triples: dict[str, int] = {}
        self.marks: dict[str, list[Any]] = {}
        self.stay: list[Any] = [None, 0]  # for THROTTLE: [state, entries in a row]
        self._active: bool | None = None

    # -- what the run saves ------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """The counts as the state file keeps them (empty when the loop has no breakers)."""
        if not self.active():
            return {}
        record: dict[str, Any] = {
            "visits": dict(self.visits),
            "results": {k: list(v) for k, v in self.results.items()},
            "tree": list(self.tree),
        }
        # circuit: and THROTTLE counts, only when a loop has them (older files stay as they were)
        extra = {
            "repeats": [list(t) for t in self.repeats],
            "seen_triples": dict(self.seen_triples),
            "marks": dict(self.marks),
            "stay": list(self.stay) if self.stay[0] is not None else [],
        }
        record.update((key, value) for key, value in extra.items() if value)
        return record

    def restore(self, saved: dict[str, Any]) -> None:
        visits, results, tree = saved.get("visits"), saved.get("results"), saved.get("tree")
        if isinstance(visits, dict):
            self.visits = {str(k): v for k, v in visits.items() if isinstance(v, int)}
        if isinstance(results, dict):
            self.results = {
                str(k): list(v) for k, v in results.items() if isinstance(v, list) and len(v) == 2
            }
        if isinstance(tree, list) and len(tree) == 2:
            self.tree = list(tree)
        repeats, counts = saved.get("repeats"), saved.get("seen_triples")
        if isinstance(repeats, list):
            self.repeats = [list(t) for t in repeats if isinstance(t, list) and len(t) == 3]
        if isinstance(counts, dict):
            self.seen_triples = {str(k): v for k, v in counts.items() if isinstance(v, int)}
        stay = saved.get("stay")
        if isinstance(stay, list) and len(stay) == 2:
            self.stay = list(stay)
        marks = saved.get("marks")
        if isinstance(marks, dict):
            self.marks = {str(k): v for k, v in marks.items() if isinstance(v, list)}

    def reentered(self, name: str) -> None:
        """A resume enters state *name* again: its earlier entry does not count twice."""
        if self.visits.get(name, 0) > 0:
            self.visits[name] -= 1
        if self.stay[0] == name and self.stay[1] > 0:
            self.stay[1] -= 1

    # -- the detectors -----------------------------------------------------------------

    def active(self) -> bool:
        """Whether the loop has a stall breaker at all: looked up once, not at every step
        (each look is a walk over every state)."""
        if self._active is None:
            circuit = self.fsm.circuit
            self._active = (
                (circuit is not None and circuit.repeated_failure is not None)
                or any(_throttled(s) for s in self.fsm.states.values())
                or self.fsm.stall is not None
                or any(s.stall for s in self.fsm.states.values())
            )
        return self._active

    def entering(self, name: str, pass_began: bool) -> Stall | None:
        """The run is about to enter state *name* (a new pass began just now: *pass_began*)."""
        if not self.active():
            return None
        moments = (AT_PASS, AT_ENTRY) if pass_began else (AT_ENTRY,)
        return self._look(moments, Seen(name))

    def judged(self, name: str, verdict: str, output: str, exit_code: int = 0) -> Stall | None:
        """State *name* gave *verdict* on *output* (its action exited with *exit_code*)."""
        if not self.active():
            return None
        return self._look((AT_VERDICT,), Seen(name, verdict, output, exit_code))

    def _look(self, moments: tuple[str, ...], seen: Seen) -> Stall | None:
        """The first stall the detectors of *moments* see, in the registry's order."""
        for moment in moments:
            for detector in STALL_DETECTORS.values():
                if detector.moment == moment:
                    stall = detector.look(self, seen)
                    if stall is not None:
                        return stall
        return None

    def _configs(self, name: str) -> list[StallConfig]:
        state = self.fsm.states.get(name)
        found = [state.stall] if state is not None and state.stall is not None else []
        return found + ([self.fsm.stall] if self.fsm.stall is not None else [])

    def limit(self, name: str, detector: str) -> int | None:
        for config in self._configs(name):
            value = getattr(config, detector)
            if value is not None:
                return int(value)
        return None

    def exact_output(self, name: str) -> bool:
        """Whether same_result compares state *name*'s outputs byte for byte
        (`ignore_volatile: false`, the state's own else the loop's)."""
        setting = next(
            (c.ignore_volatile for c in self._configs(name) if c.ignore_volatile is not None),
            None,
        )
        return setting is False

    def stall(self, detector: str, name: str, limit: int, count: int) -> Stall:
        if detector == THROTTLE:
            state = self.fsm.states[name]
            return Stall(detector, name, limit, count, state.on_throttle_hard or state.on_error)
        if detector == REPEATED_FAILURE:
            failure = self.fsm.circuit.repeated_failure if self.fsm.circuit else None
            goes = failure.on_repeated_failure if failure is not None else ABORT
            return Stall(detector, name, limit, count, None if goes == ABORT else goes)
        loop = [self.fsm.stall] if self.fsm.stall is not None else []
        configs = loop if detector == NO_CHANGE_PASSES else self._configs(name)
        target = next((c.on_stall for c in configs if c.on_stall is not None), None)
        return Stall(detector, name, limit, count, target)


@dataclass(frozen=True)
class Seen:
    """What a detector looks at: the state, and the verdict and output it gave (AT_VERDICT)."""

    state: str
    verdict: str = ""
    output: str = ""
    exit_code: int = 0


def _max_visits(watch: StallWatch, seen: Seen) -> Stall | None:
    name = seen.state
    limit = watch.limit(name, MAX_VISITS)
    watch.visits[name] = watch.visits.get(name, 0) + 1
    if limit is not None and watch.visits[name] > limit:
        count = watch.visits[name]
        watch.visits[name] = 0  # a stall route that comes back here gets a fresh count
        return watch.stall(MAX_VISITS, name, limit, count)
    return None


def _same_result(watch: StallWatch, seen: Seen) -> Stall | None:
    name = seen.state
    limit = watch.limit(name, SAME_RESULT)
    if limit is None:
        return None
    output = seen.output if watch.exact_output(name) else masked(seen.output)
    text = f"{seen.verdict}\0{output}"
    import hashlib

    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    last = watch.results.get(name)
    streak = last[1] + 1 if last is not None and last[0] == key else 1
    watch.results[name] = [key, streak]
    if streak >= limit:
        watch.results[name] = [key, 0]
        return watch.stall(SAME_RESULT, name, limit, streak)
    return None


def _no_change_passes(watch: StallWatch, seen: Seen) -> Stall | None:
    config = watch.fsm.stall
    limit = config.no_change_passes if config is not None else None
    if limit is None:
        return None
    now = watch.fingerprint(watch.cwd)
    unchanged = watch.tree[1] + 1 if watch.tree[0] == now else 0
    watch.tree = [now, unchanged]
    if unchanged >= limit:
        watch.tree = [now, 0]
        return watch.stall(NO_CHANGE_PASSES, seen.state, limit, unchanged)
    return None


def _progress_mark(watch: StallWatch, paths: list[str], excluded: list[str]) -> list[Any]:
    """(mtime, size) of each of *paths* but *excluded* (0, 0 when missing), under the cwd."""
    base = watch.cwd if watch.cwd is not None else Path.cwd()
    mark: list[Any] = []
    for raw in paths:
        if raw in excluded:
            continue
        try:
            found = (base / raw).stat()
            mark.append([found.st_mtime, found.st_size])
        except OSError:
            mark.append([0.0, 0])
    return mark


def _throttled(state: StateConfig) -> bool:
    return state.value(THROTTLE_ROW) is not None or state.on_throttle_hard is not None


def _throttle(watch: StallWatch, seen: Seen) -> Stall | None:
    """A throttled state entered once more than `hard_max` times in a row (its action ran
    hard_max times): to `on_throttle_hard` (else `on_error`, else the run ends)."""
    name = seen.state
    count = watch.stay[1] + 1 if watch.stay[0] == name else 1
    watch.stay = [name, count]
    state = watch.fsm.states.get(name)
    if state is None or not _throttled(state) or state.type == LEARNING_TYPE:
        return None  # a learning state is exempt from hard_max, as in little-loops
    block: ThrottleConfig | None = state.value(THROTTLE_ROW)
    if block is None:  # on_throttle_hard alone: the block's defaults (its class loaded now)
        from little_loops.fsm.definition.model.state_guards import ThrottleConfig

        block = ThrottleConfig()
    limit = block.hard_at
    if count > limit:
        watch.stay = [None, 0]
        return watch.stall(THROTTLE, name, limit, count - 1)
    return None


def _repeated_failure(watch: StallWatch, seen: Seen) -> Stall | None:
    """The same (state, exit code, verdict) `window` steps in a row, or `recurrent_window`
    times in all; a change to one of `progress_paths` since the state's last step resets."""
    config = watch.fsm.circuit.repeated_failure if watch.fsm.circuit is not None else None
    if config is None:
        return None
    name = seen.state
    if config.progress_paths:
        mark = _progress_mark(watch, config.progress_paths, config.exclude_paths)
        before = watch.marks.get(name)
        if before is not None and before != mark:
            watch.repeats, watch.marks = [], {}
        watch.marks[name] = mark
    triple = [name, seen.exit_code, seen.verdict]
    if watch.repeats and watch.repeats[-1] != triple:
        watch.repeats = []
    watch.repeats = [*watch.repeats, triple][-config.window :]
    if len(watch.repeats) >= config.window:
        watch.repeats = []
        return watch.stall(REPEATED_FAILURE, name, config.window, config.window)
    if config.recurrent_window is not None:
        key = f"{name}\0{seen.exit_code}\0{seen.verdict}"
        watch.seen_triples[key] = watch.seen_triples.get(key, 0) + 1
        if watch.seen_triples[key] >= config.recurrent_window:
            count, watch.seen_triples[key] = watch.seen_triples[key], 0
            return watch.stall(REPEATED_FAILURE, name, config.recurrent_window, count)
    return None


@dataclass(frozen=True)
class Detector:
    """A stall detector: when it looks, how to look, what a run it ended says."""

    moment: str  # AT_PASS, AT_ENTRY or AT_VERDICT
    look: Callable[[StallWatch, Seen], Stall | None]
    says: str  # formatted with state, count and limit


# The stall detectors, by the key a loop's `stall:` sets each one's limit with.
STALL_DETECTORS: dict[str, Detector] = {
    NO_CHANGE_PASSES: Detector(
        AT_PASS,
        _no_change_passes,
        "{count} passes in a row changed nothing in the git working tree",
    ),
    MAX_VISITS: Detector(
        AT_ENTRY, _max_visits, "state '{state}' was entered {count} times (more than {limit})"
    ),
    SAME_RESULT: Detector(
        AT_VERDICT,
        _same_result,
        "state '{state}' gave the same verdict on the same output {count} times in a row",
    ),
    THROTTLE: Detector(
        AT_ENTRY,
        _throttle,
        f"state '{{state}}' ran its action {{count}} times in a row ({THROTTLE})",
    ),
    REPEATED_FAILURE: Detector(
        AT_VERDICT,
        _repeated_failure,
        "state '{state}' ended with the same exit code and verdict {count} times",
    ),
}
