"""The preflight's root check agrees with the real Claude Code: it refuses what claude refuses.

As root, Claude Code 2.1 refuses `--dangerously-skip-permissions` (and the bypass permission
mode) unless IS_SANDBOX is "1"; the preflight says so before a run's first step. Each case
runs the real `claude` with the arguments a loop's state would give it.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from little_loops.fsm.runs.preflight import needs, problems
from little_loops.fsm.validate.loopfile import load_and_validate

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("claude_code_env"),
    pytest.mark.skipif(os.geteuid() != 0, reason="Claude Code's root check needs root"),
]

LOOP = """\
    name: rooted
    initial: fix
    claude:
      {options}
    states:
      fix:
        action: Say hello
        action_type: prompt
        next: done
      done:
        terminal: true
"""
REFUSAL = "cannot be used with root/sudo privileges"


@pytest.mark.parametrize(
    "options", ["{}", "{permission_mode: bypassPermissions}", "{permission_mode: acceptEdits}"]
)
@pytest.mark.parametrize("sandbox", [None, "yes", "1"])
def test_the_preflight_refuses_as_root_exactly_what_claude_code_refuses(
    claude_code: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: str,
    sandbox: str | None,
) -> None:
    if sandbox is None:
        monkeypatch.delenv("IS_SANDBOX", raising=False)
    else:
        monkeypatch.setenv("IS_SANDBOX", sandbox)
    path = tmp_path / "rooted.yaml"
    path.write_text(textwrap.dedent(LOOP.format(options=options)))
    fsm = load_and_validate(path)
    (use,) = needs(fsm)["claude"]
    ran = subprocess.run(
        [str(claude_code), *use.args, "--output-format", "json", "-p", "--", "Say hello"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    refused = REFUSAL in ran.stderr + ran.stdout
    assert ("claude" in problems(fsm)) == refused, (ran.returncode, ran.stderr[-500:])
    assert refused == (sandbox != "1" and "acceptEdits" not in options)
