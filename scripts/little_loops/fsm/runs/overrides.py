"""The run flags (one row each): the record a resume reads them from, and the loop they change."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.actions.sandbox_key import BWRAP
from little_loops.fsm.actions.sandbox_key import read as read_sandbox
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.layout import make_running_dir, run_files
from little_loops.fsm.facts.runfile import read_run_file
from little_loops.fsm.runs.atomic import json_bytes, remove_leftover_temp_files, write_atomic
from little_loops.fsm.runs.flags import (
    COUNT,
    DOLLARS,
    NAME,
    PAIRED,
    TEXT,
    flag,
    flag_rows,
    given_pair_else_saved,
)

OptionsFile = dict[str, object]  # `<name>.options.json`: a key per row with `resumed=True`

_Flags = TypeVar("_Flags", bound="RunFlags")


@dataclass(frozen=True)
class RunFlags:
    """The run flags, one row each, in the order `--help` lists them. A row is everything
    about its flag: `run`/`resume` parse it, `--background` passes it on, and with
    `resumed=True` the options record keeps it and a resume merges it.

    A flag not given has its kind's default (None/False): the loop file's value applies."""

    max_iterations: int | None = flag(
        "-n",
        "--max-iterations",
        kind=COUNT,
        metavar="N",
        resumed=True,
        help="stop after N iterations (overrides max_iterations of the loop file)",
    )
    no_llm: bool = flag(
        "--no-llm",
        resumed=True,
        help="never call the LLM: llm_structured states are judged by exit code",
    )
    llm_model: str | None = flag(
        "--llm-model",
        kind=TEXT,
        metavar="MODEL",
        resumed=True,
        help="the model of the LLM evaluator",
    )
    model: str | None = flag(
        "--model",
        kind=NAME,
        metavar="MODEL",
        resumed=True,
        help="the model of every prompt and slash-command state, on every agent that takes one "
        "(overrides the model option of each agent's block)",
    )
    max_cost: float | None = flag(
        "--max-cost",
        kind=DOLLARS,
        metavar="USD",
        resumed=True,
        help="end the run (exit 6) before the next paid step once the agents' spend reaches USD "
        "(overrides max_cost_usd of the loop file); refused when an agent's spend cannot be "
        "counted",
    )
    queue: bool = flag(
        "--queue", help="wait for a loop holding an overlapping scope instead of refusing to start"
    )
    wait_approval: bool = flag(
        "--wait-approval",
        resumed=True,
        help="at an approval state, wait for `ll-loop approve`/`reject` and go on "
        "(default: stop there, exit 9, and go on with `ll-loop resume`)",
    )
    quiet: bool = flag("-q", "--quiet", help="print only the outcome line on stderr")
    verbose: bool = flag(
        "-v",
        "--verbose",
        help="show each action's output live under its state line (Claude's as text)",
    )
    as_json: bool = flag("--json", help="print the final result as JSON on stdout")
    sandbox: bool | None = flag(
        "--sandbox",
        kind=PAIRED,
        resumed=True,
        merge=given_pair_else_saved,
        help="run every step in a sandbox (bubblewrap, unless the loop names its own; "
        "--no-sandbox: none, whatever the loop file says; docs/sandbox.md)",
    )
    compat: bool = flag(
        "--compat",
        resumed=True,
        help="run the loop as written (for little-loops): our stricter checks are warnings, "
        "and the keys it reads otherwise have its meaning",
    )
    no_color: bool = flag("--no-color", help="no colours (also when NO_COLOR is set)")

    def argv(self) -> list[str]:
        """These flags as `ll-loop run` arguments (what a background run is started with)."""
        out: list[str] = []
        for name, row in flag_rows(self):
            value = getattr(self, name)
            if row.kind.takes_value and value is not None:
                option, word = row.options[-1], row.kind.word(value)
                # `--opt=-x`: a value starting with `-` would be taken for a flag of its own.
                out += [f"{option}={word}"] if word.startswith("-") else [option, word]
            elif row.kind.paired and value is not None:
                out.append(row.options[-1] if value else row.negative)
            elif not row.kind.takes_value and value:
                out.append(row.options[-1])
        return out

    def record(self) -> OptionsFile:
        """The options record: the flags a resume repeats."""
        return {name: getattr(self, name) for name, row in flag_rows(self) if row.resumed}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> RunFlags:
        """The flags of a record; a value that is not one of its kind is not given."""
        return cls(**{name: row.kind.check(data.get(name)) for name, row in _resumed()})


def _resumed() -> list[tuple[str, Any]]:
    return [(name, row) for name, row in flag_rows(RunFlags) if row.resumed]


def resumed_over(given: _Flags, saved: RunFlags | None) -> _Flags:
    """*given* (the flags `resume` was given) with each repeated flag merged with the saved
    one as its row says; with no record (an older run), the loop file's values apply."""
    if saved is None:
        return given
    merged = {
        name: row.merge(getattr(given, name), getattr(saved, name)) for name, row in _resumed()
    }
    return dataclasses.replace(given, **merged)


