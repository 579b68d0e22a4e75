"""Tell an action written as a sentence for Claude from a bash command, for a hint."""

from __future__ import annotations

import re

from little_loops.fsm.definition.model.typed import StateConfig

# What to do about it; validate's warning and the run's exit-127 hint both end with it.
PROMPT_HINT = "add action_type: prompt to send it to Claude"
# Words bash runs without looking on PATH.
_BASH_WORD_LIST = (
    "if then else elif fi case esac for select while until do done in function time coproc "
    "! [[ ]] { } . : [ alias bg bind break builtin caller cd command compgen complete compopt "
    "continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash "
    "help history jobs kill let local logout mapfile popd printf pushd pwd read readarray "
    "readonly return set shift shopt source suspend test times trap true type typeset ulimit "
    "umask unalias unset wait"
)
_BASH_WORDS = frozenset(_BASH_WORD_LIST.split())
# Patterns as text: `re` compiles them on first use, not when validate starts.
_REFERENCE = r"\$\{[^}]*\}"
_SHELL_SYNTAX = r"[|&<>$`=(){}\[\]\\*]"
_FIRST = r"[A-Z][a-z]+[.,:;!?]?"  # a capital, as a sentence starts and a command does not
_PLAIN = r"[A-Za-z0-9][A-Za-z0-9'’-]*[.,:;!?]?|[-–—]"
_MIN_WORDS = 3


def reads_like_a_sentence(action: str) -> bool:
    """True when *action* is prose (`Fix the failing test`): three or more words besides
    `${...}` references, mostly plain ones, no shell syntax, starting with a capitalised
    word bash cannot run (not a builtin or keyword, not on PATH, not a path)."""
    text = action.strip()
    if text.startswith("${"):
        return False  # the command is only known at run time
    if "${" in text:  # (most actions have no reference: no pattern to run then)
        text = re.sub(_REFERENCE, " ", text)
    words = text.split()
    if len(words) < _MIN_WORDS or re.search(_SHELL_SYNTAX, text):
        return False  # (the cheap test first: most commands are short)
    if not re.fullmatch(_FIRST, words[0]):
        return False
    first = words[0]
    if first in _BASH_WORDS:
        return False
    import shutil  # (here: it imports bz2 and lzma, which validate otherwise never needs)

    if shutil.which(first) is not None:
        return False
    plain = sum(1 for word in words if re.fullmatch(_PLAIN, word))
    return plain * 4 >= len(words) * 3


def sentence_message(action: str) -> str:
    """validate's warning for an action that reads like a sentence but would run in bash."""
    first = action.split(maxsplit=1)[0]
    return (
        f"this reads like a sentence for Claude, but with no action_type it runs in bash, "
        f"which has no command '{first}'; {PROMPT_HINT}"
    )


def sentence_warning(state: StateConfig) -> str | None:
    """validate's warning (and `run`'s, once before the first step) for *state*: its action
    reads like a sentence, and with no action_type it runs in bash; None otherwise."""
    action = state.action or ""
    if state.action_type is None and action and reads_like_a_sentence(action):
        return sentence_message(action)
    return None


def cannot_run_hint(action: str, *, not_found: bool) -> str:
    """What the run display says when bash could not run the shell *action*'s command:
    found no such command (exit 127: validate's warning when the action reads like a
    sentence) or could not execute it (exit 126)."""
    if not not_found:
        return (
            "exit 126: bash found the command but could not run it (see stderr above); make "
            "the file executable (chmod +x FILE) or run it with its interpreter (bash FILE)"
        )
    if reads_like_a_sentence(action):
        return sentence_message(action)
    return (
        "exit 127: bash found no such command (see stderr above); check its spelling and "
        f"that it is installed and on PATH, or, if the action is meant for Claude, {PROMPT_HINT}"
    )
