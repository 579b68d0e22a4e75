"""Random bash templates around `${...}` references, and the hostile values they are run with.

`templates(seed, count)` is deterministic per seed: the same seed gives the same templates
(in the same order), so a failure can be replayed with its seed. A template is built from
the inside out: a reference, put in a *word* form (bare, quoted every way, in `$(...)`, in
bash's own `${X:-...}` ...), used by a *command* (plain data uses, places where bash reads
a value as arithmetic or a name, and commands that run their argument as code), wrapped in
zero or more *blocks* (subshells, functions, `case` inside `$(...)`, here-documents inside
`$(...)`, wrappers such as `timeout` or `flock -c`, `bash -c "..."` around the whole ...),
with noise around it that has fooled quoting scanners (quotes, `\\'`, `$'\\''`, a `)` in a
comment, line continuations). Now and then a random piece of bash syntax is dropped in,
which may break the template: bash then stops at its syntax error, which is fine.

Every template only echoes, prints, tests or assigns: with a harmless value it creates no
file. So the only way a marker file appears is a value running as code.

`hostile_values(marks)` and `hostile_lists(marks)` are the values: each one, if bash ever
runs (part of) it as code, creates a file `M<LLFUZZ_T>` in the folder *marks* (the action
exports `LLFUZZ_T`, the state's name, before the template, so a marker names the state).
"""

from __future__ import annotations

import random
from collections.abc import Callable

REFS = ("${context.v}", "${context.l}", "${captured.c.output}", "${env.LLFUZZ_X}")
# The reference the hand-written corpus is written with; each batch swaps it for another.
CORPUS_REF = "${context.v}"

Make = Callable[[random.Random, str], str]

# A word that holds the reference `r`.
WORDS: list[Make] = [
    lambda g, r: r,
    lambda g, r: f'"{r}"',
    lambda g, r: f"'{r}'",
    lambda g, r: f"$'{r}'",
    lambda g, r: f'$"{r}"',
    lambda g, r: f'"pre {r} post"',
    lambda g, r: f"x{r}y",
    lambda g, r: f'"a"{r}"b"',
    lambda g, r: f"'a'{r}'b'",
    lambda g, r: f'"$(echo {r})"',
    lambda g, r: f"$(printf %s {r})",
    lambda g, r: f'"$(printf "%s" "{r}")"',
    lambda g, r: f'"$(echo "$(echo {r})")"',
    lambda g, r: f'"${{U:-{r}}}"',
    lambda g, r: f"${{U:-{r}}}",
    lambda g, r: f'"${{U:+x}}{r}"',
    lambda g, r: f"`echo {r}`",
    lambda g, r: f'"`echo {r}`"',
    lambda g, r: f"\\'{r}",
    lambda g, r: f"{r}\\'",
    lambda g, r: f"$'\\''{r}",
    lambda g, r: f'"\\"{r}\\""',
    lambda g, r: f'"$(case a in a) echo {r};; esac)"',
    lambda g, r: f"$(case a in (a) echo {r};; esac)",
    lambda g, r: f'"$(cat <<EOF\n{r}\nEOF\n)"',
    lambda g, r: f"\"$(cat <<'EOF'\n{r}\nEOF\n)\"",
    lambda g, r: f"$( : ')' ; echo {r} )",
    lambda g, r: f'"$( # )\necho {r})"',
    lambda g, r: f"{r}{r}",
    lambda g, r: f'"{r}"{r}',
    lambda g, r: f"$((1)){r}",
    lambda g, r: f"<(echo {r})",
]

