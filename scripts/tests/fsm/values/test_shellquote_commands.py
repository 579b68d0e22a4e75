"""Which command a reference is an argument of (values/shellquote_commands.py): code runners
refuse it, arithmetic builtins take integers only."""

from __future__ import annotations

import pytest

from little_loops.fsm.values.shellquote_commands import refine
from little_loops.fsm.values.shellscan import ARITH, DOUBLE, WORD, Scanner

REF = "${context.x}"


def _refined(template: str) -> list[str]:
    scanner = Scanner(template)
    found = scanner.run()
    refine(scanner, found)
    return [found[start] for start in sorted(found)]


@pytest.mark.parametrize(
    "template",
    [
        f"eval {REF}",
        f"bash -c {REF}",
        f'sh -c "echo {REF}"',
        f"sudo -u me eval {REF}",
        f"env A=1 bash -c {REF}",
        f"find . -exec sh -c {REF} \\;",
        f"trap {REF} EXIT",
        f"ssh host {REF}",
        f"bash <<EOF\n{REF}\nEOF",
    ],
)
def test_a_reference_a_command_runs_as_code_is_evaluated(template: str) -> None:
    assert _refined(template) == ["evaluated"]


@pytest.mark.parametrize(
    ("template", "kind"),
    [
        (f"echo {REF}", WORD),
        (f'grep "{REF}" file', DOUBLE),
        (f"bash -c 'echo $1' _ {REF}", WORD),  # after the command string: $1, data
        (f"cat <<EOF\n{REF}\nEOF", "heredoc"),
        (f"let n={REF}", ARITH),
        (f"declare -i n={REF}", ARITH),
        (f"[[ {REF} -eq 3 ]]", ARITH),
        (f"[[ {REF} == 3 ]]", WORD),
    ],
)
def test_other_references_keep_or_narrow_their_context(template: str, kind: str) -> None:
    assert _refined(template) == [kind]
