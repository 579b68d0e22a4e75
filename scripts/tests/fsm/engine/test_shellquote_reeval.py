"""Places where bash reads a value's text again, as arithmetic or as code.

`$[...]` is arithmetic like `$((...))`; operands of `-eq` ... `-ge` in `[[ ]]`, array
subscripts, `let` and `declare -i` arguments take integers only; a reference in the
arguments of a command that runs them as code (`eval`, `trap`, `bash -c`, `ssh` ...) is
refused. Each case runs through a real `ll-loop run` and real bash: the payload (it would
create a file named PWNED) must not run. The `ll-loop` processes are forked from one that
imported it once (support/forkserver.py): what bash does with a value, not start-up, is tested.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from support import forkserver, llproc

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import render, unquotable

CODE = "; touch PWNED"
SUBSCRIPT = "x[$(touch PWNED)]"


def write_loop(root: Path, name: str, action: str, value: str) -> None:
    """.loops/NAME.yaml: a loop whose one shell action is *action*; the value is both
    `${context.v}` and `${captured.v.output}` (command output, unknown to validate)."""
    (root / ".loops").mkdir(exist_ok=True)
    loop = {
        "name": name,
        "initial": "capture",
        "context": {"v": value},
        "states": {
            "capture": {"action": "cat value", "capture": "v", "next": "act"},
            "act": {"action": action, "next": "done"},
            "done": {"terminal": True},
        },
    }
    (root / ".loops" / f"{name}.yaml").write_text(yaml.safe_dump(loop), encoding="utf-8")


def ll_loop(root: Path, command: str, action: str, value: str) -> subprocess.CompletedProcess[str]:
    """`ll-loop COMMAND` on the loop of `write_loop` (its value in the file `value` too)."""
    (root / "value").write_text(value, encoding="utf-8")
    (root / "script").write_text("cat\n", encoding="utf-8")
    write_loop(root, "reeval", action, value)
    return forkserver.ll_loop(root, command, "reeval", timeout=60)


def pwned(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("PWNED*"))


def validate_each(root: Path, cases: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """One `ll-loop validate --json` process over one loop file per (action, value) case:
    each case's own verdict, as the problems its file has (empty when it is valid)."""
    names = {f"case{i}": case for i, case in enumerate(cases)}
    (root / "script").write_text("cat\n", encoding="utf-8")  # as `ll_loop` leaves them
    (root / "value").write_text(cases[0][1], encoding="utf-8")
    for name, (action, value) in names.items():
        write_loop(root, name, action, value)
    proc = forkserver.ll_loop(root, "validate", "--json", *names, timeout=120)
    report = json.loads(proc.stdout)
    assert proc.returncode == (0 if report["valid"] else 2), proc.stderr
    verdicts = {}
    for file in report["files"]:
        problems = [e["message"] for e in file["errors"] if e["severity"] == "error"]
        assert file["valid"] == (not problems), file
        verdicts[names[file["loop"]]] = problems
    assert len(verdicts) == len(cases), report
    return verdicts


