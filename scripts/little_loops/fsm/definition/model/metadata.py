"""Keys that describe a loop for people and what a run reads from its command line.

`description`, `category`, `labels`, `visibility` and `commands` are metadata: kept in the
model and shown by `ll-loop list`, `ll-loop graph --info` and the run report; they change
nothing a run does. `input_key` names the context key a run's free-form VALUE goes to (a
loop that declares no parameters), `required_inputs` the context keys that must not be
empty when a run starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.definition.model.key_row import LOOP, STATE, Key, checks_at
from little_loops.fsm.definition.model.lint_flags import LINT_FLAG_KEYS
from little_loops.fsm.values.value_checks import (
    Check,
    UnknownKey,
    check_with,
    describe,
    one_of,
    optional,
    pattern,
    string,
    string_list,
    text,
)

# `visibility:`: who the loop is for. `ll-loop list` shows public loops (the default);
# `--all` shows internal ones (run only as another loop's sub-loop) and examples too.
PUBLIC = "public"
VISIBILITIES: tuple[str, ...] = (PUBLIC, "internal", "example")
# The context key a run's free-form VALUE goes to when the loop names none.
DEFAULT_INPUT_KEY = "input"
# The context key of the run's own scratch folder, made by the runner before the first step.
RUN_DIR_KEY = "run_dir"
# A short hash of the free-form input (`input_hash`): a loop's checkpoint files compare it.
INPUT_HASH_KEY = "input_hash"
# Context values a run starts with unless the loop or the run gives them (little-loops seeds
# them from its project config; these are its defaults: confidence gates, no design tokens).
RUNNER_DEFAULTS: dict[str, Any] = {
    "readiness_threshold": 85,
    "outcome_threshold": 65,
    "design_tokens_context": "",
}
# `commands:` entries: a command line to show, and what it does.
COMMAND_KEYS: tuple[str, ...] = ("cmd", "comment")
_KEY_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"


@check_with(
    {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["cmd"],
            "properties": {"cmd": {"type": "string"}, "comment": {"type": "string"}},
            "additionalProperties": False,
        },
    }
)
def command_list(value: object) -> str | None:
    """`commands:`: a list of {cmd, comment} mappings."""
    if not isinstance(value, list):
        return f"expected a list of {{cmd, comment}} entries, got {describe(value)}"
    for item in value:
        if not isinstance(item, Mapping):
            return f"expected a {{cmd, comment}} entry, got {describe(item)} in the list"
        unknown = [str(key) for key in item if key not in COMMAND_KEYS]
        if unknown:
            said = f"unknown key '{unknown[0]}' in a command entry (allowed: cmd, comment)"
            return UnknownKey(said)
        if string(item.get("cmd")) is not None:
            return "a command entry needs cmd: the command line to show"
        if item.get("comment") is not None and text(item.get("comment")) is not None:
            return f"a command's comment must be text, got {describe(item.get('comment'))}"
    return None


# The loop's metadata and inputs, one row each (in key_tables.LOOP_KEYS after the run keys);
# the FSMLoop fields of the same names follow its others.
LOOP_ROWS: tuple[Key, ...] = (
    Key(
        "description",
        (LOOP,),
        optional(text),
        "What the loop does, for people: `ll-loop list` shows its first line.",
    ),
    Key(
        "category",
        (LOOP,),
        optional(string),
        "A topic for `ll-loop list --category`; shown by list and the report.",
    ),
    Key(
        "labels",
        (LOOP,),
        optional(string_list),
        "Tags for `ll-loop list --label`; shown by list and the report.",
        default=[],
    ),
    Key(
        "visibility",
        (LOOP,),
        one_of(VISIBILITIES),
        "public (default), internal (run as another loop's sub-loop) or example: "
        "`ll-loop list` shows public loops, `--all` every loop.",
        default=PUBLIC,
    ),
    Key(
        "commands",
        (LOOP,),
        optional(command_list),
        "Command lines worth knowing for this loop ({cmd, comment} each), shown by "
        "`ll-loop graph --info`.",
        default=[],
    ),
    Key(
        "input_key",
        (LOOP,),
        pattern(_KEY_NAME, "a context key name (letters, digits, '_' and '-')"),
        "The context key a run's free-form VALUE goes to when the loop declares no "
        'parameters (`ll-loop run NAME "text"`); default input.',
        default=DEFAULT_INPUT_KEY,
    ),
    Key(
        "required_inputs",
        (LOOP,),
        optional(string_list),
        "Context keys that must not be empty when a run starts (e.g. the input_key); the "
        "run is refused in one line otherwise.",
        default=[],
    ),
)
METADATA_LOOP_KEYS: dict[str, Check] = checks_at(LOOP, LOOP_ROWS)
# A state's metadata key, one row (key_tables splices it into a state's keys; not in
# key_rows.ROWS, which lint_flags, imported above, reads).
STATE_ROWS: tuple[Key, ...] = (
    Key(
        "description",
        (STATE,),
        optional(text),
        "What the state does, for people: shown by `ll-loop graph --info`.",
    ),
)
FLAGS: tuple[str, ...] = tuple(LINT_FLAG_KEYS)  # FSMLoop.lint_ok holds these keys


def listed(keys: tuple[str, ...]) -> list[str]:
    """*keys* as an unknown key's message lists them: the lint flags as one `*_ok flags`."""
    flags = [key for key in keys if key in LINT_FLAG_KEYS]
    return [key for key in keys if key not in LINT_FLAG_KEYS] + ["*_ok flags"] * bool(flags)


