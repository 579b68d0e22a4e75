"""A value handed to an alias, a function or a `sh -c` script is placed where they put it."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.values.shellquote import unquotable


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("alias e=eval\ne ${context.v}", "in the arguments of alias e"),
        ('f() { eval "$@"; }; f ${context.v}', "as an argument of function f"),
        ('f() { g "$1"; }; g() { eval "$1"; }; f ${context.v}', "function g"),
        ("bash -c 'eval \"$1\"' _ ${context.v}", "as an argument of the script bash -c runs"),
        ("V=${context.v} bash -c 'eval \"$V\"'", "in the arguments of eval"),
        ("env V=${context.v} sh -c 'x=$(( $V ))'", "in bash arithmetic"),
    ],
)
def test_followed_into_code(template: str, why: str) -> None:
    problems = unquotable(template)
    assert len(problems) == 1
    assert why in problems[0]


@pytest.mark.parametrize(
    "template",
    [
        'f() { printf %s "$1"; }; f ${context.v}',
        'f() { f "$@"; }; f ${context.v}',  # recursion ends
        "V=${context.v} bash -c 'echo \"$V\"'",
        'bash -c \'printf %s "$2"; eval "$1"\' _ a ${context.v}',  # eval reads $1 only
        'alias ll="ls -l"; echo ${context.v}',
    ],
)
def test_data_stays_data(template: str) -> None:
    assert unquotable(template) == []


def test_following_costs_once_per_command_not_once_per_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Walking the whole script (for aliases, functions, shells) once per reference made
    # 2,000 references take 12 s to check: those walks must not grow with the references.
    from little_loops.fsm.values import shellcalls, shellparse

    walks = 0
    walk = shellcalls.nodes

    def counted(root: Any) -> Any:
        nonlocal walks
        walks += root.parent is None  # a walk of the whole script, not of a function body
        return walk(root)

    monkeypatch.setattr(shellcalls, "nodes", counted)
    monkeypatch.setattr(shellparse, "nodes", counted)

    def walked(count: int) -> int:
        nonlocal walks
        refs = " ".join("${context.a}" for _ in range(count))
        walks = 0
        assert unquotable(f'f() {{ printf %s "$1"; }}\nf {refs}\nsetpriv echo {refs}') == []
        return walks

    assert walked(1000) == walked(10) > 0


def test_tree_sitter_bash_imported_later_is_whole() -> None:
    """ll-loop reads the grammar from tree-sitter-bash's compiled module without its package;
    a caller that imports the package afterwards still finds the module as an attribute of it
    (registering it in sys.modules first made `tree_sitter_bash._binding` an AttributeError)."""
    import subprocess
    import sys

    script = (
        "from little_loops.fsm.values.shellcalls import bash_parser\n"
        "bash_parser()\n"
        "import tree_sitter_bash._binding\n"
        "print(tree_sitter_bash._binding.language() is not None, tree_sitter_bash.language)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True ")