# A command that uses the word `w` as data (a correct interpolation never runs it).
DATA: list[Make] = [
    lambda g, w: f"echo {w}",
    lambda g, w: f"printf '%s\\n' {w}",
    lambda g, w: f"X={w} true",
    lambda g, w: f'X={w}; echo "$X"',
    lambda g, w: f": {w}",
    lambda g, w: f"test {w} = x",
    lambda g, w: f"[ {w} = x ]",
    lambda g, w: f"[[ {w} == x ]]",
    lambda g, w: f"[[ -n {w} ]]",
    lambda g, w: f"[[ {w} =~ x ]]",
    lambda g, w: f"case {w} in x) echo x;; *) echo y;; esac",
    lambda g, w: f"echo {w} > /dev/null",
    lambda g, w: f"echo {w} 2>&1 | cat",
    lambda g, w: f"cat <<< {w}",
    lambda g, w: f'for i in {w}; do echo "$i"; done',
    lambda g, w: f'arr=({w}); echo "${{arr[@]}}"',
    lambda g, w: f"arr=(x (y) {w})",
    lambda g, w: f"declare x={w}",
    lambda g, w: f"export X={w}",
    lambda g, w: f"local_x={w} env true",
    lambda g, w: f"echo {w} # )",
    lambda g, w: f"echo {w} \\\n  tail",
    lambda g, w: f"env X={w} printenv X",
    lambda g, w: f"env -- echo {w}",
    lambda g, w: f"timeout 5 echo {w}",
    lambda g, w: f"nice -n 1 echo {w}",
    lambda g, w: f"command echo {w}",
    lambda g, w: f"builtin echo {w}",
    lambda g, w: f"exec echo {w}",
    lambda g, w: f"echo x | xargs echo {w}",
    lambda g, w: f"time -p echo {w}",
    lambda g, w: f"stdbuf -o0 echo {w}",
    lambda g, w: f"coproc {{ echo {w}; }}; wait",
    lambda g, w: f"V={w} bash -c 'echo \"$V\"'",
    lambda g, w: f"bash -c 'echo \"$1\"' _ {w}",
    lambda g, w: f"sh -c 'printf %s \"$1\"' sh {w}",
    lambda g, w: f'echo "$(echo {w})" | cat',
    lambda g, w: f"printf '%s' {w} | wc -c",
    lambda g, w: f"echo {w} >&2",
    lambda g, w: f"[ -z {w} ] || echo set",
    lambda g, w: f"echo ${{x:-$'\\''}} {w} \\'}}",
    lambda g, w: f"declare -a arr=({w})",
    lambda g, w: f"declare -x DX={w}",
    lambda g, w: f"readonly RX={w}",
    lambda g, w: f"echo {w} && true || true",
    lambda g, w: f"! echo {w}",
    lambda g, w: f"{{ echo {w}; }} 2>/dev/null",
]

