from __future__ import annotations

import os

from little_loops.fsm.processes.pids import pid_alive, process_start_ticks


def test_this_process_is_alive_and_keeps_its_start_time() -> None:
    me = os.getpid()
    assert pid_alive(me)
    assert pid_alive(me, process_start_ticks(me))


def test_numbers_that_cannot_be_a_pid_are_not_alive() -> None:
    # A corrupt state or lock file can hold any integer; none may raise or signal a group.
    for pid in (None, 0, -1, 2**31, 2**64, 2**70):
        assert pid_alive(pid) is False, pid
