"""Diagrams: golden output for two loops, and every example loop drawn completely."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from textwrap import dedent

import pytest
from support.paths import DATA, REPO, SHIPPED_LOOPS
from support.slowdown import scaled

from little_loops.fsm.definition.graph.edges import loop_graph
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.definition.writing.diagram import (
    dot_text,
    edges,
    fan_drawing,
    mermaid_text,
    render_dot,
    render_mermaid,
)
from little_loops.fsm.validate.loopfile import check_document, load_and_validate

DOT = shutil.which("dot")


def _doc_loops() -> list[tuple[str, FSMLoop]]:
    """Every valid loop written in a ```yaml block of docs/*.md (paradigm files compiled)."""
    found = []
    for doc in sorted((REPO / "docs").glob("*.md")):
        for index, text in enumerate(re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.S)):
            loaded = load_text(text, f"{doc.name}#{index}")
            if not isinstance(loaded.data, dict) or "name" not in loaded.data:
                continue
            report = check_document(loaded)
            if report.fsm is not None:
                found.append((f"{doc.name}#{index}", report.fsm))
    return found


def _file_loops() -> list[tuple[str, FSMLoop]]:
    paths = [
        *SHIPPED_LOOPS,
        *sorted((DATA / "doc_loops").glob("*.yaml")),
        *sorted((DATA / "paradigms").glob("*.yaml")),
    ]
    found = []
    for path in paths:
        report = check_document(load_file(path))
        assert report.fsm is not None, path
        found.append((f"{path.parent.name}/{path.name}", report.fsm))
    return found


EXAMPLES = _file_loops() + _doc_loops()


def test_there_are_examples_to_draw() -> None:
    assert len([name for name, _ in EXAMPLES if ".md#" in name]) >= 8
    assert len(EXAMPLES) >= 35


def loop(text: str) -> FSMLoop:
    report = check_document(load_text(dedent(text), "loop.yaml"))
    assert report.fsm is not None, report.errors
    return report.fsm


FIX_TYPES = load_file(DATA / "doc_loops" / "fix-types.yaml")


def test_golden_mermaid_fix_types() -> None:
    assert render_mermaid(FSMLoop.from_dict(FIX_TYPES.data)) == dedent("""\
        flowchart TD
            %% loop: fix-types
            loop_start((start))
            s0["check"]
            s1["fix"]
            s2(["done"])
            loop_start --> s0
            s0 -->|"success"| s2
            s0 -->|"failure"| s1
            s1 -->|"success, failure"| s0
            classDef terminal stroke-width:3px
            class s2 terminal
        """)


def test_golden_dot_fix_types() -> None:
    assert render_dot(FSMLoop.from_dict(FIX_TYPES.data)) == dedent("""\
        digraph "fix-types" {
            node [shape=box, style=rounded];
            loop_start [shape=point, width=0.2];
            s0 [label="check"];
            s1 [label="fix"];
            s2 [label="done", peripheries=2];
            loop_start -> s0;
            s0 -> s2 [label="success"];
            s0 -> s1 [label="failure"];
            s1 -> s0 [label="success, failure"];
        }
        """)


ODD = """\
    name: odd
    initial: 'say "hi" | end'
    maintain: true
    context:
      next_state: end
    states:
      'say "hi" | end':
        action: echo hi
        evaluate:
          type: llm_structured
          schema: {type: object, properties: {verdict: {enum: [success, failure, '#1; x']}}}
        route:
          success: end
          failure: $current
          '#1; x': end
          _error: ${context.next_state}
      end:
        terminal: true
        on_maintain: 'say "hi" | end'
    """


def test_golden_mermaid_with_odd_names_restart_self_loop_and_dynamic_target() -> None:
    assert render_mermaid(loop(ODD)) == dedent("""\
        flowchart TD
            %% loop: odd
            loop_start((start))
            s0["say #34;hi#34; #124; end"]
            s1(["end"])
            d0>"${context.next_state}"]
            loop_start --> s0
            s0 -->|"success, #35;1#59; x"| s1
            s0 -->|"failure"| s0
            s0 -.->|"_error"| d0
            s1 ==>|"maintain"| s0
            classDef terminal stroke-width:3px
            class s1 terminal
            classDef dynamic stroke-dasharray:4 3
            class d0 dynamic
        """)


def test_golden_dot_with_odd_names_restart_self_loop_and_dynamic_target() -> None:
    assert render_dot(loop(ODD)) == dedent("""\
        digraph "odd" {
            node [shape=box, style=rounded];
            loop_start [shape=point, width=0.2];
            s0 [label="say \\"hi\\" | end"];
            s1 [label="end", peripheries=2];
            d0 [label="${context.next_state}", shape=note, style=dashed];
            loop_start -> s0;
            s0 -> s1 [label="success, #1; x"];
            s0 -> s0 [label="failure"];
            s0 -> d0 [label="_error", style=dashed];
            s1 -> s0 [label="maintain", style=bold];
        }
        """)


def test_mermaid_text_is_one_line_without_syntax_characters() -> None:
    text = mermaid_text('a "b"\n<c> & d | e; 50% `f` \\ #g')
    assert text == "a #34;b#34; #60;c#62; #38; d #124; e#59; 50#37; #96;f#96; #92; #35;g"


def test_shadowed_transitions_are_not_drawn() -> None:
    # `next` wins over on_failure, and route over on_success: the executor never takes them.
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "states": {
                "a": {"action": "x", "next": "b", "on_failure": "c"},
                "b": {"action": "x", "route": {"_": "c"}, "on_success": "a"},
                "c": {"terminal": True, "on_maintain": "a"},
            },
        }
    )
    assert [(e.source, e.target, e.label) for e in edges(fsm)] == [
        ("a", "b", "next"),
        ("b", "c", "_"),
    ]


@pytest.mark.parametrize(("name", "fsm"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_every_state_and_transition_is_drawn(name: str, fsm: FSMLoop) -> None:
    mermaid = render_mermaid(fsm)
    dot = render_dot(fsm)
    ids = {state: f"s{i}" for i, state in enumerate(fsm.states)}
    assert mermaid.startswith("flowchart TD\n")
    assert f"loop_start --> {ids[fsm.initial]}\n" in mermaid
    assert f"loop_start -> {ids[fsm.initial]};\n" in dot
    for state_name, state in fsm.states.items():
        sid = ids[state_name]
        label = mermaid_text(state_name)
        fan = fan_drawing(state_name, state)
        source = sid
        if fan is not None:  # a fan-out state: a fork, its branches, join and merge
            assert f'    {sid}{{{{"{mermaid_text(fan.label)}"}}}}\n' in mermaid
            assert f"        {sid} [label={dot_text(fan.label)}, shape=invtrapezium];\n" in dot
            source = fan.exit(sid)
        elif state.loop is not None:  # a sub-loop state: a subroutine box naming its loop
            shown = f"{state_name}: loop {state.loop}"
            assert f'    {sid}[["{mermaid_text(shown)}"]]\n' in mermaid
            assert f"    {sid} [label={dot_text(shown)}, shape=component];\n" in dot
        elif state.terminal:
            assert f'    {sid}(["{label}"])\n' in mermaid
            assert re.search(rf"^    class .*\b{sid}\b.* terminal$", mermaid, re.M)
            assert f"    {sid} [label={dot_text(state_name)}, peripheries=2];\n" in dot
        else:
            assert f'    {sid}["{label}"]\n' in mermaid
            assert f"    {sid} [label={dot_text(state_name)}];\n" in dot
        for verdict, raw in [(e.label, e.raw) for e in loop_graph(fsm).drawn[state_name]]:
            target = state_name if raw == CURRENT_STATE_TOKEN else raw
            assert target in ids, (state_name, raw)
            arrow = "==>" if verdict == "maintain" else "-->"
            edge = re.search(rf'^    {source} {arrow}\|"([^"]*)"\| {ids[target]}$', mermaid, re.M)
            assert edge is not None, (state_name, verdict, target)
            assert verdict in edge.group(1).split(", ")
            assert re.search(
                rf'^    {source} -> {ids[target]} \[label="[^"]*\b{re.escape(verdict)}\b', dot, re.M
            )


@pytest.mark.skipif(DOT is None, reason="Graphviz (dot) is not installed")
def test_graphviz_accepts_every_example() -> None:
    assert DOT is not None
    graphs = [render_dot(fsm) for _, fsm in EXAMPLES] + [render_dot(loop(ODD))]
    # One dot process reads every graph and writes one SVG for each.
    done = subprocess.run(
        [DOT, "-Tsvg"], input="".join(graphs), capture_output=True, text=True, timeout=scaled(60)
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.count("</svg>") == len(graphs)


def test_a_sub_loop_is_drawn_inside_its_state_with_expand(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "kid.yaml").write_text(
        "name: kid\ninitial: a\nstates:\n  a: {action: 'true', on_success: b}\n"
        "  b: {terminal: true}\n"
    )
    (loops / "top.yaml").write_text(
        "name: top\ninitial: go\nstates:\n  go: {loop: kid, on_success: done}\n"
        "  done: {terminal: true}\n"
    )
    fsm = load_and_validate(loops / "top.yaml")
    assert "subgraph" not in render_mermaid(fsm)
    mermaid = render_mermaid(fsm, expand=True)
    assert '    subgraph s0_loop["loop kid"]\n' in mermaid
    assert '        s0_s0["a"]\n' in mermaid
    assert '        s0_s0 -->|"success"| s0_s1\n' in mermaid
    assert "    s0 -.-> s0_s0\n" in mermaid
    dot = render_dot(fsm, expand=True)
    assert "    subgraph cluster_s0_loop {\n" in dot
    assert '        s0_s1 [label="b", peripheries=2];\n' in dot
    assert "    s0 -> s0_s0 [style=dotted];\n" in dot


FAN_OUT = """\
    name: fans
    initial: each
    states:
      each:
        map:
          items: [a, b, c, d, e, f, g, h]
          loop: fix
          max_concurrency: 2
          merge: green
        on_success: both
        on_failure: done
      both:
        parallel:
          branches:
            - loop: 'say "hi" | ${context.which}'  # a name filled in: checked then
            - loop: ${context.which}
          join: best
          score: echo 1
        route:
          success: lines
          _: done
      lines:
        map:
          items: ${captured.each.merged}
          loop: fix
        on_success: done
        on_failure: done
      done:
        terminal: true
    context:
      which: fix
"""


def test_a_fan_out_state_is_a_fork_into_its_branches_their_join_and_merge_in_mermaid() -> None:
    mermaid = render_mermaid(loop(FAN_OUT))
    each = [
        '    subgraph s0_fan["fan-out"]',
        '    s0{{"each: map, 2 at once"}}',
        *(f'    s0_b{i}[["loop fix: {x}"]]' for i, x in enumerate("abcdef")),
        '    s0_b6[["… 2 more"]]',
        '    s0_join(("join all"))',
        '    s0_merge[/"merge green"/]',
        *(line for i in range(7) for line in (f"    s0 ==> s0_b{i}", f"    s0_b{i} --> s0_join")),
        "    s0_join --> s0_merge",
        "    end",
    ]
    assert "\n".join(each) + "\n" in mermaid
    both = [
        '    subgraph s1_fan["fan-out"]',
        '    s1{{"both: parallel"}}',
        '    s1_b0[["loop say #34;hi#34; #124; ${context.which}"]]',
        '    s1_b1[["loop ${context.which}"]]',
        '    s1_join(("join best by score"))',
    ]
    assert "\n".join(both) + "\n" in mermaid
    assert "s1_merge" not in mermaid  # merge: none: the routes leave from the join
    assert '    s2_b0[["loop fix: each item of ${captured.each.merged}"]]\n' in mermaid
    assert '    s0_merge -->|"success"| s1\n' in mermaid
    assert '    s0_merge -->|"failure"| s3\n' in mermaid
    assert '    s1_join -->|"success"| s2\n' in mermaid
    assert '    s2_join -->|"success, failure"| s3\n' in mermaid
    assert re.search(r"^    s[012] -->", mermaid, re.M) is None  # none leaves the fork itself


def test_a_fan_out_state_is_a_cluster_in_graphviz_and_graphviz_lays_it_out() -> None:
    dot = render_dot(loop(FAN_OUT))
    assert "    subgraph cluster_s0_fan {\n" in dot
    assert '        s0 [label="each: map, 2 at once", shape=invtrapezium];\n' in dot
    assert '        s0_b3 [label="loop fix: d", shape=component];\n' in dot
    assert "        s0 -> s0_b3 [style=bold];\n        s0_b3 -> s0_join;\n" in dot
    assert '        s1_b0 [label="loop say \\"hi\\" | ${context.which}", shape=component];\n' in dot
    assert '        s0_merge [label="merge green", shape=parallelogram];\n' in dot
    assert '    s0_merge -> s1 [label="success"];\n' in dot
    assert '    s1_join -> s2 [label="success"];\n' in dot
    if DOT is None:
        pytest.skip("Graphviz (dot) is not installed")
    drawn = subprocess.run(
        [DOT, "-Tplain"], input=dot, capture_output=True, text=True, timeout=scaled(60)
    )
    assert drawn.returncode == 0, drawn.stderr
    nodes = {line.split()[1]: line for line in drawn.stdout.splitlines() if line.startswith("node")}
    assert {"s0", "s0_b0", "s0_b6", "s0_join", "s0_merge", "s1_b1", "s1_join"} <= set(nodes)
    height = {name: float(line.split()[3]) for name, line in nodes.items()}
    # Top to bottom: the fork, its branches side by side, the join, the merge.
    assert height["s0"] > height["s0_b0"] == height["s0_b6"] > height["s0_join"]
    assert height["s0_join"] > height["s0_merge"]


def test_prompt_branches_are_drawn_with_their_agents_and_the_judge_names_the_join() -> None:
    mermaid = render_mermaid(
        loop("""\
    name: agents
    initial: try
    states:
      try:
        parallel:
          branches:
            - {agent: claude, prompt: Fix it}
            - {agent: codex, prompt: Fix it}
          join: best
          judge: true
        on_success: each
        on_failure: done
      each:
        map:
          items: [claude, codex]
          prompt: Fix it
        on_success: done
        on_failure: done
      done:
        terminal: true
""")
    )
    assert '    s0_b0[["claude prompt"]]\n' in mermaid
    assert '    s0_b1[["codex prompt"]]\n' in mermaid
    assert '    s0_join(("join best by the judge"))\n' in mermaid
    assert '    s1_b1[["prompt on codex"]]\n' in mermaid
    assert "None" not in mermaid