# A reference where bash reads the value as arithmetic, a name or code: a correct
# implementation refuses it (or it runs the payload: an escape).
EVAL: list[Make] = [
    lambda g, w: f"eval {w}",
    lambda g, w: f'eval "echo {w}"',
    lambda g, w: f"bash -c {w}",
    lambda g, w: f'sh -c "echo {w}"',
    lambda g, w: f'bash -c "$(printf %s {w})"',
    lambda g, w: f'"$SHELL" -c {w}',
    lambda g, w: f"$BASH -c {w}",
    lambda g, w: f"$'\\x65val' {w}",
    lambda g, w: f"echo {w} | bash",
    lambda g, w: f"echo {w} | sh -s",
    lambda g, w: f"printf '%s\\n' {w} | bash -s --",
    lambda g, w: f"bash <<< {w}",
    lambda g, w: f"source <(echo {w})",
    lambda g, w: f". <(printf '%s\\n' {w})",
    lambda g, w: f"bash <(echo {w})",
    lambda g, w: f"echo $(( {w} ))",
    lambda g, w: f"echo $[{w}]",
    lambda g, w: f"(( x = {w} ))",
    lambda g, w: f"let x={w}",
    lambda g, w: f"a[{w}]=1",
    lambda g, w: f"arr=([{w}]=x)",
    lambda g, w: f'declare -a "a=({w})"',
    lambda g, w: f"declare -i n={w}",
    lambda g, w: f'declare -n ref={w}; echo "$ref"',
    lambda g, w: f'local_n() {{ local -n r={w}; echo "$r"; }}; local_n',
    lambda g, w: f"[[ {w} -eq 1 ]]",
    lambda g, w: f"[[ -v {w} ]]",
    lambda g, w: f"printf -v {w} x",
    lambda g, w: f"read {w} < /dev/null",
    lambda g, w: f"unset {w}",
    lambda g, w: f"trap {w} EXIT",
    lambda g, w: f"compgen -W {w} x",
    lambda g, w: f"compgen -C {w} x",
    lambda g, w: f"printf 'a\\nb\\n' | mapfile -t -C {w} -c 1 lines",
    lambda g, w: f"BASH_ENV={w} bash -c true",
    lambda g, w: f"PS4={w}; set -x; :; set +x",
    lambda g, w: f"timeout --signal KILL 5 bash -c {w}",
    lambda g, w: f"timeout -s KILL 5 sh -c {w}",
    lambda g, w: f"env -u NOPE bash -c {w}",
    lambda g, w: f"nice -n 1 sh -c {w}",
    lambda g, w: f"command bash -c {w}",
    lambda g, w: f"exec sh -c {w}",
    lambda g, w: f"time -p bash -c {w}",
    lambda g, w: f"xargs sh -c {w} < /dev/null",
    lambda g, w: f"flock . -c {w}",
    lambda g, w: f"script -qc {w} /dev/null",
    lambda g, w: f"find . -maxdepth 0 -exec sh -c {w} \\;",
    lambda g, w: f"coproc bash -c {w}; wait",
    lambda g, w: f"coproc {{ eval {w}; }}; wait",
    lambda g, w: f"setsid -w sh -c {w}",
    lambda g, w: f"stdbuf -o0 bash -c {w}",
    # issue 41 item 10: arithmetic variables, options with the name attached, `--`, code
    # in a double-quoted -c script, functions to any depth, a value as a function's command
    lambda g, w: f"RANDOM={w}",
    lambda g, w: f"SRANDOM={w}; :",
    lambda g, w: f"OPTIND={w}",
    lambda g, w: f"HISTCMD={w}",
    lambda g, w: f"declare -i n; n={w}",
    lambda g, w: f"typeset -il n; n+={w}",
    lambda g, w: f"f() {{ n={w}; }}; local_i() {{ local -i n; f; }}; local_i",
    lambda g, w: f"printf -v{w} x",
    lambda g, w: f"printf {w} x",
    lambda g, w: f"builtin printf {w} x",
    lambda g, w: f"command printf -v {w} x",
    lambda g, w: f"\\printf {w} x",
    lambda g, w: f"pr\\intf {w} x",
    lambda g, w: f"builtin eval {w}",
    lambda g, w: f"command eval {w}",
    lambda g, w: f"\\eval {w}",
    lambda g, w: f"e\\val {w}",
    lambda g, w: f"'eval' {w}",
    lambda g, w: f"sh -c -- {w}",
    lambda g, w: f"bash -c - {w}",
    lambda g, w: f"bash -e -c -- {w}",
    lambda g, w: f'bash -c "eval \\"\\$1\\"" _ {w}',
    lambda g, w: f'V={w} sh -c "eval \\"\\$V\\""',
    lambda g, w: f"f() {{ $1; }}; f {w}",
    lambda g, w: f"f() {{ command $1; }}; f {w}",
    lambda g, w: f'f() {{ echo "${{!1}}"; }}; f {w}',
    lambda g, w: f'f() {{ echo "${{1@P}}"; }}; f {w}',
    lambda g, w: f"f() {{ (( $1 )); }}; f {w}",
    lambda g, w: f'f() {{ printf -v "$1" x; }}; f {w}',
    lambda g, w: f"f() {{ RANDOM=$1; }}; f {w}",
    lambda g, w: _chain(g, w),
    lambda g, w: (
        f'f() {{ g "$@"; }}; g() {{ [ $# -gt 3 ] && {{ eval "$1"; return; }}; f "$@" x; }}; f {w}'
    ),
    lambda g, w: f'f() {{ echo "${{10}}" | bash; }}; f 1 2 3 4 5 6 7 8 9 {w}',
    lambda g, w: f"[ {w} {w} ]",
]


def _chain(g: random.Random, w: str) -> str:
    """A chain of 5 to 40 functions, each calling the one before, the first evals `$1`."""
    depth = g.randint(5, 40)
    calls = "\n".join(f'f{i}() {{ f{i - 1} "$@"; }}' for i in range(2, depth + 1))
    return f'f1() {{ eval "$1"; }}\n{calls}\nf{depth} {w}'


