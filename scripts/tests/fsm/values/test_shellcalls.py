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
