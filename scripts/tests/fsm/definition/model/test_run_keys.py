"""The keys of run_keys.py: each is checked, documented, and a field of the model."""

from __future__ import annotations

from little_loops.fsm.definition.checks.key_tables import LOOP_KEYS, STATE_KEYS
from little_loops.fsm.definition.model.run_keys import (
    HANDOFF_MODES,
    RUN_LOOP_KEYS,
    RUN_STATE_KEYS,
    SUBLOOP_STATE_KEYS,
)
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.validate import key_docs


def test_every_key_is_checked_and_documented() -> None:
    assert set(RUN_LOOP_KEYS) <= set(key_docs.LOOP_KEYS)
    assert set(RUN_STATE_KEYS) <= set(key_docs.STATE_KEYS)
    assert set(RUN_LOOP_KEYS) <= set(LOOP_KEYS)
    assert set(RUN_STATE_KEYS) <= set(STATE_KEYS)
    assert set(SUBLOOP_STATE_KEYS) <= set(RUN_STATE_KEYS)


def test_the_checks_refuse_what_upstream_refuses() -> None:
    assert RUN_LOOP_KEYS["on_handoff"]("spawn") is None
    assert RUN_LOOP_KEYS["on_handoff"]("later") is not None
    assert RUN_LOOP_KEYS["singleton"]("yes") is not None
    assert RUN_STATE_KEYS["tamper_guard"]("revert") is None
    assert RUN_STATE_KEYS["tamper_guard"]("ignore") is not None
    assert RUN_STATE_KEYS["context_passthrough"](True) is None
    assert RUN_STATE_KEYS["prepatch_check"]("warn") is None
    assert RUN_STATE_KEYS["prepatch_check"]("revert") is not None
    assert RUN_STATE_KEYS["prepatch_check"](None) is None


def test_the_model_reads_and_writes_them() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "on_handoff": "terminate",
            "singleton": True,
            "states": {"a": {"loop": "child", "context_passthrough": True, "terminal": False}},
        }
    )
    assert (fsm.on_handoff, fsm.singleton) == ("terminate", True)
    assert fsm.states["a"].context_passthrough is True
    written = fsm.to_dict()
    assert (written["on_handoff"], written["singleton"]) == ("terminate", True)
    assert written["states"]["a"]["context_passthrough"] is True
    assert StateConfig().session_mode is None
    assert "pause" in HANDOFF_MODES
