"""Values in shell actions reach bash in environment variables: data, never code."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import Rendered, env_lines, render, unquotable

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


def bash(script: Rendered) -> bytes:
    env = {**os.environ, **script.env}
    return subprocess.run(
        ["bash", "-c", script.script], capture_output=True, check=True, env=env
    ).stdout


def shell(template: str, **context: Any) -> Rendered:
    return render(template, InterpolationContext(context=context, env={}))


def joined(scripts: list[Rendered]) -> Rendered:
    """Several rendered scripts as one, each one's variables renamed apart."""
    parts, env = [], {}
    for number, one in enumerate(scripts):
        text = one.script
        for name in sorted(one.env, key=len, reverse=True):
            text = text.replace("{" + name + "}", "{" + name + f"_{number}" + "}")
            env[f"{name}_{number}"] = one.env[name]
        parts.append(text)
    return Rendered("\n".join(parts), env)


PIECES = ["'", '"', "`", "$", "$(", "${", "\\", "\n", ";", "*", "?", "[", "!", "#", "-", " "]
values = st.lists(
    st.one_of(
        st.sampled_from(PIECES),
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), max_size=8),
    ),
    max_size=12,
).map("".join)
values = values.filter(lambda v: "$${" not in v)  # a context value's `$${` reads as `${`


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(values, min_size=1, max_size=8))
def test_fuzz_bash_receives_exactly_the_value(batch: list[str]) -> None:
    # One bash process for the whole batch: every value in every template.
    script = joined([shell(t, x=value) for value in batch for t in TEMPLATES])
    got = bash(script).decode("utf-8", "surrogateescape").split("\0")[:-1]
    assert got == [text for value in batch for text in expected(value)]


@pytest.mark.parametrize(
    ("template", "out"),
    [
        ("echo ${context.n} ${context.t} ${context.f}", "3 true 1.5"),  # numbers as text
        ("test ${context.n} -ge 2 && echo yes", "yes"),
        ('for f in ${context.files}; do echo "[$f]"; done', "[a b c]"),  # one word
        ('for f in ${words:context.files}; do echo "[$f]"; done', "[a b]\n[c]"),  # a word each
        ('echo "${context.files}"', "a b c"),  # quoted: joined with spaces
        ("echo '${context.files}'", "a b c"),
        ("for f in ${words:context.none}; do echo x; done; echo end", "end"),  # no words
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
    value = 'it\'s $HOME `date` \\ "x"\nEOF\ntouch PWNED'
    for template in (
        "cat <<EOF\n${context.x}\nEOF",
        "cat <<'EOF'\n${context.x}\nEOF",
        "cat <<-EOF\n\t${context.x}\n\tEOF",
    ):
        assert bash(shell(template, x=value)).decode() == value + "\n"


def test_a_quoted_here_document_keeps_its_own_text_literal() -> None:
    template = "cat <<'EOF'\n$HOME `date` \\ ${context.x}\nEOF"
    assert bash(shell(template, x="$HOME")).decode() == "$HOME `date` \\ $HOME\n"


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("eval ${context.x}", "in the arguments of eval"),
        ("bash -c ${context.x}", "as the script bash runs"),
        ("time -p bash -c ${context.x}", "as the script bash runs"),
        ("timeout --signal KILL 5 sh -c ${context.x}", "as the script sh runs"),
        ('"$SHELL" -c ${context.x}', "in the arguments of a command whose name is not"),
        ("echo ${context.x} | bash", "in the input of a shell"),
        ("bash <<EOF\n${context.x}\nEOF", "in a here-document a shell reads"),
        ("arr=([${context.x}]=x)", "in a compound array assignment"),
        ('declare -a "a=(${context.x})"', "in a declare/local/export with -i, -n, -a or -A"),
        ("BASH_ENV=${context.x} bash -c :", "as the value of BASH_ENV"),
        ("echo $(case a in a)((x=${context.x}));; esac)", "where ll-loop cannot tell"),
        ("echo $(echo\n'a' ${context.x}", "where ll-loop cannot tell"),
    ],
)
def test_places_where_bash_runs_a_value_are_refused(template: str, why: str) -> None:
    with pytest.raises(InterpolationError, match=re.escape(f"not allowed {why}")):
        shell(template, x="a\ntouch PWNED")
    assert [why in problem for problem in unquotable(template)] == [True]
    raw = template.replace("${context", "${raw:context")
    assert unquotable(raw) == []
    assert "touch PWNED" in shell(raw, x="a\ntouch PWNED").script


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
        "echo `echo ${context.x}`",  # once refused: the value is never parsed now
        "echo ${X:-${context.x}}",
        'echo "$(case a in a) echo ${context.x};; esac)"',
        "bash -c 'echo \"$1\"' _ ${context.x}",  # data after the script
    ],
)
def test_the_parser_is_not_confused(template: str) -> None:
    out = bash(shell(template, x="$(touch PWNED); echo 'hi'"))
    assert "$(touch PWNED); echo 'hi'" in out.decode()


