"""The docs of the keys of the token and stall evaluators, rate-limit routing and circuit:."""

from __future__ import annotations

# Spliced into key_docs.EVALUATE_KEYS (the evaluators that read a key are added in front).
EVALUATE_EXTRA_KEYS: dict[str, str] = {
    "key": "read the number of the last KEY=NUMBER field of the output instead of all of it.",
    "error_patterns": (
        "texts that, when the pattern is not found, make the verdict error instead of failure."
    ),
    "line": "which non-empty output line is the token: last (the default), first or an index.",
    "scope": "the paths whose `git diff --stat` counts. Default: the whole working tree.",
    "max_stall": "rounds in a row without progress before the verdict is failure. Default 1.",
    "history_file": (
        "the file of one number a line the loop appends each round. Default "
        "${context.run_dir}/.score_history (score_stall), .open_questions_history "
        "(open_question_stall)."
    ),
    "epsilon": (
        "the least change over the best so far that counts as progress. Default 0.5 "
        "(score_stall), 0 (open_question_stall)."
    ),
}

# Spliced into key_docs.STATE_KEYS: a state's own rate-limit waits, pruning profile, throttle.
STATE_RUNTIME_KEYS: dict[str, str] = {
    "max_rate_limit_retries": (
        "Waits of the short tier before the long ladder (default 3 when "
        "rate_limit_backoff_base_seconds is set)."
    ),
    "rate_limit_backoff_base_seconds": (
        "Seconds of the first short-tier wait; each next one is twice as long. Default 30 when "
        "max_rate_limit_retries is set."
    ),
    "rate_limit_max_wait_seconds": "This state's rate_limit.max_wait: its waits in all.",
    "rate_limit_long_wait_ladder": "This state's rate_limit.ladder, after the short tier.",
    "on_rate_limit_exhausted": (
        "The state to go to when the waits reach their max_wait; none: the run ends with an error."
    ),
    "pruning_profile": (
        "{enabled, name, suppress_catalog, suppress_claude_md}: the agent's session gets "
        "LL_AUTOMATION=1 and LL_AUTOMATION_PROFILE=name (hooks trim what they add); the "
        "suppress_* flags are declarations only."
    ),
    "throttle": (
        "{hard_max (default 12), warn_max, normal_max}: the action runs at most hard_max times "
        "in a row in a self-loop, then the run goes to on_throttle_hard (else on_error, else it "
        "ends as a stall)."
    ),
    "on_throttle_hard": "The state to go to when the throttle's hard_max is reached.",
}

# Spliced into key_docs.LOOP_KEYS.
LOOP_RUNTIME_KEYS: dict[str, str] = {
    "circuit": (
        "Breakers (little-loops'): repeated_failure: {window: N, on_repeated_failure: STATE or "
        "abort, recurrent_window, progress_paths, exclude_paths}; the same state, exit code and "
        "verdict N steps in a row goes there (abort: the run ends as a stall)."
    ),
    "artifact_versioning": (
        "A declaration (little-loops'): the loop keeps each pass's artifacts itself (a "
        "snapshot state); ll-loop keeps and shows it and changes nothing. Default false."
    ),
}