# A block around the command `c`.
BLOCKS: list[Make] = [
    lambda g, c: f"( {c} )",
    lambda g, c: f"{{ {c}; }}",
    lambda g, c: f"f() {{ {c}; }}; f",
    lambda g, c: f"function f {{\n  {c}\n}}\nf",
    lambda g, c: f"if true; then {c}; fi",
    lambda g, c: f"if false; then :; else\n{c}\nfi",
    lambda g, c: f"for i in 1; do {c}; done",
    lambda g, c: f"while true; do {c}; break; done",
    lambda g, c: f'echo "$({c})"',
    lambda g, c: f'x=$({c}); echo "$x"',
    lambda g, c: f'echo "$(case a in a) {c};; esac)"',
    lambda g, c: f"case a in a) {c};; esac",
    lambda g, c: f"case a in (a) {c} ;; (*) ;; esac",
    lambda g, c: f'echo "$(cat <<EOF\n$({c})\nEOF\n)"',
    lambda g, c: f"cat <<EOF\n$({c})\nEOF",
    lambda g, c: f"true && {c}",
    lambda g, c: f"false || {c}",
    lambda g, c: f"{c} # )",
    lambda g, c: f"{c} | cat",
    lambda g, c: f": <<'X'\nnot read )\nX\n{c}",
    lambda g, c: f"# comment ) '\n{c}",
    lambda g, c: f"time -p {c}",
    lambda g, c: f"! {c}",
    lambda g, c: f"{c} \\\n  && true",
    lambda g, c: f"( ( {c} ) )",
    lambda g, c: f"$( {c} ) 2>/dev/null || true",
    lambda g, c: f"coproc {{ {c}; }}; wait",
    lambda g, c: f"echo `true` && {c}",
    lambda g, c: f'echo "$( ( {c} ) )"',
    lambda g, c: f"g1() {{ {c}; }}; g2() {{ g1; }}; g3() {{ g2; }}; g3",
    lambda g, c: f"f() {{ local -i k=1; {c}; }}; f",
]

# Blocks that hand the command to another shell as code: the reference is then in code.
EVAL_BLOCKS: list[Make] = [
    lambda g, c: f'bash -c "$(cat <<EOF\n{c}\nEOF\n)"',
    lambda g, c: f"bash <<EOF\n{c}\nEOF",
    lambda g, c: f"sh <<-EOF\n\t{c}\n\tEOF",
    lambda g, c: f"eval \"$(cat <<'EOF'\n{c}\nEOF\n)\"",
    lambda g, c: f'sh -c "{c}"',
    lambda g, c: f'timeout 5 bash -c "{c}"',
    lambda g, c: f'env bash -c "{c}"',
]

# Text put before or after the command that has fooled quote scanners (all harmless).
NOISE = [
    "echo 'it'\\''s'",
    'echo "a\\"b"',
    "echo \\)",
    "echo $'a\\'b'",
    ': "$(echo ")")"',
    "echo ${x:-$'\\''}",
    "echo '#'",
    "echo a#b",
    "x=$((1 + (2)))",
    "echo ${#PATH} >/dev/null",
    "echo \"$(echo ')')\"",
    "cat <<'EOF'\n)$(\nEOF",
    "echo `echo '('`",
    "echo $'\\x29'",
    "case a in a) ;; esac",
    'arr=(1 2); echo "${arr[0]}"',
    "echo \\\\",
    "echo {a,b}",
    "echo '\\'",
    "true # ' \" `",
]

# Pieces of bash syntax dropped in at random (they may break the template).
PIECES = [
    "'", '"', "`", "$(", ")", "(", "${X:-", "}", "#", "\\", "\n", ";", "$((", "))", "$'",
    "<<EOF\n", "\nEOF\n", "<<-EOF\n", "|", "&&", "case a in a) ", ";; esac", "{ ", "; }",
    "[[ ", " ]]", "((", "<<<", "\\\n", "$[", "]", "[", "=", " -c ", "--", "*", "?",
]  # fmt: skip


