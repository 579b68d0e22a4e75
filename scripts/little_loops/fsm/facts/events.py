"""The names of the events a run writes to its events file: one enum, read by every stage.

`Event` is a `StrEnum`, so a member is equal to (and serialises as) the name on disk:
`Event.LOOP_COMPLETE == "loop_complete"`. The shapes of the events are in engine/events.py.
"""

from __future__ import annotations

from enum import StrEnum


class Event(StrEnum):
    """Each event a run can emit, in the order a step usually emits them."""

    LOOP_START = "loop_start"
    STATE_ENTER = "state_enter"
    ATTEMPT = "attempt"
    ROLLBACK = "rollback"
    ACTION_START = "action_start"
    SESSION_LOST = "session_lost"
    ACTION_COMPLETE = "action_complete"
    AGENT_SWITCH = "agent_switch"
    RATE_LIMIT_WAIT = "rate_limit_wait"
    GUARDS = "guards"
    EVALUATE = "evaluate"
    PREPATCH_CHECK_FLAGGED = "prepatch_check_flagged"
    CHECKPOINT = "checkpoint"
    RETRY_WAIT = "retry_wait"
    APPROVAL_WAIT = "approval_wait"
    APPROVAL = "approval"
    PULL_REQUEST = "pull_request"
    CHECKS_WAIT = "checks_wait"
    CHECKS = "checks"
    STALL = "stall"
    BRANCH_START = "branch_start"  # a fan-out's branch started (fsm/fanout)
    BRANCH_FINISH = "branch_finish"  # a fan-out's branch ended: outcome, verdict, cost
    FANOUT_JOIN = "fanout_join"  # a fan-out's branches joined into its verdict
    FANOUT_MERGE = "fanout_merge"  # a fan-out's branches merged (or refused, kept)
    ROUTE = "route"
    LOOP_COMPLETE = "loop_complete"
