"""The MCP tool action kind (`action_type: mcp_tool`): `mcp-call SERVER/TOOL PARAMS_JSON`."""

from __future__ import annotations

from collections.abc import Sequence

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation

# little-loops' own client: reads the project's .mcp.json, starts the server, calls the tool
# and prints its response envelope (exit 0 ok, 1 tool error, 124 timeout, 127 not found).
PROGRAM = "mcp-call"


def argv(request: ActionRequest, program: Sequence[str]) -> list[str]:
    """`mcp-call SERVER/TOOL '{"param": ...}'`: the action names the tool, `params:` the
    arguments, as JSON."""
    import json  # not at start-up: checking a loop file never needs it

    params = (request.options or {}).get("params") or {}
    return [*program, request.action.strip(), json.dumps(params)]


SPEC = ActionKindSpec(
    name="mcp_tool",
    summary="an MCP tool call (SERVER/TOOL, with params:), run by little-loops' mcp-call",
    action_types=("mcp_tool",),
    argv=argv,
    program=(PROGRAM,),
    interpolation=Interpolation.TEXT,
    default_evaluator="mcp_result",
    default_timeout=30,  # as little-loops: a tool call is quick, or the server is not there
    state_keys=("params",),
    takes_params=True,
    install_hint="it comes with little-loops (pip install little-loops)",
    label="MCP tool call",
    runs_as="calls an MCP tool",
    only_states="an mcp_tool state (action_type: mcp_tool) has params:",
)
