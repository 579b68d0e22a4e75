"""Draw a loop's state machine as a Mermaid flowchart or a Graphviz digraph.

Only the transitions the executor can take are drawn: `next` alone when a state has it,
else its `route:` table, else `on_success`/`on_failure`/`on_error`, and for a terminal
state of a `maintain: true` loop the restart edge. Edges between the same two states are
merged into one with the verdicts joined (`success, failure`). `$current` is a self-loop;
a target with a `${...}` reference is a dashed edge to a note showing the reference.
States get generated ids (`s0`, `s1`, ...) so no state name can break the syntax.
A fan-out state (`map:`, `parallel:`) is drawn as a fork into its branches' child loops,
their join and their merge; its routes leave from the last of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.definition.graph.edges import RESTART, LoopGraph, loop_graph
from little_loops.fsm.definition.model.fanout import MERGE_NONE, MapConfig, branch_label, fan_out_of
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig

FORMATS: tuple[str, ...] = ("mermaid", "dot")


@dataclass
class Edge:
    """One drawn edge: `kind` is `step`, `maintain` (restart) or `dynamic` (to a note)."""

    source: str
    target: str
    kind: str
    labels: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return ", ".join(self.labels)


def edges(fsm: FSMLoop, graph: LoopGraph | None = None) -> list[Edge]:
    """Every drawn edge of the loop's graph (*graph*, when the caller has it already), in
    state order, same-target transitions merged."""
    graph = loop_graph(fsm) if graph is None else graph
    out: list[Edge] = []
    for name in fsm.states:
        merged: dict[tuple[str, str], Edge] = {}
        for way in graph.drawn[name]:
            target, label = way.target, way.label
            if way.dynamic or target not in fsm.states:
                kind = "dynamic"
            elif way.origin == RESTART:
                kind = "maintain"
            else:
                kind = "step"
            edge = merged.get((target, kind))
            if edge is None:
                edge = merged[(target, kind)] = Edge(name, target, kind)
                out.append(edge)
            edge.labels.append(label)
    return out


def _ids(fsm: FSMLoop) -> dict[str, str]:
    return {name: f"s{index}" for index, name in enumerate(fsm.states)}


def _notes(graph: list[Edge]) -> dict[str, str]:
    """An id for each distinct dynamic target (`d0`, `d1`, ...)."""
    notes: dict[str, str] = {}
    for edge in graph:
        if edge.kind == "dynamic" and edge.target not in notes:
            notes[edge.target] = f"d{len(notes)}"
    return notes


MAX_BRANCHES_DRAWN = 6  # a map of more items draws this many, then one `N more` node


@dataclass
class FanDrawing:
    """A fan-out state drawn: its own node's label, a node per branch (or per item of a
    map, up to MAX_BRANCHES_DRAWN), its join's and merge's labels (None: `merge: none`)."""

    label: str
    branches: list[str]
    join: str
    merge: str | None

    def exit(self, node: str) -> str:
        """The id the state's routes leave from: its merge, else its join."""
        return f"{node}_merge" if self.merge is not None else f"{node}_join"


def _branch_label(branch: dict[str, Any]) -> str:
    """A parallel branch's node: the sub-loop it runs, or the agent its prompt goes to."""
    return f"loop {branch['loop']}" if "loop" in branch else branch_label(branch)


def fan_drawing(name: str, state: StateConfig) -> FanDrawing | None:
    """How fan-out state *name* is drawn, or None when *state* is no fan-out state."""
    config = fan_out_of(state)
    if config is None:
        return None
    if isinstance(config, MapConfig):
        items = config.items
        kind = "map"
        each = "prompt on" if config.prompt is not None else f"loop {config.loop}:"
        if isinstance(items, list):
            shown = [f"{each} {item}" for item in items[:MAX_BRANCHES_DRAWN]]
            if len(items) > MAX_BRANCHES_DRAWN:
                shown.append(f"… {len(items) - MAX_BRANCHES_DRAWN} more")
        else:
            shown = [f"{each} each item of {items}"]
    else:
        kind = "parallel"
        shown = [_branch_label(b) for b in getattr(config, "branches", [])]
    at_once = f", {config.max_concurrency} at once" if config.max_concurrency else ""
    by = " by score" if config.score else " by the judge" if config.judge else ""
    join = f"join {config.join}" + by
    merge = None if config.merge == MERGE_NONE else f"merge {config.merge}"
    return FanDrawing(f"{name}: {kind}{at_once}", shown, join, merge)


def _fans(fsm: FSMLoop) -> dict[str, FanDrawing]:
    found = {}
    for name, state in fsm.states.items():
        drawing = fan_drawing(name, state)
        if drawing is not None:
            found[name] = drawing
    return found