def template(g: random.Random) -> str:
    """One random template with one or two references."""
    parts = [_command(g)]
    if g.random() < 0.15:
        parts.append(_command(g))
    if g.random() < 0.4:
        parts.insert(0, g.choice(NOISE))
    if g.random() < 0.25:
        parts.append(g.choice(NOISE))
    text = g.choice(["\n", "; ", "\n", " && "]).join(parts)
    if g.random() < 0.08:
        at = g.randrange(len(text) + 1)
        broken = text[:at] + g.choice(PIECES) + text[at:]
        if _refs(broken) == _refs(text):  # not dropped inside a reference
            text = broken
    return text


def _refs(text: str) -> int:
    return sum(text.count(ref) for ref in REFS)


def _command(g: random.Random) -> str:
    word = g.choice(WORDS)(g, g.choice(REFS))
    command = g.choice(EVAL if g.random() < 0.25 else DATA)(g, word)
    for _ in range(g.choice([0, 0, 1, 1, 1, 2, 3])):
        command = g.choice(BLOCKS)(g, command)
    if g.random() < 0.05:
        command = g.choice(EVAL_BLOCKS)(g, command)
    return command


def templates(seed: int, count: int) -> list[str]:
    """*count* random templates, the same ones for the same seed."""
    g = random.Random(seed)
    return [template(g) for _ in range(count)]


def _payloads(marks: str) -> list[str]:
    """The commands a value hides: each creates the marker of the state that runs it."""
    m = f"{marks}/M$LLFUZZ_T"
    return [f"touch {m}", f">{m}", f"mkdir -p {m}", f"echo x >> {m}"]


def hostile_values(marks: str) -> list[str]:
    """Text values that run a payload wherever bash reads them as code."""
    t, r, d, e = _payloads(marks)
    return [
        f"$({t})",
        f"`{t}`",
        f"; {t}",
        f"; {t} #",
        f"' ; {t} ; '",
        f'" ; {t} ; "',
        f"'\"; {t}; #",
        f"\n{t}\n",
        f"x\n{t}",
        f"a[$({t})]",
        f"x[$({t})]",
        f"x]=1; {t} #",
        f"0]; {t}; : [",
        f"1)); {t}; ((1",
        f"$(({t}))",
        f"EOF\n{t}\nEOF",
        f"END\n{t}\n",
        f"X\n{t}\nX",
        f"EOF\n{t}",
        f"-c\n{t}",
        f"-c {t}",
        f"-- ; {t}",
        f"* ; {t}",
        f"? $({r})",
        f"\\'; {t}; \\'",
        f"\\\n{t}",
        f"\\$(\\`{t}\\`)",
        f")\n{t}\n(",
        f"}}; {t}; {{",
        f"); {t}; (",
        f";; esac; {t}; case a in a)",
        f"\x01\x02\x1b[0m\x7f\x80\xff ;{d}",
        f"é漢字😀 $({e})",
        f"$'\\x24({t})'",
        f"${{IFS}}{t}",
        f"$(IFS=,; {t})",
        f"a`{r}`b",
        f"{t}",
        f"&& {t}",
        f"| {t}",
        f"|| {t}",
        f"& {t}",
        f"<(touch {marks}/M$LLFUZZ_T)",
        f"-va[$({t})]",
        f"-v a[$({t})]",
        f"{t} x",
    ]


def hostile_lists(marks: str) -> list[list[str]]:
    """List values: items that run a payload if the list is split into a command line."""
    t = _payloads(marks)[0]
    return [
        ["a", "sh", "-c", t, "x"],
        ["pypi", "touch", f"{marks}/M$LLFUZZ_T"],
        [f"$({t})", "b"],
        ["-c", t],
        ["--", f"; {t}"],
        ["*", "?", f"a[$({t})]"],
        [f"x\n{t}", "EOF", f"EOF\n{t}"],
        ["bash", "-c", t],
        [],
        [f"' ; {t} ; '"],
        ["eval", t],
        [f"x]=1; {t} #", "1"],
    ]
