"""`flow:`, a linear chain of state names, and `state_defs:`, their bodies, made into `states:`.

Each entry `NAME` goes on to the next entry (`next:`); `NAME?YES:NO` routes its `success`
verdict (`yes`) to YES and its `failure` verdict (`no`) to NO (`on_success:`/`on_failure:`,
upstream's `on_yes:`/`on_no:`); the last entry is a terminal.
The state's body in `state_defs:` is merged over what the entry makes.
"""

from __future__ import annotations

from little_loops.fsm.definition.reading.located import Node, deep_merge, new

FLOW_KEY = "flow"
BODIES_KEY = "state_defs"
_TERNARY = "?"
_BRANCHES = ":"


def _entry(node: Node) -> tuple[str, tuple[str, str] | None]:
    """The state name of one `flow:` entry, and its (yes, no) targets when it branches."""
    if not isinstance(node.value, str) or not node.value:
        raise node.fail(f"a flow: entry is a state name (or NAME?YES:NO), got {node.value!r}")
    name, ternary, targets = node.value.partition(_TERNARY)
    if not ternary:
        return name, None
    yes, _, no = targets.partition(_BRANCHES)
    if not name or not yes or not no:
        raise node.fail(f"flow: entry {node.value!r} must be NAME?YES:NO, each part non-empty")
    return name, (yes, no)


def expand_flow(root: Node, states_written_here: bool) -> Node:
    """*root* (a loop) with its `flow:` made into `states:` and `state_defs:` dropped.

    A `states:` of the same file as `flow:` is an error (which one is meant?); one inherited
    from a base loop (`from:`) is replaced by the child's `flow:`.
    """
    flow = root.value[FLOW_KEY]
    if states_written_here:
        raise flow.fail("a loop has either flow: or states:, not both")
    if not isinstance(flow.value, list) or not flow.value:
        raise flow.fail("flow: is a list of at least one state name")
    bodies = root.get(BODIES_KEY)
    if bodies is not None and not isinstance(bodies.value, dict):
        raise bodies.fail("state_defs: is a mapping of state names to their settings")
    entries = [(_entry(node), node) for node in flow.value]
    states: dict[str, Node] = {}
    for index, ((name, branches), node) in enumerate(entries):
        if name in states:
            raise node.fail(f"flow: names state '{name}' twice")
        skeleton: dict[str, object] = {}
        if branches is not None:
            skeleton = {"on_success": branches[0], "on_failure": branches[1]}
        elif index + 1 < len(entries) and not _terminal(bodies, name):
            # A state its body makes terminal ends the run there: no `next:` is made for it
            # (little-loops lets a terminal stand anywhere in the chain, e.g. `failed`).
            skeleton = {"next": entries[index + 1][0][0]}
        if index + 1 == len(entries):
            skeleton["terminal"] = True
        state = new(skeleton, node)
        body = bodies.value.get(name) if bodies is not None else None
        states[name] = deep_merge(state, body) if body is not None else state
    if bodies is not None:
        unused = [name for name in bodies.value if name not in states]
        if unused:
            raise bodies.value[unused[0]].fail(f"state_defs: '{unused[0]}' is not in flow:")
    out = {k: v for k, v in root.value.items() if k not in (FLOW_KEY, BODIES_KEY)}
    out["states"] = Node(states, flow.file, flow.line)
    return Node(out, root.file, root.line)


def _terminal(bodies: Node | None, name: str) -> bool:
    """Whether `state_defs:` makes the state *name* a terminal one."""
    body = bodies.value.get(name) if bodies is not None else None
    if body is None or not isinstance(body.value, dict):
        return False
    found = body.value.get("terminal")
    return found is not None and found.value is True
