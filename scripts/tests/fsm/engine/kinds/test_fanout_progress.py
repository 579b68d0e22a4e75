"""What a fan-out state records of its progress as it runs (for a resume): each event's
recorded change is that event, not every branch again (the log grew with N squared)."""

from __future__ import annotations

import json
from pathlib import Path

from support import fanout
from support.llproc import events, ll_loop, state

from little_loops.fsm.fanout.children import PARENT_ENV

ONE = """\
name: one
context:
  item: ""
initial: work
states:
  work:
    action: "true"
    next: done
  done:
    terminal: true
"""


def test_each_branch_event_records_itself_only_and_the_run_still_ends_right(
    tmp_path: Path,
) -> None:
    items = [str(i) for i in range(10)]
    loop = fanout.map_loop(items, max_concurrency=3).replace("loop: fix", "loop: one")
    root = fanout.project(tmp_path, fan=loop, one=ONE)
    done = ll_loop(root, "run", "fan", timeout=180)
    assert done.returncode == 0, done.stderr
    logged = [e for e in events(root, "fan") if e["event"] in ("branch_start", "branch_finish")]
    assert len(logged) == 20
    sizes = [len(json.dumps(e.get("saved") or {})) for e in logged]
    # The last branch's events record no more than the first's (give or take its numbers).
    assert max(sizes[-4:]) < 2 * max(sizes[:4]), sizes
    captured = state(root, "fan")["captured"]["fan"]
    assert captured["verdict"] == "success", captured["branches"]
    assert [b["item"] for b in captured["branches"]] == items


def test_the_progress_is_read_in_the_one_place_both_ways_it_was_written() -> None:
    """`progress_of` is the one reader of a running fan-out's `${captured.STATE}`: the
    resume and the viewers (status, watch, report) read it through it, in the list form
    and in the mapping form of an earlier version; anything else is no progress."""
    from little_loops.fsm.engine.kinds.fanout import PROGRESS_KEY, progress_of

    event = {"event": "branch_start", "index": 0}
    assert progress_of([{PROGRESS_KEY: 2}, event, "junk"]) == (2, [event])
    assert progress_of({PROGRESS_KEY: {"visit": 1, "events": [event, 3]}}) == (1, [event])
    for junk in (None, [], ["x"], [{PROGRESS_KEY: "1"}], {PROGRESS_KEY: {"visit": 1}}, {}):
        assert progress_of(junk) is None
    assert progress_of({"branches": [], "stopped_by": ""}) is None  # its results, not progress


def test_a_branch_s_start_leaves_its_ended_siblings_files_for_the_fan_out_to_read(
    tmp_path: Path,
) -> None:
    """A new worktree run forgets the files of earlier ones whose worktree is gone, but a
    fan-out's branch does not: a sibling that ended (its worktree removed, as it changed
    nothing) is read by the fan-out after, which failed it as 'its end not saved' when a
    slower sibling's start had deleted them first."""
    root = fanout.project(tmp_path, one=ONE)

    def ended() -> list[str]:
        return sorted(p.name for p in (root / ".loops" / ".running").glob("one@*.state.json"))

    assert ll_loop(root, "run", "one", "--worktree", timeout=120).returncode == 0
    (first,) = ended()
    as_branch = ll_loop(root, "run", "one", "--worktree", timeout=120, env={PARENT_ENV: "1"})
    assert as_branch.returncode == 0, as_branch.stderr
    assert first in ended()  # kept for the fan-out
    assert ll_loop(root, "run", "one", "--worktree", timeout=120).returncode == 0
    assert first not in ended()  # a run of its own forgets it (the archive keeps it)
