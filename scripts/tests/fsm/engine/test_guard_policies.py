"""A state's guard policies, read at every step without loading the guards themselves."""

from __future__ import annotations

import subprocess
import sys

from little_loops.fsm.definition.model.run_keys import (
    PREPATCH_ALLOW,
    PREPATCH_FAIL,
    TAMPER_ALLOW,
    TAMPER_FAIL,
)
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.guard_policies import prepatch_policy, tamper_policy


def test_a_states_own_tamper_policy_wins_over_the_loops_an_actionless_state_has_none() -> None:
    fsm = FSMLoop("x", "a", {}, tamper_guard=TAMPER_FAIL)
    assert tamper_policy(fsm, StateConfig(action="true")) == TAMPER_FAIL
    assert tamper_policy(fsm, StateConfig(action="true", tamper_guard=TAMPER_ALLOW)) == TAMPER_ALLOW
    assert tamper_policy(fsm, StateConfig(terminal=True)) is None
    assert tamper_policy(FSMLoop("x", "a", {}), StateConfig(action="true")) is None


def test_a_states_own_prepatch_policy_wins_over_the_loops_an_actionless_state_has_none() -> None:
    fsm = FSMLoop("x", "a", {}, prepatch_check=PREPATCH_FAIL)
    assert prepatch_policy(fsm, StateConfig(action="true")) == PREPATCH_FAIL
    own = StateConfig(action="true", prepatch_check=PREPATCH_ALLOW)
    assert prepatch_policy(fsm, own) == PREPATCH_ALLOW
    assert prepatch_policy(fsm, StateConfig(terminal=True)) is None
    assert prepatch_policy(FSMLoop("x", "a", {}), StateConfig(action="true")) is None


def test_reading_the_policies_loads_neither_guard() -> None:
    probe = (
        "import sys\n"
        "import little_loops.fsm.engine.guard_policies\n"
        "print(sorted(m for m in sys.modules if m.endswith(('.tamper', '.prepatch'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