def save_overrides(loop_name: str, loops_dir: Path, overrides: RunFlags) -> None:
    """Record the flags of a run, so `resume` continues with the same limits."""
    path = run_files(loop_name, loops_dir).options
    make_running_dir(path.parent)
    remove_leftover_temp_files(path)  # this run holds the loop's lock: no other writer
    write_atomic(path, json_bytes(overrides.record(), indent=2) + b"\n")


def load_overrides(loop_name: str, loops_dir: Path) -> RunFlags | None:
    """The recorded flags of the run, None when there is no readable record (an older run)."""
    try:
        data = json.loads(read_run_file(run_files(loop_name, loops_dir).options))
    except (OSError, ValueError):
        return None
    return RunFlags.from_record(data) if isinstance(data, dict) else None


def resumed_flags(loop_name: str, loops_dir: Path, given: _Flags) -> _Flags:
    """The flags a resume of *loop_name* runs with: its record, with those given again on top."""
    return resumed_over(given, load_overrides(loop_name, loops_dir))


# The option `--model` sets, in each kind's option table that has it.
MODEL_OPTION = "model"


def apply_overrides(fsm: FSMLoop, flags: RunFlags) -> FSMLoop:
    """The loop with the flags that change it applied (the loaded loop is not changed)."""
    llm = fsm.llm
    if flags.no_llm:
        llm = dataclasses.replace(llm, enabled=False)
    if flags.llm_model is not None:
        llm = dataclasses.replace(llm, model=flags.llm_model)
    changes: dict[str, Any] = {"llm": llm}
    if flags.max_iterations is not None:
        changes["max_iterations"] = flags.max_iterations
    if flags.max_cost is not None:
        changes["max_cost_usd"] = flags.max_cost
    if flags.model is not None:
        changes.update(with_model(fsm, flags.model))
    if flags.sandbox is not None:
        return with_sandbox(dataclasses.replace(fsm, **changes), on=flags.sandbox)
    return dataclasses.replace(fsm, **changes)


def with_sandbox(fsm: FSMLoop, *, on: bool) -> FSMLoop:
    """*fsm* (and its sub-loops) with `--sandbox` (*on*: every step confined, bubblewrap
    where the loop names no sandbox; a `none` of a state or agent no longer counts) or
    `--no-sandbox` (no step confined, whatever the files say) applied."""

    def kept(value: object) -> object:
        return value if on and read_sandbox(value) is not None else None

    loop_value = (kept(fsm.sandbox) or BWRAP) if on else None
    return dataclasses.replace(
        fsm,
        sandbox=loop_value,
        states={n: dataclasses.replace(s, sandbox=kept(s.sandbox)) for n, s in fsm.states.items()},
        agents={n: dataclasses.replace(a, sandbox=kept(a.sandbox)) for n, a in fsm.agents.items()},
        project_agents={
            n: dataclasses.replace(a, sandbox=kept(a.sandbox))
            for n, a in fsm.project_agents.items()
        },
        children={name: with_sandbox(child, on=on) for name, child in fsm.children.items()},
    )


def with_model(fsm: FSMLoop, model: str) -> dict[str, Any]:
    """The `options` and `states` of *fsm* with *model* as the model of every action of a
    kind whose option table has a model: the loop's block of each such kind, and each
    state's own block that names a model."""
    keys = [key for key, spec in BY_OPTIONS_KEY.items() if MODEL_OPTION in spec.options]
    states = {}
    for name, state in fsm.states.items():
        own = {
            key: {**block, MODEL_OPTION: model}
            for key, block in state.options.items()
            if key in keys and MODEL_OPTION in block
        }
        states[name] = (
            dataclasses.replace(state, options={**state.options, **own}) if own else state
        )
    options = {**fsm.options, **{key: {**fsm.options[key], MODEL_OPTION: model} for key in keys}}
    return {"options": options, "states": states}