def test_old_arithmetic_is_not_a_here_document(tmp_path: Path) -> None:
    # `<<2` inside `$[...]` is a shift, not a here-document: the next line is a command.
    proc = ll_loop(tmp_path, "run", "echo $[1<<2]\necho ${captured.v.output} > out", CODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    assert (tmp_path / "out").read_text() == CODE + "\n"
    assert ll_loop(tmp_path, "validate", "echo $[1<<2]\necho ${context.v}", CODE).returncode == 0


@pytest.mark.parametrize(
    "action",
    [
        "echo $[ ${REF} + 1 ]",
        "[[ ${REF} -gt 0 ]] && echo yes",
        '[[ 1 -le "${REF}" ]] && echo yes',
        "[[ ( x == y || ${REF} -eq 2 ) ]] && echo yes",
        "arr[${REF}]=1",
        "declare -i y=${REF}",
        "f() { local -i y=${REF}; }; f",
        "typeset -i y; typeset -i y=${REF}",
        'let "z=${REF}"',
        "declare ${REF}=1",
        "declare -n r=${REF}; r=1",
        "a=(1); [[ -v ${REF} ]]",
        "a=(1); test -v ${REF}",
        "printf -v ${REF} x",
        "read -r ${REF} <<< hi",
        "a=(1); unset ${REF}",
    ],
)
@pytest.mark.parametrize("ref", ["captured.v.output", "context.v"])
def test_arithmetic_contexts_take_integers_only(tmp_path: Path, action: str, ref: str) -> None:
    action = action.replace("REF", ref)
    proc = ll_loop(tmp_path, "run", action, SUBSCRIPT)
    assert pwned(tmp_path) == []
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    # An integer-only place is checked at run time; the others are refused at validate.
    assert "is not an integer, in bash arithmetic" in said or "not allowed" in said


@pytest.mark.parametrize(
    ("action", "out"),
    [
        ("[[ ${captured.v.output} -gt 3 ]] && echo big > out", "big\n"),
        ("arr[${captured.v.output}]=x; echo ${arr[7]} > out", "x\n"),
        ('let "z = ${captured.v.output} * 2"; echo $z > out', "14\n"),
        ("echo $[ ${captured.v.output} - 1 ] > out", "6\n"),
    ],
)
def test_integers_still_work_there(tmp_path: Path, action: str, out: str) -> None:
    proc = ll_loop(tmp_path, "run", action, "7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out").read_text() == out
    proc = ll_loop(tmp_path, "run", action, SUBSCRIPT)  # and only integers
    assert "is not an integer, in bash arithmetic" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []


EVALUATING = [
    "eval echo ${REF}",
    "trap 'echo ${REF}' EXIT",
    'trap "echo ${REF}" EXIT',
    'bash -c "echo ${REF}"',
    "sh -c 'echo ${REF}'",
    'dash -c "echo ${REF}"',
    'zsh -c "echo ${REF}"',
    "bash -ec \"echo '${REF}'\"",
    'bash -c "echo $(printf %s ${REF})"',
    "find . -maxdepth 0 -exec sh -c 'echo ${REF}' \\;",
    "echo | xargs -I{} sh -c 'echo ${REF}'",
    "env A=1 bash -c 'echo ${REF}'",
    'sudo -u nobody bash -c "echo ${REF}"',
    'timeout 5 bash -c "echo ${REF}"',
    "nice -n 5 nohup sh -c 'echo ${REF}'",
    "command eval echo ${REF}",
    'su -c "echo ${REF}" nobody',
    "ssh localhost echo ${REF}",
    "watch -n 1 echo ${REF}",
    "echo ok; 2>/dev/null eval echo ${REF}",
    "bash <<< ${REF}",
    "eval bash <<< ${REF}",
    "bash -c bash <<< ${REF}",
    "bash <<EOF\necho ${REF}\nEOF",
]


REFS = ("context.v", "captured.v.output")


@pytest.fixture(scope="module")
def evaluating_validated(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], list[str]]:
    """`validate`'s verdict on each EVALUATING template with each reference (one process)."""
    cases = [(action.replace("REF", ref), CODE) for action in EVALUATING for ref in REFS]
    return validate_each(tmp_path_factory.mktemp("evaluating"), cases)


@pytest.mark.parametrize("action", EVALUATING)
def test_arguments_run_as_code_are_refused(
    action: str, evaluating_validated: dict[tuple[str, str], list[str]]
) -> None:
    for ref in REFS:
        template = action.replace("REF", ref)
        said = "\n".join(evaluating_validated[template, CODE])
        assert said  # refused: validate found an error in this file
        assert "not allowed" in said
        assert f"${{raw:{ref}}}" in said
        if ref == "context.v":
            ctx = InterpolationContext(context={"v": CODE}, env={})
            with pytest.raises(InterpolationError, match="not allowed"):
                render(template, ctx)
            assert CODE in render(template.replace("${", "${raw:"), ctx).script
        raw = template.replace("${", "${raw:")
        assert unquotable(raw) == []


@pytest.mark.parametrize("action", EVALUATING[:12])
def test_a_run_refuses_them_too(tmp_path: Path, action: str) -> None:
    proc = ll_loop(tmp_path, "run", action.replace("REF", "context.v"), CODE)
    assert proc.returncode != 0
    assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []


DATA_FORMS = [
    "V=${REF} bash -c 'printf %s \"$V\"' > out",
    "env V=${REF} sh -c 'printf %s \"$V\"' > out",
    "bash -c 'printf %s \"$1\"' _ ${REF} > out",
    "[[ ${REF} == 'x' ]] || printf %s ${REF} > out",
    '[[ -n ${REF} ]] && printf %s "${REF}" > out',
    "ls -lt ${REF} 2>/dev/null; printf %s ${REF} > out",
    'arr[0]=${REF}; printf %s "${arr[0]}" > out',
    'local_v=${REF}; declare w=${REF}; printf %s "$w" > out',
    "bash script <<< ${REF} | head -c -1 > out",
    "cat <<EOF | head -c -1 > out\n${REF}\nEOF",
    "timeout 5 printf %s ${REF} > out",
]


