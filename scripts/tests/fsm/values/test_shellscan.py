"""The bash scanner (values/shellscan.py): the quoting context of each reference, as bash
reads the command, and where it loses track."""

from __future__ import annotations

import pytest

from little_loops.fsm.values.shellscan import (
    ANSI,
    ARITH,
    DOUBLE,
    HEREDOC,
    HEREDOC_LITERAL,
    SINGLE,
    WORD,
    Scanner,
)

REF = "${context.x}"


def _kinds(template: str) -> list[str]:
    """The context of each reference in *template*, in order."""
    found = Scanner(template).run()
    return [found[start] for start in sorted(found)]


@pytest.mark.parametrize(
    ("template", "kind"),
    [
        (f"echo {REF}", WORD),
        (f'echo "{REF}"', DOUBLE),
        (f"echo '{REF}'", SINGLE),
        (f"echo $'{REF}'", ANSI),
        (f"echo $(( {REF} + 1 ))", ARITH),
        (f"echo $[{REF}]", ARITH),
        (f"(( n = {REF} ))", ARITH),
        (f'echo "$(echo {REF})"', WORD),
        (f"echo `{REF}`", "backtick"),
        (f"echo ${{HOME:-{REF}}}", "parameter"),
        (f"echo hi # {REF}", "comment"),
        (f"echo \\{REF}", "backslash"),
        (f"echo hi >&{REF}", "redirect"),
        (f"echo '{REF}", "unclosed"),
        (f"echo $(echo {REF}", "unclosed"),
        (f"[[ {REF} == a ]]", WORD),
    ],
)
def test_each_context_is_named(template: str, kind: str) -> None:
    assert _kinds(template) == [kind]


def test_here_document_bodies_and_their_delimiters() -> None:
    scanner = Scanner(f"cat <<EOF\n{REF}\nEOF\ncat <<'END'\n{REF}\nEND\necho {REF}")
    found = scanner.run()
    assert [found[k] for k in sorted(found)] == [HEREDOC, HEREDOC_LITERAL, WORD]
    starts = sorted(scanner.delimiters)
    assert [scanner.delimiters[s] for s in starts] == ["EOF", "END"]
    tabbed = Scanner(f"cat <<-EOF\n\t{REF}\n\tEOF")
    tabbed.run()
    assert list(tabbed.delimiters.values()) == ["\tEOF"]


def test_a_line_continuation_joining_an_operator_loses_track() -> None:
    assert _kinds(f"echo $\\\n'{REF}'") == ["unknown"]
    assert _kinds(f"echo a \\\n{REF}") == [WORD]


def test_an_escaped_reference_opens_bash_parameter_context() -> None:
    # `$${...}` is ll-loop's escape for bash's own `${...}`: a reference inside it is refused.
    assert _kinds(f"echo $${{HOME:-{REF}}}") == ["parameter"]


def test_word_starts_after_blanks_operators_and_line_continuations() -> None:
    scanner = Scanner("a b;c \\\nd\\\ne")
    starts = [scanner.word_starts(i) for i in (0, 1, 2, 4, 8, 11)]
    assert starts == [True, False, True, True, True, False]
    assert scanner.escaped(7) is True
    assert scanner.escaped(6) is False