def test_arithmetic_takes_integers_only() -> None:
    with pytest.raises(InterpolationError, match="is not an integer"):
        shell("echo $(( ${context.x} + 1 ))", x="a[$(touch PWNED)]")
    assert shell("echo $(( ${context.x} + 1 ))", x=41).script == "echo $(( 41 + 1 ))"


def test_raw_pastes_the_text_as_it_is() -> None:
    assert shell("${raw:context.cmd} | wc -l", cmd="ls -1 'a b'").script == "ls -1 'a b' | wc -l"
    rendered = shell("echo ${context.cmd}", cmd="ls -1 'a b'")
    assert (rendered.script, rendered.env) == ('echo "${LL_V_1}"', {"LL_V_1": "ls -1 'a b'"})
    assert env_lines(rendered.env) == [r"LL_V_1='ls -1 '\''a b'\'''"]


def test_words_makes_one_word_per_item_only_where_bash_reads_words() -> None:
    items = ["a", "sh", "-c", "touch PWNED", "x"]
    assert bash(shell("printf '[%s]' ${words:context.l}", l=items)).decode() == (
        "[a][sh][-c][touch PWNED][x]"
    )
    with pytest.raises(InterpolationError, match="one word per item is only possible"):
        shell('echo "${words:context.l}"', l=items)


def test_values_too_big_for_the_environment_or_with_a_nul_are_refused() -> None:
    with pytest.raises(InterpolationError, match="more than the 131,008 one environment"):
        shell("echo ${context.x}", x="a" * 200_000)
    with pytest.raises(InterpolationError, match="NUL byte"):
        shell("echo ${context.x}", x="a\0b")


def test_actions_that_differ_only_in_what_their_references_name_are_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The scaling of validate (2,000 states each reading another capture) and of a run's
    # steps: the bash parse of a template depends only on its placeholder script.
    from little_loops.fsm.values import shellquote

    parsed: list[bytes] = []
    real = shellquote.placements

    def counting(script: bytes, spans: list[tuple[int, int]]) -> Any:
        parsed.append(script)
        return real(script, spans)

    monkeypatch.setattr(shellquote, "placements", counting)
    for cached in (shellquote._placed, shellquote._plain):  # what earlier tests left
        cached.cache_clear()
    texts = [f"echo ${{captured.c{i}.exit_code}} | tee out-{i}" for i in range(50)]
    assert all(unquotable(text) == [] for text in texts)
    ctx = InterpolationContext(context={"x": "a b"})
    for _ in range(20):  # one action on every step of a run
        assert render("printf '%s' ${context.x}", ctx).env == {"LL_V_1": "a b"}
    assert len(parsed) == 50 + 1  # each `tee out-N` is its own script; the steps share one
    texts = [f"echo ${{captured.c{i}.exit_code}}" for i in range(50)]
    parsed.clear()
    assert all(unquotable(text) == [] for text in texts)
    assert len(parsed) == 1


def test_a_script_with_a_value_pasted_in_is_not_remembered() -> None:
    # `${raw:...}` pastes a value (up to a 64 KiB capture) into the script at each step: a
    # long run must not keep thousands of them.
    from little_loops.fsm.values import shellquote

    before = shellquote._placed.cache_info().currsize
    for i in range(50):
        ctx = InterpolationContext(context={"x": f"echo {i}", "y": "v"})
        rendered = render("${raw:context.x} ${context.y}", ctx)
        assert rendered.script.startswith(f"echo {i} ")
    assert shellquote._placed.cache_info().currsize <= before + 1