# --- Mermaid ----------------------------------------------------------------------------

# Characters that Mermaid could read as syntax even inside quotes, as its `#code;` entities.
_MERMAID_ENTITIES = {c: f"#{ord(c)};" for c in '"#&<>|;%`\\'}


def mermaid_text(text: str) -> str:
    """*text* safe inside a quoted Mermaid label: one line, syntax characters as entities."""
    one_line = " ".join(text.split())
    return "".join(_MERMAID_ENTITIES.get(c, c) for c in one_line)


def _mermaid_parts(fsm: FSMLoop, prefix: str, expand: bool) -> tuple[list[str], list[str]]:
    """The node lines and the edge lines of *fsm* (ids start with *prefix*); with *expand*
    each sub-loop state's child follows as a subgraph, recursively."""
    ids = {name: prefix + node for name, node in _ids(fsm).items()}
    graph = edges(fsm)
    notes = {target: prefix + note for target, note in _notes(graph).items()}
    nodes: list[str] = []
    fans = _fans(fsm)
    for name, state in fsm.states.items():
        text = mermaid_text(name)
        if name in fans:
            nodes += _mermaid_fan(ids[name], fans[name])
            continue
        if state.loop is not None:
            shape = f'[["{text}: loop {mermaid_text(state.loop)}"]]'
        else:
            shape = f'(["{text}"])' if state.terminal else f'["{text}"]'
        nodes.append(f"    {ids[name]}{shape}")
    for target, note in notes.items():
        nodes.append(f'    {note}>"{mermaid_text(target)}"]')
    lines: list[str] = []
    for edge in graph:
        fan = fans.get(edge.source)
        source = ids[edge.source] if fan is None else fan.exit(ids[edge.source])
        label = f'|"{mermaid_text(edge.label)}"|'
        if edge.kind == "dynamic":
            lines.append(f"    {source} -.->{label} {notes[edge.target]}")
        elif edge.kind == "maintain":
            lines.append(f"    {source} ==>{label} {ids[edge.target]}")
        else:
            lines.append(f"    {source} -->{label} {ids[edge.target]}")
    for name, child in fsm.children.items() if expand else ():
        inner = f"{ids[name]}_"
        child_nodes, child_edges = _mermaid_parts(child, inner, expand)
        lines.append(f'    subgraph {inner}loop["loop {mermaid_text(child.name)}"]')
        lines += [f"    {line}" for line in child_nodes + child_edges]
        lines.append("    end")
        lines.append(f"    {ids[name]} -.-> {inner}s{list(child.states).index(child.initial)}")
    return nodes, lines


def _mermaid_fan(node: str, fan: FanDrawing) -> list[str]:
    """A fan-out state as a subgraph: its node forks (`==>`) into a node per branch, each
    goes to the join, the join to the merge."""
    lines = [
        f'    subgraph {node}_fan["fan-out"]',
        f'    {node}{{{{"{mermaid_text(fan.label)}"}}}}',
    ]
    for i, branch in enumerate(fan.branches):
        lines.append(f'    {node}_b{i}[["{mermaid_text(branch)}"]]')
    lines.append(f'    {node}_join(("{mermaid_text(fan.join)}"))')
    if fan.merge is not None:
        lines.append(f'    {node}_merge[/"{mermaid_text(fan.merge)}"/]')
    for i in range(len(fan.branches)):
        lines += [f"    {node} ==> {node}_b{i}", f"    {node}_b{i} --> {node}_join"]
    if fan.merge is not None:
        lines.append(f"    {node}_join --> {node}_merge")
    lines.append("    end")
    return lines


def render_mermaid(fsm: FSMLoop, expand: bool = False) -> str:
    """A Mermaid `flowchart TD` of *fsm* (renders in GitHub Markdown inside ```mermaid);
    with *expand*, each sub-loop state's child loop is drawn inside a subgraph."""
    ids = _ids(fsm)
    notes = _notes(edges(fsm))
    lines = ["flowchart TD", f"    %% loop: {mermaid_text(fsm.name)}"]
    lines.append("    loop_start((start))")
    nodes, drawn = _mermaid_parts(fsm, "", expand)
    lines += nodes
    if fsm.initial in ids:
        lines.append(f"    loop_start --> {ids[fsm.initial]}")
    lines += drawn
    terminals = [ids[name] for name in fsm.terminal_states()]
    lines.append("    classDef terminal stroke-width:3px")
    if terminals:
        lines.append(f"    class {','.join(terminals)} terminal")
    if notes:
        lines.append("    classDef dynamic stroke-dasharray:4 3")
        lines.append(f"    class {','.join(notes.values())} dynamic")
    return "\n".join(lines) + "\n"


