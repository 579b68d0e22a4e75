"""The seed path `little_loops.fsm.persistence`: run files by their old names."""

from __future__ import annotations

from support.project import LoopProject

from little_loops.fsm.persistence import (
    LoopState,
    StatePersistence,
    get_loop_history,
    list_running_loops,
)

LOOP = """\
    name: kept
    initial: a
    states:
      a:
        action: "true"
        next: done
      done:
        terminal: true
"""


def test_a_finished_runs_files_read_through_the_seed_path(loop_project: LoopProject) -> None:
    loop_project.write("kept", LOOP)
    assert list_running_loops(loop_project.loops) == []
    assert loop_project.run("run", "kept").code == 0
    state = StatePersistence("kept", loop_project.loops).load_state()
    assert isinstance(state, LoopState)
    assert (state.current_state, state.status) == ("done", "completed")
    events = get_loop_history("kept", loop_project.loops)
    assert [events[0]["event"], events[-1]["event"]] == ["loop_start", "loop_complete"]
    assert [info.loop_name for info in list_running_loops(loop_project.loops)] == ["kept"]
