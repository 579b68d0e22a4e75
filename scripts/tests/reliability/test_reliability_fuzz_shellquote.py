"""Fuzzing the shell quoting with random bash around a reference: a hostile value never runs.

The templates are made of bash's quoting and nesting pieces (quotes, `$(`, backticks,
comments, here-documents, arithmetic, backslashes, line continuations ...), often broken.
Whatever the template, either `render` refuses the reference, or real bash runs
the command and none of the value's payloads (each would create a file) runs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.slowdown import scaled

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import Rendered, render

pytestmark = pytest.mark.reliability

PIECES = [
    "echo ", " ", "'", '"', "`", "$(", ")", "(", "${X:-", "}", "#", "\\", "\n", ";", "$((",
    "))", "$'", '$"', "<<EOF\n", "\nEOF\n", "<<'EOF'\n", "<<-EOF\n", "\t", "a", "=", "$",
    "|", "&&", "case a in a) ", ";; esac", "{ ", "; }", "[[ ", " ]]", "((", "<<<", "\\\n",
    "${context.x}", "$${", "${raw:context.safe}", "$$", "$'", ">&", "2>&1", "<(", "&",
    # where bash reads a value again: as arithmetic, or as code
    "$[", "]", "[", " -gt ", " -eq 1", "arr[", "]=1", "let ", "declare -i ", "local -i y=",
    "eval ", "trap ", "bash -c ", "sh -c ", "env V=", "timeout 1 ", "xargs ", "-exec ",
    "find . -exec sh -c ", "sudo ", "bash <<<", "sh <<EOF\n",
]  # fmt: skip
VALUE = (
    "$(touch PWNED1)`touch PWNED2`'; touch PWNED3 #\"; touch PWNED4 #\n"
    "touch PWNED5\nEOF\ntouch PWNED6\n) ; touch PWNED7 #}"
)
SUBSCRIPT = "a[$(touch PWNED8)]"  # runs if bash evaluates it as arithmetic
REF = "${context.x}"


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(templates=st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14), max_size=10))
def test_a_hostile_value_never_runs_whatever_bash_surrounds_it(
    templates: list[list[str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    contexts = [
        InterpolationContext(context={"x": value, "safe": "echo"}, env={})
        for value in (VALUE, SUBSCRIPT)
    ]
    commands: list[Rendered] = []
    for pieces in templates:
        template = "".join(pieces)
        if REF not in template:
            template += REF
        for ctx in contexts:
            try:
                commands.append(render(template, ctx))
            except InterpolationError:
                continue
    if not commands:
        return
    where = tmp_path_factory.mktemp("fuzz")
    # One bash for the batch: each command in its own `bash -c`, so one's syntax error
    # cannot change how the next one is read.
    script = "".join(
        f"{_assignments(c)} bash -c {_word(c.script)} </dev/null >/dev/null 2>&1\n"
        for c in commands
    )
    subprocess.run(["bash", "-c", script], cwd=where, timeout=scaled(60), check=False)
    # (Redirections in the templates may create other files, named by the value.)
    assert sorted(p.name for p in Path(where).glob("PWNED*")) == [], commands


def _assignments(rendered: Rendered) -> str:
    """The variables a script reads, as `env` assignments before its `bash -c`."""
    return "env " + " ".join(f"{k}={_word(v)}" for k, v in rendered.env.items())


def _word(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
