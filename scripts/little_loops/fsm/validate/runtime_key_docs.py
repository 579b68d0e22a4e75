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
