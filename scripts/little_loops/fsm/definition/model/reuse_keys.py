"""The reuse keys in the key tables: known to did-you-mean and the JSON Schema, resolved before.

`import:`, `fragments:`, `from:`, `flow:`, `state_defs:` and a state's `fragment:` are gone
from a loop by the time its keys are checked (`loopdoc` resolves them while reading the
file); they are listed with the other keys so that a typo of one is named, and so that an
editor knows them.
"""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import LOOP, STATE, Key, checks_at
from little_loops.fsm.definition.reading.loopdoc import REUSE_STATE_KEY
from little_loops.fsm.values.value_checks import Check, mapping, optional, string, string_list

IMPORT_KEY = "import"  # the fragment libraries a loop (or a library) uses
FRAGMENTS_KEY = "fragments"  # the fragments a loop or a fragment library gives
# The loop's reuse keys, one row each: no model field (gone before the model is made).
LOOP_ROWS: tuple[Key, ...] = (
    Key(
        IMPORT_KEY,
        (LOOP,),
        optional(string_list),
        "Fragment library files (a top-level fragments: mapping) whose fragments the states "
        "may name, from this file's folder, then the project's .loops/; later ones win.",
    ),
    Key(
        FRAGMENTS_KEY,
        (LOOP,),
        optional(mapping),
        "Fragments of this file, by name: partial states that a state names with fragment:; "
        "they replace imported fragments of the same name.",
    ),
    Key(
        "from",
        (LOOP,),
        optional(string),
        "A base loop (its name: NAME.yaml from this file's folder, then .loops/) this loop is "
        "laid over: mappings merge key by key, other values of this file replace the base's.",
    ),
    Key(
        "flow",
        (LOOP,),
        optional(string_list),
        "States as a chain: each NAME goes on to the next (next:), NAME?YES:NO routes yes/no "
        "to YES/NO, the last is a terminal; instead of states:.",
    ),
    Key(
        "state_defs",
        (LOOP,),
        optional(mapping),
        "The settings of the states of flow:, by name, merged over what flow: makes.",
    ),
)
REUSE_LOOP_CHECKS: dict[str, Check] = checks_at(LOOP, LOOP_ROWS)
# A state's reuse key, one row (key_tables splices it into a state's keys; no field of the
# model's holds it, so it is not in key_rows.ROWS).
STATE_ROWS: tuple[Key, ...] = (
    Key(
        REUSE_STATE_KEY,
        (STATE,),
        optional(string),
        "A fragment (imported or from fragments:) whose keys this state takes; its own keys "
        "win at every level, and with: binds the fragment's parameters (${param.NAME}).",
    ),
)
REUSE_STATE_CHECKS: dict[str, Check] = checks_at(STATE, STATE_ROWS)
