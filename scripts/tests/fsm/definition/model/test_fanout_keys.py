"""The rows of definition/model/fanout_keys.py: read without the block's dataclasses, which
fanout.py holds (and names these rows too)."""

from __future__ import annotations

import subprocess
import sys

from little_loops.fsm.definition.model import fanout, fanout_keys, key_rows

PROBE = "import sys, little_loops.fsm.definition.model.fanout_keys; print(sorted(sys.modules))"


def test_its_rows_load_without_the_dataclasses() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert "'little_loops.fsm.definition.model.fanout_keys'" in loaded
    assert "'little_loops.fsm.definition.model.fanout'" not in loaded


def test_the_model_module_names_the_same_rows_that_key_rows_gathers() -> None:
    assert fanout.KEYS is fanout_keys.KEYS
    assert all(row in key_rows.ROWS for row in fanout_keys.KEYS)