# --- Graphviz ---------------------------------------------------------------------------


def dot_text(text: str) -> str:
    """*text* as a quoted Graphviz string."""
    one_line = " ".join(text.split())
    return '"' + one_line.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_parts(fsm: FSMLoop, prefix: str, expand: bool) -> tuple[list[str], list[str]]:
    """The node and edge lines of *fsm* (ids start with *prefix*); with *expand* each
    sub-loop state's child follows as a cluster, recursively."""
    ids = {name: prefix + node for name, node in _ids(fsm).items()}
    graph = edges(fsm)
    notes = {target: prefix + note for target, note in _notes(graph).items()}
    lines: list[str] = []
    fans = _fans(fsm)
    for name, state in fsm.states.items():
        if name in fans:
            lines += _dot_fan(ids[name], fans[name])
            continue
        if state.loop is not None:
            label = dot_text(f"{name}: loop {state.loop}")
            lines.append(f"    {ids[name]} [label={label}, shape=component];")
            continue
        extra = ", peripheries=2" if state.terminal else ""
        lines.append(f"    {ids[name]} [label={dot_text(name)}{extra}];")
    for target, note in notes.items():
        lines.append(f"    {note} [label={dot_text(target)}, shape=note, style=dashed];")
    edge_lines: list[str] = []
    for edge in graph:
        attrs = f"label={dot_text(edge.label)}"
        if edge.kind == "dynamic":
            target, attrs = notes[edge.target], attrs + ", style=dashed"
        elif edge.kind == "maintain":
            target, attrs = ids[edge.target], attrs + ", style=bold"
        else:
            target = ids[edge.target]
        fan = fans.get(edge.source)
        source = ids[edge.source] if fan is None else fan.exit(ids[edge.source])
        edge_lines.append(f"    {source} -> {target} [{attrs}];")
    for name, child in fsm.children.items() if expand else ():
        inner = f"{ids[name]}_"
        edge_lines.append(f"    subgraph cluster_{inner}loop {{")
        edge_lines.append(f"        label={dot_text('loop ' + child.name)};")
        child_nodes, child_edges = _dot_parts(child, inner, expand)
        edge_lines += [f"    {line}" for line in child_nodes + child_edges]
        edge_lines.append("    }")
        first = f"{inner}s{list(child.states).index(child.initial)}"
        edge_lines.append(f"    {ids[name]} -> {first} [style=dotted];")
    return lines, edge_lines


def _dot_fan(node: str, fan: FanDrawing) -> list[str]:
    """A fan-out state as a cluster: its node forks (bold edges) into a node per branch,
    each goes to the join, the join to the merge."""
    lines = [
        f"    subgraph cluster_{node}_fan {{",
        '        label="fan-out"; style=dashed;',
        f"        {node} [label={dot_text(fan.label)}, shape=invtrapezium];",
    ]
    for i, branch in enumerate(fan.branches):
        lines.append(f"        {node}_b{i} [label={dot_text(branch)}, shape=component];")
    lines.append(f"        {node}_join [label={dot_text(fan.join)}, shape=circle];")
    if fan.merge is not None:
        lines.append(f"        {node}_merge [label={dot_text(fan.merge)}, shape=parallelogram];")
    for i in range(len(fan.branches)):
        lines.append(f"        {node} -> {node}_b{i} [style=bold];")
        lines.append(f"        {node}_b{i} -> {node}_join;")
    if fan.merge is not None:
        lines.append(f"        {node}_join -> {node}_merge;")
    lines.append("    }")
    return lines


def render_dot(fsm: FSMLoop, expand: bool = False) -> str:
    """A Graphviz `digraph` of *fsm* (`dot -Tsvg` draws it); with *expand*, each sub-loop
    state's child loop is drawn inside a cluster."""
    ids = _ids(fsm)
    lines = [
        f"digraph {dot_text(fsm.name)} {{",
        "    node [shape=box, style=rounded];",
        "    loop_start [shape=point, width=0.2];",
    ]
    nodes, drawn = _dot_parts(fsm, "", expand)
    lines += nodes
    if fsm.initial in ids:
        lines.append(f"    loop_start -> {ids[fsm.initial]};")
    lines += drawn
    lines.append("}")
    return "\n".join(lines) + "\n"


RENDERERS = {"mermaid": render_mermaid, "dot": render_dot}


def render(fsm: FSMLoop, fmt: str = "mermaid", expand: bool = False) -> str:
    """*fsm* drawn in *fmt* (one of FORMATS); *expand* draws sub-loops' child loops inside."""
    return RENDERERS[fmt](fsm, expand)
