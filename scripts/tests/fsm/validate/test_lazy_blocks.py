"""validate loads a settings block's dataclasses only for a file that has the block: a
shell-only loop imports none of them (checked in a fresh process through sys.modules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.bench_loops import HELLO

PROBE = """\
import contextlib, io, sys
from little_loops.cli import main_loop
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(out):
    code = main_loop(sys.argv[1:])
print(code, " ".join(sorted(sys.modules)))
print(out.getvalue(), file=sys.stderr)
"""

# The modules of the less common blocks' dataclasses, each loaded when a file has its block.
_MODEL = "little_loops.fsm.definition.model"
BLOCK_MODELS = {
    f"{_MODEL}.{name}"
    for name in ("fanout", "learning", "circuit", "state_guards", "policy_blocks", "pr_block")
}


def loaded_by(cwd: Path, *argv: str) -> tuple[int, set[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True, check=True
    )
    code, _, modules = proc.stdout.strip().partition(" ")
    return int(code), set(modules.split()), proc.stderr


def test_validate_of_a_shell_only_loop_loads_no_block_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "hello.yaml").write_text(HELLO)
    code, modules, said = loaded_by(tmp_path, "validate", "hello.yaml")
    assert (code, said.strip()) == (0, "hello.yaml: ok")
    assert sorted(modules & BLOCK_MODELS) == []


_FIX = '  fix:\n    action: touch "${context.marker}"\n'


@pytest.mark.parametrize(
    ("text", "loaded"),
    [
        (HELLO + "stall:\n  max_visits: 9\n", "policy_blocks"),
        (HELLO + "notify:\n  command: 'true'\n", "policy_blocks"),
        (HELLO.replace(_FIX, _FIX + "    retry:\n      max_attempts: 2\n"), "policy_blocks"),
        (HELLO + "circuit:\n  repeated_failure:\n    window: 2\n", "circuit"),
        (HELLO.replace(_FIX, _FIX + "    throttle:\n      hard_max: 3\n"), "state_guards"),
        (
            HELLO.replace(_FIX, _FIX + "    type: learning\n    learning:\n      targets: [a]\n"),
            "learning",
        ),
        (
            HELLO.replace(
                _FIX + "    next: check\n",
                "  fix:\n    parallel:\n      branches:\n        - loop: inner\n"
                "    on_success: check\n    on_failure: check\n",
            ),
            "fanout",
        ),
    ],
    ids=["stall", "notify", "retry", "circuit", "throttle", "learning", "parallel"],
)
def test_a_block_s_dataclasses_are_loaded_for_a_file_that_has_it(
    tmp_path: Path, text: str, loaded: str
) -> None:
    (tmp_path / "inner.yaml").write_text(
        "name: inner\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    )
    (tmp_path / "hello.yaml").write_text(text)
    code, modules, said = loaded_by(tmp_path, "validate", "hello.yaml")
    assert code == 0, said
    assert f"{_MODEL}.{loaded}" in modules
    assert sorted(modules & BLOCK_MODELS) == [f"{_MODEL}.{loaded}"]


# Each block class a library caller could import from these modules before the blocks moved
# to modules of their own (typed imported them all; blocks was the home of the policies').
FORMER_HOMES = {
    "little_loops.fsm.definition.model.typed": (
        "CircuitConfig",
        "LearningConfig",
        "MapConfig",
        "NotifyConfig",
        "ParallelConfig",
        "PruningProfileConfig",
        "PullRequestConfig",
        "RetryConfig",
        "StallConfig",
        "ThrottleConfig",
    ),
    "little_loops.fsm.definition.model.blocks": (
        "EvaluateConfig",
        "LearningConfig",
        "MapConfig",
        "NotifyConfig",
        "ParallelConfig",
        "PullRequestConfig",
        "RetryConfig",
        "StallConfig",
    ),
}


@pytest.mark.parametrize("module", sorted(FORMER_HOMES))
def test_a_moved_block_is_still_imported_from_where_it_was(module: str) -> None:
    import importlib

    from little_loops.fsm.definition.model.blocks import block_class

    mod = importlib.import_module(module)
    for name in FORMER_HOMES[module]:
        found = getattr(mod, name)  # `from MODULE import NAME` asks the same
        assert isinstance(found, type)
        assert found.__name__ == name
        assert found is getattr(importlib.import_module(found.__module__), name)
    assert block_class("definition.model.policy_blocks:StallConfig") is mod.StallConfig
