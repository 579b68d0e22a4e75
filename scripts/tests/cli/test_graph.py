"""`ll-loop graph`: the diagram on stdout, errors as one line and exit 2."""

from __future__ import annotations

from support.paths import DATA, REPO
from support.project import LoopProject

from little_loops.fsm.definition.writing.diagram import render_dot, render_mermaid
from little_loops.fsm.validate.loopfile import load_and_validate

FIX_TYPES = (DATA / "doc_loops" / "fix-types.yaml").read_text()
LOOP = """\
name: demo
initial: check
states:
  check:
    action: pytest
    on_success: done
    on_failure: check
  done:
    terminal: true
"""


def test_graph_prints_mermaid_by_default(loop_project: LoopProject) -> None:
    path = loop_project.write("demo", LOOP)
    result = loop_project.run("graph", "demo")
    assert result.code == 0
    assert result.err == ""
    assert result.out == render_mermaid(load_and_validate(path))
    assert result.out.splitlines()[5:7] == [
        "    loop_start --> s0",
        '    s0 -->|"success"| s1',
    ]


def test_graph_dot_format_and_path_argument(loop_project: LoopProject) -> None:
    path = loop_project.write("demo", LOOP)
    result = loop_project.run("graph", ".loops/demo.yaml", "--format", "dot")
    assert result.code == 0
    assert result.out == render_dot(load_and_validate(path))
    assert '    s0 -> s0 [label="failure"];' in result.out.splitlines()


def test_graph_of_an_invalid_loop_is_one_line_and_exit_2(loop_project: LoopProject) -> None:
    loop_project.write("bad", LOOP.replace("on_failure: check", "on_failure: chek"))
    result = loop_project.run("graph", "bad")
    assert result.code == 2
    assert result.out == ""
    assert result.err == (
        "ll-loop: error: .loops/bad.yaml:7: loop 'demo' > states > check > on_failure: 'chek' "
        "is not a state (did you mean check?)\n"
    )


def test_graph_of_an_unknown_loop(loop_project: LoopProject) -> None:
    loop_project.write("demo", LOOP)
    result = loop_project.run("graph", "dmeo")
    assert result.code == 2
    assert result.err.startswith("ll-loop: error: no loop named 'dmeo' (did you mean demo?)")


def test_graph_rejects_an_unknown_format(loop_project: LoopProject) -> None:
    loop_project.write("demo", LOOP)
    result = loop_project.run("graph", "demo", "--format", "svg")
    assert result.code == 2
    assert "argument --format: invalid choice: 'svg'" in result.err


def test_the_example_in_docs_is_the_real_output(loop_project: LoopProject) -> None:
    docs = (REPO / "docs" / "analysis.md").read_text()
    block = docs.split("```mermaid\n", 1)[1].split("```", 1)[0]
    loop_project.write("fix-types", FIX_TYPES)
    assert loop_project.run("graph", "fix-types").out == block
