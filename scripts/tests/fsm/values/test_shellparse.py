"""The bash parser places each reference: quoted as data, integer-only, or refused."""

from __future__ import annotations

import pytest

from little_loops.fsm.values.shellparse import (
    ANSI,
    ARITH,
    COMMENT,
    DOUBLE,
    HEREDOC,
    HEREDOC_QUOTED,
    SINGLE,
    UNKNOWN,
    WORD,
    placements,
)

REF = "LLREF0XTEST"


def place(template: str) -> tuple[str, str]:
    script = template.replace("X", REF).encode()
    start = script.index(REF.encode())
    found = placements(script, [(start, start + len(REF))])[0]
    return found.form, found.refused


@pytest.mark.parametrize(
    ("template", "form"),
    [
        ("echo X", WORD),
        ('echo "a X"', DOUBLE),
        ("echo 'a X'", SINGLE),
        ("echo $'a X'", ANSI),
        ("cat <<EOF\nX\nEOF", HEREDOC),
        ("cat <<'EOF'\nX\nEOF", HEREDOC_QUOTED),
        ("echo hi # X", COMMENT),
        ('echo "$(echo X)"', WORD),
        ('echo "$(case a in a) echo X;; esac)"', WORD),
        ("echo ${v:-X}", WORD),
        ('echo "${v:-X}"', DOUBLE),
        ("echo $((X + 1))", ARITH),
        ("((n += X))", ARITH),
        ("for ((i=0; i<X; i++)); do :; done", ARITH),
        ("echo ${a[X]}", ARITH),
        ("echo ${s:X}", ARITH),
        ("[[ X -gt 1 ]]", ARITH),
        ('[ "X" -gt 1 ]', DOUBLE),  # `[` and test read a plain integer, never evaluate it
        ("test X -gt 1", WORD),
        ("let n=X", ARITH),
    ],
)
def test_forms(template: str, form: str) -> None:
    assert place(template) == (form, "")


@pytest.mark.parametrize(
    "template",
    [
        "echo $(echo\n'a' X",  # broken: bash may read it any way
        "case a in a)((x=X));; esac",  # tree-sitter cannot read it: refused, not guessed
    ],
)
def test_what_the_parser_cannot_read_is_refused(template: str) -> None:
    assert place(template) == ("", UNKNOWN)


def test_a_whole_argument_may_be_many_words() -> None:
    script = f"echo {REF} a{REF}".encode()
    first, second = placements(script, [(5, 5 + len(REF)), (len(script) - len(REF), len(script))])
    assert (first.words, second.words) == (True, False)


def test_a_quoted_delimiter_that_is_not_one_word_is_refused() -> None:
    # Made unquoted so the value can be expanded, `"E O"` would be the delimiter E and a word.
    form, refused = place('cat <<-"E O"\n\tX\n\tE O')
    assert (form, refused) == ("", "in a here-document whose quoted delimiter is not a plain word")
