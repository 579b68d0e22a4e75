"""Commands that run their arguments or their input as code refuse a value there."""

from __future__ import annotations

import pytest

from little_loops.fsm.values.shellquote import unquotable


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("eval ${context.x}", "in the arguments of eval"),
        ("sudo -u root eval ${context.x}", "in the arguments of eval"),
        ("env X=1 sh -c ${context.x}", "as the script sh runs"),
        ("bash ${context.x}", "as the script file bash runs"),
        ("bash -o pipefail -c ${context.x}", "as the script bash runs"),
        ("find . -exec sh -c ${context.x} \\;", "as the script sh runs"),
        ("ssh host ${context.x}", "in the arguments of ssh"),
        ("$BASH -c ${context.x}", "a command whose name is not a plain word"),
        ("printf -v ${context.x} x", "where printf reads its options"),
        ("test -v ${context.x}", "as the name a -v test reads"),
        ("declare ${context.x}=1", "in the name of a variable bash assigns"),
        ("export PS4=${context.x}", "as the value of PS4"),
        ("echo ${context.x} | sudo bash", "in the input of a shell"),
        ("bash <<<${context.x}", "in the input of a shell"),
        ("unset ${context.x}", "in the arguments of unset"),
        # Found by the fuzz (scripts/tests/fuzz) once values reached bash in variables:
        ("PS4=${context.x}; set -x; :", "as the value of PS4"),
        ("time -p ! PS4=${U:-${context.x}}; set -x", "as the value of PS4"),
        ("env BASH_ENV=${context.x} bash -c true", "as the value of BASH_ENV"),
        ("setpriv bash -c ${context.x}", "as the script bash runs"),
        ('xargs sh -c $"${context.x}" < /dev/null', "as the script sh runs"),
        ('echo "$(env -u NOPE bash -c $"${context.x}")"', "as the script bash runs"),
        ('coproc { bash <<< "${context.x}"; }', "in a script with a coproc"),
        ("time -p . <(echo ${context.x})", "in the arguments of ."),
        (': "$(echo ")")" && bash <<EOF\necho ${context.x}\nEOF', "a shell reads as its script"),
        ("x=$(env X=$(echo ${context.x}) printenv X)", "splits its output into the command"),
        ("$(echo ${context.x}) arg", "splits its output into the command"),
        # tree-sitter swallows the next line into a redirect's word: bash reads `\eval`.
        ('echo b >> "$R"\n\\eval ${context.x}', "cannot tell how bash reads it"),
    ],
)
def test_refused(template: str, why: str) -> None:
    problems = unquotable(template)
    assert len(problems) == 1
    assert why in problems[0]


@pytest.mark.parametrize(
    "template",
    [
        "V=${context.x} bash -c 'echo \"$V\"'",
        "bash -c 'echo \"$1\"' _ ${context.x}",
        "timeout 5 printf %s ${context.x}",
        "declare w=${context.x}",
        "bash script <<< ${context.x}",
        "grep -r ${context.x} .",
        "git commit -m ${context.x}",
        "grep -r bash ${context.x}",
        "make CFLAGS=${context.x}",
        "echo $(echo ${context.x})",
        'env X="$(echo ${context.x})" printenv X',
        "find . -name ${context.x}",
        "arr[0]=${context.x}",
    ],
)
def test_data(template: str) -> None:
    assert unquotable(template) == []
