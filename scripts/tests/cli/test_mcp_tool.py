"""`action_type: mcp_tool`: the state calls `mcp-call SERVER/TOOL PARAMS_JSON` (little-loops'
MCP client) and routes on its result; a small local stand-in plays mcp-call here."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from support import llproc
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

# A stand-in for mcp-call: records its arguments; `shop/missing` is not found (127), `shop/
# broken` answers isError, anything else an envelope with the arguments it got.
STAND_IN = """\
#!/bin/sh
printf '%s\\n' "$@" >> calls.txt
case "$1" in
  shop/missing) exit 127 ;;
  shop/broken) echo '{"content": [], "isError": true}'; exit 1 ;;
esac
printf '{"content": [{"type": "text", "text": "%s"}], "isError": false}\\n' "$1"
"""

CHECK = """\
name: check
context:
  item: apple
initial: call
states:
  call:
    action_type: mcp_tool
    action: "shop/{tool}"
    params:
      item: "${{context.item}}"
      count: 2
    capture: reply
    route:
      success: good
      tool_error: bad
      not_found: skipped
  good:
    action: echo "good ${{captured.reply.output}}" >> side.txt
    next: done
  bad:
    action: echo bad >> side.txt
    next: done
  skipped:
    action: echo skipped >> side.txt
    next: done
  done:
    terminal: true
"""


@pytest.fixture
def mcp_call(loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = loop_project.root / "bin"
    bin_dir.mkdir()
    path = bin_dir / "mcp-call"
    path.write_text(STAND_IN)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return loop_project.root / "calls.txt"


def test_a_tool_call_gets_its_params_as_json_and_routes_success(
    loop_project: LoopProject, mcp_call: Path
) -> None:
    loop_project.write("check", CHECK.format(tool="find"))
    result = llproc.console(loop_project.root, "run", "check")
    assert result.returncode == ExitCode.OK, result.stderr
    tool, params = mcp_call.read_text().splitlines()
    assert (tool, json.loads(params)) == ("shop/find", {"item": "apple", "count": 2})
    (line,) = llproc.side_effects(loop_project.root)
    assert line.startswith("good {")
    assert '"isError": false' in line


@pytest.mark.parametrize(("tool", "went"), [("broken", "bad"), ("missing", "skipped")])
def test_a_tool_error_and_a_missing_tool_are_verdicts(
    loop_project: LoopProject, mcp_call: Path, tool: str, went: str
) -> None:
    loop_project.write("check", CHECK.format(tool=tool))
    result = llproc.console(loop_project.root, "run", "check")
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.side_effects(loop_project.root) == [went]


def test_without_mcp_call_the_state_fails_in_one_line(loop_project: LoopProject) -> None:
    loop_project.write("check", CHECK.format(tool="find"))
    result = llproc.console(loop_project.root, "run", "check", "--json")
    assert result.returncode != ExitCode.OK
    assert "mcp-call" in result.stderr
    assert "Traceback" not in result.stderr
