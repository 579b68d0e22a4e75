"""Values where bash itself evaluates them (issue 41 item 10), through the real `ll-loop`
and real bash: each place is refused by `validate` and by the run, and no payload runs;
the same values where bash reads them as data still run, unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.forkserver import ll_loop

R = "${context.v}"
# Each: a place where bash evaluates the value (each once missed by the check).
EVALUATED = {
    "random": f"RANDOM={R}",
    "optind": f"OPTIND={R}; :",
    "declare-i": f"declare -i n; n={R}",
    "declare-i-later": f"f() {{ n={R}; }}; declare -i n; f",
    "printf-v-attached": f"printf -v{R} x",
    "printf-option": f"printf {R} x",
    "builtin-printf": f"builtin printf {R} x",
    "sh-c-dashdash": f"sh -c -- {R}",
    "bash-c-dash": f"bash -c - {R}",
    "double-quoted-c": f'bash -c "eval \\"\\$1\\"" _ {R}',
    "deep-functions": 'f1() { eval "$1"; }\n'
    + "\n".join(f'f{i}() {{ f{i - 1} "$1"; }}' for i in range(2, 12))
    + f"\nf11 {R}",
    "function-command": f"f() {{ $1; }}; f {R}",
    "function-wrapped-command": f"f() {{ command $1; }}; f {R}",
    "function-indirect": f'f() {{ echo "${{!1}}"; }}; f {R}',
    "function-prompt": f'f() {{ echo "${{1@P}}"; }}; f {R}',
    "mutual-recursion": f'f() {{ g "$@"; }}; g() {{ RANDOM=$1; f "$@"; }}; f {R}',
    "tenth-argument": f'f() {{ echo "${{10}}" | bash; }}; f 1 2 3 4 5 6 7 8 9 {R}',
    "set-positional": f'set -- {R}; eval "$1"',
    "bash-aliases": f"BASH_ALIASES[x]={R}; shopt -s expand_aliases",
    # found by the value fuzz: a value inside $(...) or backticks in a function's argument
    "function-substitution": f'f() {{ $1; }}; f "$(echo {R})"',
    "function-backticks": f'f() {{ echo "${{2}}" | bash; }}; f 1 "`echo {R}`"',
    "time-declare-i": f'( time -p declare -i n="`echo {R}`" )',
    "time-compound": f"time -p if true; then eval {R}; fi",
    "negated-while": f"! while true; do {{ trap $((1)){R} EXIT; }}; break; done",
}
# The same value as data: these must run, and print the value unchanged.
DATA = {
    "echo": f"echo {R}",
    "printf-format-first": f"printf '%s\\n' {R}",
    "printf-dashdash": f"printf -- '%s\\n' {R}",
    "printf-format-double-quoted": f'printf "%s\\n" {R}',
    "printf-v-name": f"printf -v x '%s' {R}; echo \"$x\"",
    "sh-c-argument": f"sh -c -- 'echo \"$1\"' _ {R}",
    "function-quoted": f'f() {{ echo "$1"; }}; f {R}',
    "recursion-data": f'f() {{ if [ $# -lt 3 ]; then f "$@" x; else echo "$1"; fi; }}; f {R}',
    "plain-assignment": f'n={R}; echo "$n"',
}


def _value(marks: Path) -> str:
    """A value that runs `touch` if bash evaluates it anywhere: arithmetic, a name, code."""
    return f"a[$(touch {marks}/M)]; touch {marks}/M; -va[$(touch {marks}/M)]"


def _loop(name: str, action: str) -> dict[str, object]:
    return {
        "name": name,
        "initial": "a",
        "parameters": {"v": {"type": "string"}},
        "states": {"a": {"action": action, "next": "done"}, "done": {"terminal": True}},
    }


@pytest.mark.parametrize("case", EVALUATED)
def test_a_value_bash_would_evaluate_is_refused_and_never_runs(tmp_path: Path, case: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / ".loops").mkdir()
    path = tmp_path / ".loops" / "x.yaml"
    path.write_text(yaml.safe_dump(_loop("x", EVALUATED[case])), encoding="utf-8")
    checked = ll_loop(tmp_path, "validate", str(path), timeout=60)
    assert checked.returncode != 0, (case, checked.stdout)
    assert f"{R}: not allowed" in checked.stdout, checked.stdout
    ran = ll_loop(tmp_path, "run", "x", "--set", f"v={_value(marks)}", timeout=60)
    assert ran.returncode != 0, (case, ran.stdout, ran.stderr)
    assert list(marks.iterdir()) == [], (case, ran.stdout, ran.stderr)


@pytest.mark.parametrize("case", DATA)
def test_the_same_value_as_data_runs_unchanged(tmp_path: Path, case: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / ".loops").mkdir()
    action = f"{{ {DATA[case]}\n}} > out.txt"
    (tmp_path / ".loops" / "x.yaml").write_text(yaml.safe_dump(_loop("x", action)))
    value = _value(marks)
    ran = ll_loop(tmp_path, "run", "x", "--set", f"v={value}", timeout=60)
    assert ran.returncode == 0, (case, ran.stdout, ran.stderr)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == value + "\n"
    assert list(marks.iterdir()) == []


def test_run_compat_says_on_stderr_what_it_pastes_as_code(tmp_path: Path) -> None:
    # `validate --compat` warns; the run pasted the same value as code without a word.
    (tmp_path / ".loops").mkdir()
    loop = _loop("x", f"eval {R} > out.txt")
    (tmp_path / ".loops" / "x.yaml").write_text(yaml.safe_dump(loop), encoding="utf-8")
    ran = ll_loop(tmp_path, "run", "x", "--compat", "--set", "v=echo pasted", timeout=60)
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "pasted\n"
    line = next(x for x in ran.stderr.splitlines() if "--compat pastes as code" in x)
    assert line.startswith(f"ll-loop: warning: --compat pastes as code: state 'a': {R}: ")
    assert "in the arguments of eval" in line


# A value another program gets as its program text: bash keeps it data, so the run goes
# on, but `validate` warns, naming the program.
PROGRAM_TEXT = {
    "python3 -c": ("python3", f"python3 -c {R}"),
    "python3 -c in quotes": ("python3", f"python3 -c \"print('{R}')\""),
    "node -e": ("node", f"node -e {R}"),
    "perl -e attached": ("perl", f"perl -e'{R}'"),
    "awk program": ("awk", f"awk '{{print \"{R}\"}}' /dev/null"),
    "behind timeout": ("python3", f"timeout 5 python3 -c {R}"),
    "here-document": ("python3", f"python3 - <<EOF\nprint('{R}')\nEOF"),
    "here-string": ("node", f"node <<< {R}"),
}


@pytest.mark.parametrize("case", PROGRAM_TEXT)
def test_validate_warns_where_another_program_gets_a_value_as_its_code(
    tmp_path: Path, case: str
) -> None:
    program, action = PROGRAM_TEXT[case]
    (tmp_path / ".loops").mkdir()
    path = tmp_path / ".loops" / "x.yaml"
    path.write_text(yaml.safe_dump(_loop("x", action)), encoding="utf-8")
    checked = ll_loop(tmp_path, "validate", str(path), timeout=60)
    assert checked.returncode == 0, checked.stdout
    assert f"warning: loop 'x' > states > a > action: {R} is program text for {program}:" in (
        checked.stdout
    )


def test_no_warning_where_the_program_gets_the_value_as_data(tmp_path: Path) -> None:
    action = f"python3 -c 'import sys; print(sys.argv[1])' {R}; awk -v v={R} 'BEGIN{{print v}}'"
    (tmp_path / ".loops").mkdir()
    path = tmp_path / ".loops" / "x.yaml"
    path.write_text(yaml.safe_dump(_loop("x", action)), encoding="utf-8")
    checked = ll_loop(tmp_path, "validate", str(path), timeout=60)
    assert checked.returncode == 0
    assert "program text" not in checked.stdout