def fields_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """The FSMLoop fields of these keys and of the `*_ok` flags in a (checked) definition;
    a key set to null is left out (its field keeps its default)."""
    fields = {key: data[key] for key in METADATA_LOOP_KEYS if data.get(key) is not None}
    fields["lint_ok"] = {key: data[key] for key in LINT_FLAG_KEYS if data.get(key) is not None}
    return fields


def kept(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of these fields among a loop's fields not at their defaults (to_dict)."""
    return {key: fields[key] for key in METADATA_LOOP_KEYS if key in fields}


def runner_keys(has_parameters: bool, input_key: str, required: list[str]) -> list[str]:
    """Context keys a loop may read that a run fills in: its scratch folder, the free-form
    VALUE's key (a loop without parameters), the required inputs."""
    free = [] if has_parameters else [input_key, INPUT_HASH_KEY]
    return [RUN_DIR_KEY, *free, *required, *RUNNER_DEFAULTS]


def reads_context(loop: Mapping[str, Any], key: str) -> bool:
    """Whether the loop (as data, `FSMLoop.to_dict`) has a `${context.KEY...}` reference."""
    return _reads(_as_text(loop), key)


def _as_text(loop: Mapping[str, Any]) -> str:
    """The loop's data as one text, for `_reads` (a big loop's is big: made once per use)."""
    import json

    return json.dumps(loop, ensure_ascii=False, default=str)


def _reads(text: str, key: str) -> bool:
    """Whether *text* (`_as_text` of a loop) has a `${context.KEY...}` reference."""
    import re

    return re.search(rf"\$\{{(?:[a-z]+:)?context\.{re.escape(key)}\b", text) is not None


def runner_values(
    context: Mapping[str, Any], input_key: str, loop: Mapping[str, Any]
) -> dict[str, Any]:
    """The values a run adds to *context* for the keys the *loop* reads (those the
    context has already are kept): the defaults above, the input's hash when it is text."""
    wanted = [key for key in RUNNER_DEFAULTS if key not in context]
    text = context.get(input_key)
    hashed = INPUT_HASH_KEY not in context and isinstance(text, str)
    if not wanted and not hashed:
        return {}
    loop_text = _as_text(loop)  # once for every key looked for
    added = {key: RUNNER_DEFAULTS[key] for key in wanted if _reads(loop_text, key)}
    if hashed and isinstance(text, str) and _reads(loop_text, INPUT_HASH_KEY):
        import hashlib  # only a loop that reads the hash loads it (OpenSSL: start-up time)

        added[INPUT_HASH_KEY] = hashlib.sha256(text.encode()).hexdigest()[:12]
    return added


def first_line(description: str | None) -> str:
    """The first non-empty line of a description ("" for none): what a listing shows."""
    for line in (description or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def metadata_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """A loop file's metadata as `list --json` and the report show it (raw data: a loop
    that fails validation is still listed)."""
    labels = data.get("labels")
    visibility = data.get("visibility")
    return {
        "description": first_line(data.get("description"))
        if isinstance(data.get("description"), str)
        else "",
        "category": data.get("category") if isinstance(data.get("category"), str) else "",
        "labels": [str(label) for label in labels] if isinstance(labels, list) else [],
        "visibility": visibility if visibility in VISIBILITIES else PUBLIC,
    }