@pytest.fixture(scope="module")
def data_forms_validated(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], list[str]]:
    """`validate`'s verdict on each DATA_FORMS case (one process)."""
    cases = [
        (action.replace("REF", ref), value)
        for action in DATA_FORMS
        for value in (CODE, SUBSCRIPT)
        for ref in REFS
    ]
    return validate_each(tmp_path_factory.mktemp("data_forms"), cases)


@pytest.mark.parametrize("action", DATA_FORMS)
def test_data_forms_keep_working(
    tmp_path: Path, action: str, data_forms_validated: dict[tuple[str, str], list[str]]
) -> None:
    for value in (CODE, SUBSCRIPT):
        for ref in REFS:
            template = action.replace("REF", ref)
            assert data_forms_validated[template, value] == []
            proc = ll_loop(tmp_path, "run", template, value)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert (tmp_path / "out").read_text() == value
            assert pwned(tmp_path) == []


def run_with_parameters(root: Path, action: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`ll-loop run` of a loop with a list parameter `targets` and one shell action."""
    (root / ".loops").mkdir(exist_ok=True)
    (root / "deploy.sh").write_text('#!/bin/bash\nprintf "%s" "$TARGETS" > out\n')
    (root / "deploy.sh").chmod(0o755)
    loop = {
        "name": "deploy",
        "initial": "act",
        "parameters": {"targets": {"type": "list"}},
        "states": {"act": {"action": action, "next": "done"}, "done": {"terminal": True}},
    }
    (root / ".loops" / "deploy.yaml").write_text(yaml.safe_dump(loop), encoding="utf-8")
    return forkserver.ll_loop(root, "run", "deploy", *args, timeout=60)


def test_a_list_parameter_in_an_assignment_is_one_word(tmp_path: Path) -> None:
    # Issue 29, problem 1: `TARGETS=pypi touch PWNED ./deploy.sh` ran `touch PWNED`.
    action = "TARGETS=${context.targets} ./deploy.sh"
    proc = run_with_parameters(tmp_path, action, "--set", "targets=pypi,touch,PWNED")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    assert (tmp_path / "out").read_text() == "pypi touch PWNED"
    # The event keeps the action as a person reads it, and adds what bash really ran.
    start = next(e for e in llproc.events(tmp_path, "deploy") if e["event"] == "action_start")
    assert start["action"] == "TARGETS='pypi touch PWNED' ./deploy.sh"
    assert start["script"] == 'TARGETS="${LL_V_1}" ./deploy.sh'
    assert start["values"] == {"LL_V_1": "pypi touch PWNED"}


def test_a_list_value_in_the_documented_variable_form_stays_data(tmp_path: Path) -> None:
    # Issue 29, problem 1: `V=a sh -c 'touch PWNED' x bash -c ...` ran `touch PWNED`.
    action = "V=${context.targets} bash -c 'printf %s \"$V\" > out'"
    proc = run_with_parameters(tmp_path, action, "--set", "targets=a,sh,-c,touch PWNED,x")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    assert (tmp_path / "out").read_text() == "a sh -c touch PWNED x"


# Issue 29, problem 2: templates the hand-written scanner misread; each either is refused
# or runs with the value as data.
MISREAD = [
    'echo "$(case a in a) echo ${REF};; esac)" > out',
    'bash -c "$(cat <<EOF\necho ${REF}\nEOF\n)"',
    "time -p bash -c ${REF}",
    "echo ${x:-$'\\''} ${REF} \\'} > out",
    "cat <<EOF > out\n${REF}\nEOF",
    "case a in a)((x=${REF}));; esac",
    'a=(x ${REF}); printf %s "${a[1]}" > out',
    "arr=([${REF}]=x)",
    'declare -a "a=(${REF})"',
    "declare -i n; n=1; declare -n r=${REF}",
    "compgen -W ${REF}",
    "compgen -C ${REF} x",
    "mapfile -C ${REF} -c 1 a <<< x",
    "BASH_ENV=${REF} bash -c :",
    "PS4=${REF} bash -xc :",
    '"$SHELL" -c ${REF}',
    "$BASH -c ${REF}",
    "$'\\x65val' ${REF}",
    "echo ${REF} | bash",
    "bash <(echo ${REF})",
    "source <(echo ${REF})",
    "coproc ${REF}",
    "timeout --signal KILL 5 bash -c ${REF}",
    "flock -c ${REF} lockfile",
    "unshare -r bash -c ${REF}",
    "script -qc ${REF} /dev/null",
]


@pytest.mark.parametrize("action", MISREAD)
def test_misread_templates_never_run_the_value(tmp_path: Path, action: str) -> None:
    payload = "$(touch PWNED)`touch PWNED`;touch PWNED\ntouch PWNED\nEOF\ntouch PWNED\n"
    for ref in ("context.v", "captured.v.output"):
        proc = ll_loop(tmp_path, "run", action.replace("REF", ref), payload)
        assert pwned(tmp_path) == [], proc.stdout + proc.stderr
        if proc.returncode == 0:
            assert "touch PWNED" in (tmp_path / "out").read_text()
        else:
            assert "not allowed" in proc.stdout + proc.stderr or "error" in proc.stdout


# Found by the hostile review of issue 29: each ran its value as code through a real
# `ll-loop run` while `validate` said ok.
HIDDEN_SHELLS = [
    ("env -S ${context.v}", "sh -c 'touch PWNED'"),
    ('env -S"${context.v}"', "sh -c 'touch PWNED'"),
    ("env --split-string=${context.v}", "sh -c 'touch PWNED'"),
    ("timeout -k 1 5 env -iS ${context.v}", "sh -c 'touch PWNED'"),
    ("setpriv sh -c ${context.v}", "touch PWNED"),
    ("bash < <(echo ${context.v})", "touch PWNED"),
    ("echo ${context.v} | tee >(bash) >/dev/null; wait", "touch PWNED"),
    ("echo ${context.v} > >(cat | sh); wait", "touch PWNED"),
]


OTHER_HIDDEN_SHELLS = [
    "busybox sh -c ${context.v}",  # busybox names the shell after it
    "env -u X -S ${context.v}",
]
NEAR_FORMS = [
    "env FOO=1 printf %s ${context.v} > out",  # -S of the command env runs is its own
    "echo ${context.v} | tee >(cat > out2) > out; wait",
    "cat < <(printf %s ${context.v}) > out",
]
NEAR_VALUES = (CODE, "sh -c 'touch PWNED'")


@pytest.fixture(scope="module")
def hidden_validated(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], list[str]]:
    """`validate`'s verdict on the hidden shells and their near forms (one process)."""
    cases = [*HIDDEN_SHELLS, *((action, "touch PWNED") for action in OTHER_HIDDEN_SHELLS)]
    cases += [(action, value) for action in NEAR_FORMS for value in NEAR_VALUES]
    return validate_each(tmp_path_factory.mktemp("hidden"), cases)


@pytest.mark.parametrize(("action", "value"), HIDDEN_SHELLS)
def test_shells_behind_env_s_unknown_wrappers_and_process_substitutions(
    tmp_path: Path,
    action: str,
    value: str,
    hidden_validated: dict[tuple[str, str], list[str]],
) -> None:
    said = "\n".join(hidden_validated[action, value])
    assert said  # refused: validate found an error in this file
    assert "not allowed" in said
    proc = ll_loop(tmp_path, "run", action, value)
    assert proc.returncode != 0
    assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []


@pytest.mark.parametrize("action", OTHER_HIDDEN_SHELLS)
def test_validate_refuses_other_hidden_shells(
    action: str, hidden_validated: dict[tuple[str, str], list[str]]
) -> None:
    said = "\n".join(hidden_validated[action, "touch PWNED"])
    assert said  # refused: validate found an error in this file
    assert "not allowed" in said


@pytest.mark.parametrize("action", NEAR_FORMS)
def test_near_forms_stay_data(
    tmp_path: Path, action: str, hidden_validated: dict[tuple[str, str], list[str]]
) -> None:
    for value in NEAR_VALUES:
        assert hidden_validated[action, value] == []
        proc = ll_loop(tmp_path, "run", action, value)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert (tmp_path / "out").read_text().rstrip("\n") == value
        assert pwned(tmp_path) == []


@pytest.mark.parametrize(
    "action",
    [
        "shopt -s expand_aliases\nalias e=eval\ne ${context.v}",
        "set -o posix\nalias echo=eval\necho ${context.v}",
        'f() { eval "$@"; }\nf ${context.v}',
        "f() { x=$(( $1 )); }\nf ${context.v}",
        'f() { g x "$1"; }\ng() { bash -c "$2"; }\nf ${context.v}',
    ],
)
def test_aliases_and_functions_of_the_script_are_followed(tmp_path: Path, action: str) -> None:
    for command in ("validate", "run"):
        proc = ll_loop(tmp_path, command, action, "a[$(touch PWNED)]; touch PWNED")
        assert proc.returncode != 0
        assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []


def test_a_function_that_keeps_its_arguments_as_data_still_gets_them(tmp_path: Path) -> None:
    action = 'f() { printf %s "$1" > out; }\nf ${context.v}'
    assert ll_loop(tmp_path, "validate", action, CODE).returncode == 0
    proc = ll_loop(tmp_path, "run", action, CODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out").read_text() == CODE
    assert pwned(tmp_path) == []


@pytest.mark.parametrize(
    ("action", "value"),
    [
        ("env ${context.v} bash -c 'echo hi'", "BASH_FUNC_echo%%=() { touch PWNED; }"),
        ("env A=1 ${context.v} bash -c 'echo hi'", "BASH_FUNC_echo%%=() { touch PWNED; }"),
        ("timeout 5 env ${context.v} true", "-Ssh -c 'touch PWNED'"),
        ("env BASH_ENV=${context.v} bash -c true", "evil.sh"),
    ],
)
def test_a_value_env_reads_as_an_option_or_a_variable_is_refused(
    tmp_path: Path, action: str, value: str
) -> None:
    (tmp_path / "evil.sh").write_text("touch PWNED\n", encoding="utf-8")
    for command in ("validate", "run"):
        proc = ll_loop(tmp_path, command, action, value)
        assert proc.returncode != 0
        assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []


def test_arithmetic_in_a_here_document_takes_integers_only(tmp_path: Path) -> None:
    # tree-sitter reads `$((` at the start of a here-document line as `$( (`.
    action = "cat > out <<EOF\n$((\n${context.v} + 1))\nEOF"
    proc = ll_loop(tmp_path, "run", action, SUBSCRIPT)
    assert "is not an integer, in bash arithmetic" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    proc = ll_loop(tmp_path, "run", action, "41")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out").read_text() == "42\n"


@pytest.mark.parametrize(
    "action",
    [
        'echo "${context.v}" | { bash; }',
        'echo "${context.v}" | ( bash )',
        'echo "${context.v}" | if true; then bash; fi',
        'echo "${context.v}" | while read -r l; do eval "$l"; done',
    ],
)
def test_a_shell_inside_a_compound_command_of_a_pipeline_is_seen(
    tmp_path: Path, action: str
) -> None:
    for command in ("validate", "run"):
        proc = ll_loop(tmp_path, command, action, "touch PWNED")
        assert proc.returncode != 0
        assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    data = 'echo "${context.v}" | while read -r l; do printf %s "$l"; done > out'
    proc = ll_loop(tmp_path, "run", data, "touch PWNED")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out").read_text() == "touch PWNED"


@pytest.mark.parametrize(
    "action",
    [
        "echo ${context.v} | bash /dev/stdin",
        "bash /dev/stdin <<< ${context.v}",
        "echo ${context.v} | bash -O extglob",  # extglob is -O's value, not a script file
        "echo ${context.v} | bash -o errexit",
        "exec 3> >(bash); echo ${context.v} >&3; exec 3>&-; sleep 1",
    ],
)
def test_a_shell_reading_the_value_from_its_input_is_seen(tmp_path: Path, action: str) -> None:
    for command in ("validate", "run"):
        proc = ll_loop(tmp_path, command, action, "touch PWNED")
        assert proc.returncode != 0
        assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
    proc = ll_loop(tmp_path, "run", "printf %s ${context.v} | bash -O extglob script > out", CODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out").read_text() == CODE


@pytest.mark.parametrize(
    ("action", "value"),
    [
        ("bash -c 'eval \"$1\"' _ ${context.v}", "touch PWNED"),
        ("V=${context.v} bash -c 'eval \"$V\"'", "touch PWNED"),
        ("bash -c 'echo $(( $1 ))' _ ${context.v}", SUBSCRIPT),
        ("find . -maxdepth 0 -exec sh -c 'eval \"$1\"' _ ${context.v} \\;", "touch PWNED"),
    ],
)
def test_the_script_of_sh_c_is_read_for_what_it_does_with_the_value(
    tmp_path: Path, action: str, value: str
) -> None:
    for command in ("validate", "run"):
        proc = ll_loop(tmp_path, command, action, value)
        assert proc.returncode != 0
        assert "not allowed" in proc.stdout + proc.stderr
    assert pwned(tmp_path) == []
