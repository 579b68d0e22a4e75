"""Validation of sub-loop states: keys, the child file, its parameters, recursion."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from little_loops.fsm.validate.loopfile import check_file

CHILD = """\
name: child
parameters:
  n: integer
  mode:
    type: string
    default: fast
    choices: [fast, slow]
initial: a
states:
  a: {action: 'true', on_success: done}
  done: {terminal: true}
"""


ASKER = """\
name: asker
initial: ask
states:
  ask: {action_type: approval, action: Ship?, on_success: done, on_failure: done}
  done: {terminal: true}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def parent(folder: Path, state: str) -> Path:
    body = textwrap.indent(textwrap.dedent(state), "    ")
    return write(
        folder,
        "parent",
        f"name: parent\ninitial: go\nstates:\n  go:\n{body}  done:\n    terminal: true\n",
    )


def errors(path: Path) -> list[str]:
    return [str(e) for e in check_file(path).errors]


def test_a_valid_sub_loop_state_loads_its_child(tmp_path: Path) -> None:
    write(tmp_path, "child", CHILD)
    report = check_file(parent(tmp_path, "loop: child\nwith: {n: 3}\non_success: done\n"))
    assert report.errors == []
    assert report.fsm is not None
    assert report.fsm.children["go"].name == "child"


def test_a_loop_without_sub_loops_reads_no_other_file(tmp_path: Path) -> None:
    path = parent(tmp_path, "action: 'true'\non_success: done\n")
    report = check_file(path)
    assert report.errors == []
    assert report.fsm is not None
    assert report.fsm.children == {}


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            "loop: child\naction: echo\nwith: {n: 1}\non_success: done\n",
            "go > action: a sub-loop state (loop:) runs the child loop: it cannot have action",
        ),
        (
            "loop: child\nwith: {n: 1}\nevaluate: {type: exit_code}\non_success: done\n",
            "go > evaluate: a sub-loop state (loop:) runs the child loop: it cannot have evaluate",
        ),
        ("action: 'true'\nwith: {n: 1}\non_success: done\n", "go > with: only a sub-loop state"),
        ("action: 'true'\noutcome: failure\non_success: done\n", "go > outcome: only a terminal"),
        ("loop: chld\non_success: done\n", "go > loop: no loop named 'chld' in "),
        ("loop: child\nwith: {n: x}\non_success: done\n", "with > n: parameter of loop 'child'"),
        (
            "loop: child\nwith: {n: 1, mode: medium}\non_success: done\n",
            "with > mode: parameter of loop 'child': expected one of fast, slow, got 'medium'",
        ),
        ("loop: child\non_success: done\n", "go > with: missing required parameter 'n'"),
        (
            "loop: child\nwith: {n: 1, mod: slow}\non_success: done\n",
            "with > mod: unknown parameter of loop 'child' (did you mean mode?)",
        ),
        ("loop: ./nope.yaml\non_success: done\n", "nope.yaml: no such file"),
        (
            "loop: child\nwith: {n: 1}\nretry: {max_attempts: 2}\non_success: done\n",
            "go > retry: a sub-loop state (loop:) runs the child loop: it cannot have retry",
        ),
        ("loop: asker\non_success: done\n", "child loop asker.yaml has an approval state (ask)"),
    ],
)
def test_problems_name_the_state_and_key(tmp_path: Path, state: str, message: str) -> None:
    write(tmp_path, "child", CHILD)
    write(tmp_path, "asker", ASKER)
    found = errors(parent(tmp_path, state))
    assert any(message in e for e in found), found


def test_an_interpolated_value_is_checked_when_the_state_runs(tmp_path: Path) -> None:
    write(tmp_path, "child", CHILD)
    path = parent(tmp_path, 'loop: child\nwith: {n: "${context.x}"}\non_success: done\n')
    path.write_text(path.read_text() + "context: {x: 4}\n")
    assert errors(path) == []


def test_an_invalid_child_is_reported_at_the_parents_state(tmp_path: Path) -> None:
    write(tmp_path, "child", "name: child\ninitial: a\nstates:\n  a: {on_sucess: a}\n")
    found = errors(parent(tmp_path, "loop: child\non_success: done\n"))
    assert len(found) == 1
    assert "loop 'parent' > states > go > loop: child loop child.yaml is not valid:" in found[0]


def test_recursion_through_a_grandchild_is_rejected(tmp_path: Path) -> None:
    for name, other in (("a", "b"), ("b", "c"), ("c", "a")):
        write(
            tmp_path,
            name,
            f"name: {name}\ninitial: go\nstates:\n  go: {{loop: {other}, on_success: done}}\n"
            "  done: {terminal: true}\n",
        )
    found = errors(tmp_path / "a.yaml")
    assert len(found) == 1
    assert "recursion: a.yaml > b.yaml > c.yaml > a.yaml runs itself" in found[0]


def chain(folder: Path, levels: int) -> Path:
    """l0 runs l1 ... runs l<levels>, a loop with no sub-loop: *levels* deep."""
    for n in range(levels):
        write(
            folder,
            f"l{n}",
            f"name: l{n}\ninitial: go\nstates:\n  go: {{loop: l{n + 1}, on_success: done}}\n"
            "  done: {terminal: true}\n",
        )
    leaf = f"name: l{levels}\ninitial: go\nstates:\n  go: {{action: 'true', terminal: true}}\n"
    write(folder, f"l{levels}", leaf)
    return folder / "l0.yaml"


def test_sub_loops_nest_at_most_32_deep(tmp_path: Path) -> None:
    # 150 levels passed validation and then ran out of Python's stack mid-run.
    assert errors(chain(tmp_path, 32)) == []
    (found,) = errors(chain(tmp_path, 33))
    assert found.endswith("sub-loops nest more than 32 deep (at l33.yaml)")


def test_a_loop_running_itself_is_rejected(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "me",
        "name: me\ninitial: go\nstates:\n  go: {loop: me, on_success: done}\n"
        "  done: {terminal: true}\n",
    )
    assert any("recursion: me.yaml > me.yaml runs itself" in e for e in errors(path))


def test_a_paradigm_child_is_compiled_and_a_library_child_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        "conv",
        "paradigm: convergence\nname: conv\ncheck: echo 1\ntoward: 0\nusing: echo\n",
    )
    path = parent(
        tmp_path,
        "loop: conv\non_success: lib\n",
    )
    path.write_text(
        path.read_text().replace(
            "  done:", "  lib:\n    loop: library:hello\n    on_success: done\n  done:"
        )
    )
    report = check_file(path)
    assert [str(e) for e in report.errors] == []
    assert report.fsm is not None
    assert report.fsm.children["go"].paradigm == "convergence"
    assert report.fsm.children["lib"].name == "hello"
