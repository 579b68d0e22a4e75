"""Values in shell actions are quoted for the bash context they land in: data, never code."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import interpolate_shell, unquotable

# The same value handed to printf in each context a reference can be quoted in; the
# outputs are NUL-separated (bash cannot carry a NUL, so no value has one).
TEMPLATES = [
    "printf '%s\\0' ${context.x}",
    "printf '%s\\0' \"${context.x}\"",
    "printf '%s\\0' '${context.x}'",
    "printf '%s\\0' $'${context.x}'",
    "printf '%s\\0' pre${context.x}post",
    "printf '%s\\0' \"$(printf '%s' \"${context.x}\")\"",
    "printf '%s\\0' \"a ${context.x} 'b' $HOME_NOT_SET\"",
    "printf '%s\\0' $( : ) '${context.x}'\"${context.x}\"${context.x}",
]


def expected(value: str) -> list[str]:
    return [
        value,
        value,
        value,
        value,
        f"pre{value}post",
        value.rstrip("\n"),  # $(...) drops trailing newlines, quoted or not
        f"a {value} 'b' ",
        value * 3,
    ]


def bash(script: str) -> bytes:
    return subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout


def shell(template: str, **context: Any) -> str:
    return interpolate_shell(template, InterpolationContext(context=context, env={}))


PIECES = ["'", '"', "`", "$", "$(", "${", "\\", "\n", ";", "*", "?", "[", "!", "#", "-", " "]
values = st.lists(
    st.one_of(
        st.sampled_from(PIECES),
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), max_size=8),
    ),
    max_size=12,
).map("".join)


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(values, min_size=1, max_size=8))
def test_fuzz_bash_receives_exactly_the_value(batch: list[str]) -> None:
    # One bash process for the whole batch: every value in every template.
    script = "\n".join(shell(t, x=value) for value in batch for t in TEMPLATES)
    got = bash(script).decode("utf-8", "surrogateescape").split("\0")[:-1]
    assert got == [text for value in batch for text in expected(value)]


@pytest.mark.parametrize(
    ("template", "out"),
    [
        ("echo ${context.n} ${context.t} ${context.f}", "3 true 1.5"),  # numbers as text
        ("test ${context.n} -ge 2 && echo yes", "yes"),
        ('for f in ${context.files}; do echo "[$f]"; done', "[a b]\n[c]"),  # a word each
        ('echo "${context.files}"', "a b c"),  # quoted: joined with spaces
        ("echo '${context.files}'", "a b c"),
        ("for f in ${context.none}; do echo x; done; echo end", "end"),  # no words
        ("echo ${context.d}", '{"k": [1, "it\'s"]}'),  # a mapping as its JSON
        ("printf '[%s]' x${context.empty}y ${context.empty} '${context.empty}'", "[xy][][]"),
        ("echo $(( ${context.n} * 2 ))", "6"),
    ],
)
def test_kinds_of_value(template: str, out: str) -> None:
    context = {
        "n": 3,
        "t": True,
        "f": 1.5,
        "files": ["a b", "c"],
        "none": [],
        "d": {"k": [1, "it's"]},
        "empty": "",
    }
    assert bash(shell(template, **context)).decode().strip() == out


def test_here_documents() -> None:
    value = 'it\'s $HOME `date` \\ "x"'
    for template in (
        "cat <<EOF\n${context.x}\nEOF",
        "cat <<'EOF'\n${context.x}\nEOF",
        "cat <<-EOF\n\t${context.x}\n\tEOF",
    ):
        assert bash(shell(template, x=value)).decode() == value + "\n"
    with pytest.raises(InterpolationError, match="would end the here-document"):
        shell("cat <<EOF\n${context.x}\nEOF", x="a\nEOF\ntouch PWNED")


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("echo `echo ${context.x}`", "inside `...`"),
        ('echo "`echo ${context.x}`"', "inside `...`"),
        ("echo ${X:-${context.x}}", "inside a bash ${...} expansion"),
        ("echo hi # ${context.x}", "in a bash comment"),
        ("echo \\${context.x}", "right after a backslash"),
        ('echo "\\${context.x}"', "right after a backslash"),
        ("echo hi >&${context.x}", "in the word after >& or <&"),
        ("echo hi 1>& x${context.x}", "in the word after >& or <&"),
        ('echo hi >&"$(echo ${context.x})"', "in the word after >& or <&"),
        ("echo $(echo\n'a' ${context.x}", "in a command with a quote, bracket or substitution"),
        ("echo $\\\n'${context.x}'", "where ll-loop cannot tell how bash reads it"),
        ("cat <<$X\n${context.x}\n$X", "where ll-loop cannot tell how bash reads it"),
    ],
)
def test_contexts_that_cannot_be_quoted_are_refused(template: str, why: str) -> None:
    with pytest.raises(InterpolationError, match=f"cannot be quoted {why}".replace("$", r"\$")):
        shell(template, x="a\ntouch PWNED")
    assert [why in problem for problem in unquotable(template)] == [True]
    raw = template.replace("${context", "${raw:context")
    assert unquotable(raw) == []
    assert "touch PWNED" in shell(raw, x="a\ntouch PWNED")


@pytest.mark.parametrize(
    "template",
    [
        "echo $$ $# $? '#' a#b ${#HOME} $${HOME} ${context.x}",  # not comments, nor quotes
        "case a in a) echo ${context.x};; esac",
        '( echo ${context.x} ) && echo "$( (echo ${context.x}) )"',
        "echo $((1 + (2))) ${context.x}",
        'echo "it\'s" ${context.x}',
        "echo 'say \"' ${context.x}",
        "cat <<<${context.x}",
        "x=$'\\'' ; echo ${context.x}",
    ],
)
def test_the_scanner_is_not_confused(template: str) -> None:
    out = bash(shell(template, x="$(touch PWNED); echo 'hi'"))
    assert out.decode().count("$(touch PWNED); echo 'hi'") >= 1


def test_arithmetic_takes_integers_only() -> None:
    with pytest.raises(InterpolationError, match="is not an integer"):
        shell("echo $(( ${context.x} + 1 ))", x="a[$(touch PWNED)]")


def test_raw_pastes_the_text_as_it_is() -> None:
    assert shell("${raw:context.cmd} | wc -l", cmd="ls -1 'a b'") == "ls -1 'a b' | wc -l"
    assert shell("echo ${context.cmd}", cmd="ls -1 'a b'") == "echo 'ls -1 '\\''a b'\\'''"
