"""The `*_ok` flags of a loop: each names one lint it silences, here or in little-loops.

A flag set to true on a loop silences exactly the check of ours it names (`CHECKS`): its
problems are dropped for that loop. A flag whose lint we do not have is accepted and does
nothing (`validate` has no such lint to silence). `ll-loop validate --compat` and
`ll-loop run --compat` turn every stricter check (`STRICTER`) into a warning instead.
"""

from __future__ import annotations

from little_loops.fsm.definition.model.key_rows import ROWS
from little_loops.fsm.values.value_checks import Check, boolean

# Our stricter checks: the ones a loop written for little-loops may fail, each a name that
# a problem carries (ValidationError.check) and the one line saying how to fix it.
ROUTE_NEVER_GIVEN = "route-never-given"
UNQUOTABLE_REFERENCE = "unquotable-reference"
UNDEFINED_CONTEXT = "undefined-context"
UNDEFINED_CAPTURE = "undefined-capture"
UNKNOWN_EVALUATE_KEY = "unknown-evaluate-key"
NOTHING_TO_EVALUATE = "nothing-to-evaluate"
UNKNOWN_KEY = "unknown-key"
CLAUDE_SUBAGENT = "claude-subagent"
STRICTER: dict[str, str] = {
    ROUTE_NEVER_GIVEN: "use a verdict it gives, remove the key, or set partial_route_ok: true",
    UNQUOTABLE_REFERENCE: "set unsafe_context_interpolation_ok: true to paste it as written",
    UNDEFINED_CONTEXT: "declare it under context: or parameters:, or write ${context.KEY?}",
    UNDEFINED_CAPTURE: (
        "capture it before, write ${captured.NAME?}, or set capture_reachability_ok: true"
    ),
    UNKNOWN_EVALUATE_KEY: "remove it, or set evaluate_unknown_keys_ok: true",
    # little-loops evaluates the empty text there: a pattern never found, a number never read.
    NOTHING_TO_EVALUATE: "give evaluate a source (such as ${prev.output}) or the state an action",
    # A key of a loop or a state that we do not know: little-loops ignores it without a word.
    # Its message already says the fix (did-you-mean, or the keys there are): none added.
    UNKNOWN_KEY: "",
    # A state's `agent:` names the agent CLI here; little-loops hands it to Claude Code.
    CLAUDE_SUBAGENT: "for Claude Code's subagent of that name write claude: {agent: NAME}",
}
# How a stricter check's message ends: its fix, then the way to run the loop as written.
FIX = "; {fix}, or run with --compat"

# Every `*_ok` flag of little-loops' loops -> the check of ours it silences (None: a lint
# we do not have, so the flag is accepted and changes nothing). One table, one place.
CHECKS: dict[str, str | None] = {
    "partial_route_ok": ROUTE_NEVER_GIVEN,
    "unsafe_context_interpolation_ok": UNQUOTABLE_REFERENCE,
    "capture_reachability_ok": UNDEFINED_CAPTURE,
    "evaluate_unknown_keys_ok": UNKNOWN_EVALUATE_KEY,
    "meta_self_eval_ok": None,  # a meta-loop needs a non-LLM evaluator (MR-1, MR-2)
    "shared_state_ok": None,  # files under .loops/tmp/ shared by runs (MR-3)
    "artifact_versioning_ok": None,  # a harness loop overwrites its artifact (MR-5)
    "generator_fix_ok": None,  # a shell state patches a generator's file (MR-6)
    "bash_default_ok": None,  # bash's ${a.b:-x} in an action (MR-7)
    "evidence_contract_ok": None,  # a judge prompt that asks for no evidence (MR-8)
    "shell_pid_ok": None,  # $$( or $$VAR in a shell action (MR-9)
    "parse_swallow_ok": None,  # inline Python that swallows a JSON error (MR-10)
    "policy_dims_scored_ok": None,  # a rubric dimension no policy scores
    "terminal_action_ok": None,  # an action on a terminal state
    "abandonment_verdict_ok": None,  # an abandonment nobody reports (MR-13)
    # An unknown value of a key whose row names the flag (key_row.Key.lint_flag).
    **{row.lint_flag: None for row in ROWS if row.lint_flag is not None},
    "haiku_generator_ok": None,  # a generator state on a small model
}
# Spliced into key_tables.LOOP_KEYS; FSMLoop keeps them in one field (`lint_ok`).
LINT_FLAG_KEYS: dict[str, Check] = dict.fromkeys(CHECKS, boolean)


# The one flag that also changes a run: a reference our quoting refuses is pasted as text.
PASTE_FLAG = "unsafe_context_interpolation_ok"


def as_written(flags: dict[str, bool]) -> dict[str, bool]:
    """*flags* of a loop run with `--compat`: each flag that changes a run is on."""
    return {**flags, PASTE_FLAG: True}


def silenced(flags: dict[str, bool]) -> set[str]:
    """The checks of ours the loop's true flags silence."""
    return {check for flag, on in flags.items() if on and (check := CHECKS.get(flag))}


def flag_doc(flag: str) -> str:
    """What the flag does, in one sentence (for the JSON Schema and editor hovers)."""
    check = CHECKS[flag]
    if check is None:
        return "Silences a little-loops lint that ll-loop does not have: accepted, no effect."
    return f"true: this loop's '{check}' problems are not reported (see docs/loop-files.md)."
