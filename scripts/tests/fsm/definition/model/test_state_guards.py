"""`pruning_profile:` and `throttle:` of a state (little-loops'), checked in real runs: the
agent's session gets the profile's variables, a throttled self-loop goes to on_throttle_hard."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fake_claude import REPORT, shell_claude
from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.definition.model.state_guards import (
    DEFAULT_HARD_MAX,
    PruningProfileConfig,
    ThrottleConfig,
)
from little_loops.fsm.definition.model.typed import FSMLoop


def test_the_blocks() -> None:
    assert PruningProfileConfig(name="p").env() == {
        "LL_AUTOMATION": "1",
        "LL_AUTOMATION_PROFILE": "p",
    }
    assert PruningProfileConfig(enabled=False).env() == {}
    assert ThrottleConfig().hard_at == DEFAULT_HARD_MAX
    assert ThrottleConfig(hard_max=2).hard_at == 2


LOOP = """\
name: guarded
initial: refine
artifact_versioning: true
states:
  refine:
    action: "/ll:refine-issue 1 --auto"
    action_type: slash_command
    pruning_profile:
      enabled: true
      name: refine-issue-auto
      suppress_claude_md: true
    next: poll
  poll:
    action: "echo poll >> polls; false"
    throttle:
      hard_max: 3
    on_success: done
    on_failure: poll
    on_throttle_hard: gave_up
  gave_up:
    terminal: true
  done:
    terminal: true
"""


def test_a_run_passes_the_profile_and_throttles_the_self_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    root = loops_project(tmp_path, {".loops/guarded.yaml": LOOP})
    seen = tmp_path / "env.log"
    body = f"echo \"$LL_AUTOMATION $LL_AUTOMATION_PROFILE\" >> {seen}\necho '{json.dumps(REPORT)}'"
    shell_claude(tmp_path, monkeypatch, body)
    checked = ll_loop(root, "validate", "guarded")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run = ll_loop(root, "run", "guarded")
    assert run.returncode == 0, run.stderr + run.stdout
    assert seen.read_text().split() == ["1", "refine-issue-auto"]
    assert (root / "polls").read_text().split() == ["poll"] * 3
    assert "→ gave_up" in run.stdout + run.stderr
    shown = FSMLoop.from_dict(
        {"name": "x", "initial": "a", "artifact_versioning": True, "states": {}}
    )
    assert shown.to_dict()["artifact_versioning"] is True


def test_bad_blocks_are_one_line_errors(tmp_path: Path) -> None:
    bad = LOOP.replace("hard_max: 3", "hard_mx: 3").replace("enabled: true", "enabled: 2")
    root = loops_project(tmp_path, {".loops/guarded.yaml": bad})
    checked = ll_loop(root, "validate", "guarded")
    assert checked.returncode != 0
    out = checked.stdout + checked.stderr
    assert "throttle: unknown key hard_mx (did you mean hard_max?)" in out
    assert "pruning_profile: enabled: expected true or false" in out


def test_a_profile_name_with_a_nul_byte_is_refused_by_validate(tmp_path: Path) -> None:
    """The name is an environment variable's value, which cannot hold a NUL byte: validate
    names the key (the run said the action held one, and failed the step)."""
    bad = LOOP.replace("name: refine-issue-auto", 'name: "refine\\0auto"')
    root = loops_project(tmp_path, {".loops/guarded.yaml": bad})
    checked = ll_loop(root, "validate", "guarded")
    assert checked.returncode == 2, checked.stdout + checked.stderr
    out = checked.stdout + checked.stderr
    assert "pruning_profile: name: expected a name without a NUL byte" in out, out
    assert "Traceback" not in out
