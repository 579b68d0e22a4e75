"""The ralph paradigm: give Claude the same prompt each pass until it promises it is done."""

from __future__ import annotations

import re
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.paradigms.assemble import DONE, build, loop_settings
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS, SpecReader

RALPH_KEYS = ("paradigm", "name", "prompt", "prompt_file", "promise", "gates", *LOOP_SETTINGS)
DEFAULT_PROMISE = "<promise>DONE</promise>"
WORK = "work"
READ_PROMPT = "read_prompt"
PROMPT_CAPTURE = "prompt"

# What the prompt is told each pass; `{promise}` is the loop's promise, `{checks}` says
# which checks must pass too. The feedback is the last verdict's result: a failed check's
# output, or Claude's own last answer when it made no promise.
INSTRUCTIONS = """\
You are working in a loop: this same prompt comes back to you each pass until the task is \
done, and your files keep what you did in earlier passes. When, and only when, the whole \
task is complete{checks}, end your answer with this line:
{promise}
Never write that line otherwise.

What happened in the last pass (empty in the first): ${{prev.state}} gave \
'${{prev.verdict}}' (exit ${{prev.exit_code}}):
${{prev.output}}"""


def compile_ralph(spec: dict[str, Any]) -> FSMLoop:
    """`work -> (promise made: gate_1 -> ... -> done | not made: work)`; a failed gate goes
    back to `work`, whose prompt then shows the gate's output. With `prompt_file:`, a
    `read_prompt` shell step reads the file before each pass, so edits to it count."""
    reader = SpecReader("paradigm 'ralph'", spec)
    reader.check_keys(RALPH_KEYS)
    if ("prompt" in spec) == ("prompt_file" in spec):
        raise reader.error("give exactly one of 'prompt' (the text) and 'prompt_file' (a path)")
    name = reader.string("name")
    promise = reader.string("promise") if "promise" in spec else DEFAULT_PROMISE
    gates = reader.strings("gates") if "gates" in spec else []
    start = READ_PROMPT if "prompt_file" in spec else WORK
    checks = f" and these checks pass ({', '.join(f'`{g}`' for g in gates)})" if gates else ""
    told = INSTRUCTIONS.format(promise=promise, checks=checks)
    # The promise is matched as written: output_contains reads a pattern as a regular
    # expression too, and `[DONE]` would match any output holding a D, an O, an N or an E.
    context: dict[str, Any] = {"promise": re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", promise)}
    states: dict[str, dict[str, Any]] = {}
    if "prompt_file" in spec:
        context["prompt_file"] = reader.string("prompt_file")
        states[READ_PROMPT] = {
            "action": "cat -- ${context.prompt_file}",
            "capture": PROMPT_CAPTURE,
            "next": WORK,
        }
        text = f"${{captured.{PROMPT_CAPTURE}.output}}"
    else:
        text = reader.string("prompt")
    first_gate = "gate_1" if gates else DONE
    states[WORK] = {
        "action_type": "prompt",
        "action": f"{text}\n\n{told}",
        "evaluate": {"type": "output_contains", "pattern": "${context.promise}"},
        "on_success": first_gate,
        "on_failure": start,
    }
    for number, command in enumerate(gates, start=1):
        after = f"gate_{number + 1}" if number < len(gates) else DONE
        states[f"gate_{number}"] = {
            "action": command,
            "on_success": after,
            "on_failure": start,
            "on_error": start,  # a check that cannot run is fed back too
        }
    states[DONE] = {"terminal": True}
    return build(reader, "ralph", name, start, states, loop_settings(reader, name), context)
