"""The run flags a run was started with (-n, --max-cost, --model, --wait-approval ...), kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from little_loops.fsm.facts.layout import make_running_dir, run_files
from little_loops.fsm.facts.runfile import read_run_file
from little_loops.fsm.runs.atomic import json_bytes, remove_leftover_temp_files, write_atomic


class OptionsFile(TypedDict):
    """The JSON object in `<name>.options.json`."""

    max_iterations: int | None
    no_llm: bool
    llm_model: str | None
    max_cost: float | None
    wait_approval: bool
    model: str | None


@dataclass(frozen=True)
class Overrides:
    """The flags that change a loop's limits or its LLM for one run (None: the file's value)."""

    max_iterations: int | None = None
    no_llm: bool = False
    llm_model: str | None = None
    max_cost: float | None = None
    wait_approval: bool = False  # wait at an approval state for the answer, in-process
    model: str | None = None  # the model of every Claude state


def save_overrides(loop_name: str, loops_dir: Path, overrides: Overrides) -> None:
    """Record the flags of a run, so `resume` continues with the same limits."""
    data: OptionsFile = {
        "max_iterations": overrides.max_iterations,
        "no_llm": overrides.no_llm,
        "llm_model": overrides.llm_model,
        "max_cost": overrides.max_cost,
        "wait_approval": overrides.wait_approval,
        "model": overrides.model,
    }
    path = run_files(loop_name, loops_dir).options
    make_running_dir(path.parent)
    remove_leftover_temp_files(path)  # this run holds the loop's lock: no other writer
    write_atomic(path, json_bytes(data, indent=2) + b"\n")


def load_overrides(loop_name: str, loops_dir: Path) -> Overrides | None:
    """The recorded flags of the run, None when there is no readable record (an older run)."""
    try:
        data = json.loads(read_run_file(run_files(loop_name, loops_dir).options))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    n = data.get("max_iterations")
    model = data.get("llm_model")
    cost = data.get("max_cost")
    claude_model = data.get("model")
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not cost > 0:
        cost = None
    return Overrides(
        max_iterations=n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None,
        no_llm=data.get("no_llm") is True,
        llm_model=model if isinstance(model, str) else None,
        max_cost=cost,
        wait_approval=data.get("wait_approval") is True,
        model=claude_model if isinstance(claude_model, str) and claude_model else None,
    )
