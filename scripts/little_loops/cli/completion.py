"""`ll-loop completion bash|zsh`: a shell completion script generated from the parser itself."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

SHELLS = ("bash", "zsh")
KEYS_METAVAR = "KEY=VALUE"  # a flag whose value starts with one of the loop's keys (--set)


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "completion",
        help=summary,
        description="Print a completion script for bash or zsh: commands, flags, flag "
        "values, the loop names of the nearest .loops/ and library:NAME, and the keys "
        "--set takes. Install it with "
        'eval "$(ll-loop completion bash)" in ~/.bashrc, or '
        'eval "$(ll-loop completion zsh)" in ~/.zshrc.',
    )
    parser.add_argument("shell", nargs="?", choices=SHELLS, help="the shell to complete for")
    parser.add_argument(
        "--keys",
        metavar="NAME|PATH",
        help="print the keys --set takes for this loop (its parameters, then its context "
        "values), one a line: what the script offers after --set",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    from little_loops.fsm.facts.errors import LoopDefinitionError

    if args.keys is not None:
        if args.shell is not None:
            raise LoopDefinitionError("completion --keys takes no shell")
        return keys_command(args.keys)
    if args.shell is None:
        raise LoopDefinitionError("completion needs the shell: bash or zsh")
    sys.stdout.write(completion_script(args.shell))
    return 0


def keys_command(name_or_path: str) -> int:
    """Print the keys `--set` takes for the loop NAME|PATH, one a line."""
    from little_loops.cli.resolve import project_loops_dir, resolve_loop_path
    from little_loops.fsm.validate.loopfile import load_and_validate

    fsm = load_and_validate(resolve_loop_path(name_or_path, project_loops_dir(), stale_ok=True))
    for key in dict.fromkeys([*fsm.parameters, *map(str, fsm.context)]):
        print(key)
    return 0


def completion_script(shell: str) -> str:
    """The script for *shell*: bash's, which zsh runs through its `bashcompinit`."""
    from little_loops.cli import build_parser

    script = _bash_script(build_parser())
    if shell == "zsh":
        return (
            "# ll-loop completion for zsh (zsh runs the bash completion through bashcompinit)\n"
            "autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + script
        )
    return script


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _case_arms(parser: argparse.ArgumentParser) -> list[str]:
    """One `case` arm per command: its flags, the flags that take a value (a file, or one of
    its choices), and what its positional arguments are (loop names, files, or both)."""
    arms = []
    for name, sub in _subcommands(parser).items():
        flags: list[str] = []
        valued: list[str] = []
        files: list[str] = []
        keys: list[str] = []
        choices: list[str] = []
        positional = ""
        for action in sub._actions:
            if action.option_strings:
                flags += action.option_strings
                if action.nargs == 0:
                    continue
                valued += action.option_strings
                if action.choices:
                    words = " ".join(str(c) for c in action.choices)
                    choices += [f"{flag}) values='{words}' ;;" for flag in action.option_strings]
                elif action.metavar == KEYS_METAVAR:
                    keys += action.option_strings
                elif _names_a_file(str(action.metavar or action.dest)):
                    files += action.option_strings
            elif action.nargs == "*" and positional:
                continue  # a loop's VALUEs: what the loop name completes to stays offered
            elif action.choices:
                positional = "choices:" + " ".join(str(c) for c in action.choices)
            else:
                metavar = str(action.metavar or action.dest).upper()
                kinds = ["names"] if "NAME" in metavar else []
                kinds += ["files"] if _names_a_file(metavar) or not kinds else []
                positional = " ".join(kinds)
        arm = (
            f"        {name}) flags='{' '.join(flags)}'; valued=' {' '.join(valued)} ';"
            f" files=' {' '.join(files)} '; keys=' {' '.join(keys)} '; positional='{positional}'"
        )
        if choices:
            arm += f"\n            case $prev in {' '.join(choices)} esac"
        arms.append(arm + " ;;")
    return arms


def _names_a_file(metavar: str) -> bool:
    return any(word in metavar.upper() for word in ("PATH", "FILE", "OUTPUT", "INPUT"))


def _bash_script(parser: argparse.ArgumentParser) -> str:
    commands = " ".join(_subcommands(parser))
    arms = "\n".join(_case_arms(parser))
    return (
        "# ll-loop completion for bash (generated by `ll-loop completion bash`)\n"
        + _bash_helpers()
        + _bash_completer(commands, arms)
        + "complete -F _ll_loop ll-loop\n"
    )


def _bash_helpers() -> str:
    """The bash functions `_ll_loop` calls: loop names, shipped loops, keys, the target."""
    from little_loops.loops import LIBRARY_PREFIX, library_loops

    shipped = " ".join(shlex.quote(LIBRARY_PREFIX + name) for name in library_loops())
    library = shlex.quote(LIBRARY_PREFIX)
    return f"""\
_ll_loop_names() {{
    local dir=$PWD file name
    [ -n "${{ZSH_VERSION-}}" ] && setopt localoptions nullglob  # no error when nothing matches
    while :; do
        if [ -d "$dir/.loops" ]; then
            for file in "$dir"/.loops/*.yaml "$dir"/.loops/*.yml; do
                [ -f "$file" ] || continue
                name=${{file##*/}}; name=${{name%.yaml}}; name=${{name%.yml}}; name=${{name%.fsm}}
                printf '%s\\n' "$name"
            done
            return 0
        fi
        [ -z "$dir" ] || [ "$dir" = / ] && return 0
        dir=${{dir%/*}}
    done
}}
_ll_loop_shipped() {{
    printf '%s\\n' {shipped}
}}
# The keys --set takes for loop $1, each followed by `=`; ll-loop reads the loop file.
_ll_loop_keys() {{
    local key
    "${{_ll_loop_words[0]}}" completion --keys "$1" 2>/dev/null | while IFS= read -r key; do
        printf '%s=\\n' "$key"
    done
}}
# Loop names and keys come from files anyone could have written: never given to compgen -W,
# which would expand $(...) in them again, but compared as plain text. $1 is the word typed,
# the rest the command that lists what may be offered, one a line.
_ll_loop_offer() {{
    local word=$1 line
    shift
    while IFS= read -r line; do
        [[ $line == "$word"* ]] && COMPREPLY+=("$line")
    done < <("$@")
}}
_ll_loop_library() {{
    if [ -n "$1" ] && [[ {library} == "$1"* || $1 == {library}* ]]; then
        _ll_loop_offer "$1" _ll_loop_shipped
    fi
}}
# The loop a run's command line names: its first word that is no flag, no flag's value and
# not the command `run` itself.
_ll_loop_target() {{
    local i word skip='' run=''
    for ((i = 1; i < _ll_loop_cword; i++)); do
        word=${{_ll_loop_words[i]}}
        if [ -n "$skip" ]; then skip=''; continue; fi
        case $word in
            -*) [[ $valued == *" $word "* ]] && skip=1 ;;
            run) if [ -z "$run" ]; then run=1; else printf '%s\\n' "$word"; return 0; fi ;;
            *) printf '%s\\n' "$word"; return 0 ;;
        esac
    done
}}
"""


def _bash_completer(commands: str, arms: str) -> str:
    """The function bash calls to complete: *commands* are the subcommands, *arms* the
    `case` arms that set each one's flags."""
    return f"""\
_ll_loop() {{
    # bash splits `library:NAME` at the `:` (it is in COMP_WORDBREAKS): join such words again
    local -a _ll_loop_words=()
    local _ll_loop_cword=0 i word
    for ((i = 0; i < ${{#COMP_WORDS[@]}}; i++)); do
        word=${{COMP_WORDS[i]}}
        if ((i > 0)) && [[ ${{COMP_WORDBREAKS-}} == *:* ]] \\
            && [[ $word == : || ${{COMP_WORDS[i-1]}} == : ]]; then
            _ll_loop_words[${{#_ll_loop_words[@]}}-1]+=$word
        else
            _ll_loop_words+=("$word")
        fi
        ((i == COMP_CWORD)) && _ll_loop_cword=$((${{#_ll_loop_words[@]}} - 1))
    done
    local cur=${{_ll_loop_words[_ll_loop_cword]}} prev=${{_ll_loop_words[_ll_loop_cword-1]}}
    local cmd='' flags='-h --help --version' valued=' ' files=' ' keys=' ' positional='names'
    local values=''
    for ((i = 1; i < _ll_loop_cword; i++)); do
        case ${{_ll_loop_words[i]}} in -*) ;; *) cmd=${{_ll_loop_words[i]}}; break ;; esac
    done
    case " {commands} " in *" $cmd "*) ;; *) [ -n "$cmd" ] && cmd=run ;; esac
    case $cmd in
{arms}
    esac
    COMPREPLY=()
    if [[ $valued == *" $prev "* ]]; then
        if [ -n "$values" ]; then
            COMPREPLY=($(compgen -W "$values" -- "$cur"))
        elif [[ $files == *" $prev "* ]]; then
            COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $keys == *" $prev "* ]]; then
            local loop
            loop=$(_ll_loop_target)
            [ -n "$loop" ] && _ll_loop_offer "$cur" _ll_loop_keys "$loop"
            # KEY= is not finished: no space after it
            if [ ${{#COMPREPLY[@]}} -gt 0 ] && type compopt >/dev/null 2>&1; then
                compopt -o nospace
            fi
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [ -z "$cmd" ]; then
        COMPREPLY=($(compgen -W "{commands}" -- "$cur"))
        _ll_loop_offer "$cur" _ll_loop_names
        _ll_loop_library "$cur"
    else
        case $positional in
            choices:*) COMPREPLY=($(compgen -W "${{positional#choices:}}" -- "$cur")) ;;
            *names*) _ll_loop_offer "$cur" _ll_loop_names; _ll_loop_library "$cur" ;;
        esac
        if [[ $positional == *files* ]]; then
            COMPREPLY+=($(compgen -f -- "$cur"))
        fi
    fi
    # bash puts in place only what follows the last `:` of the word: offer just that part
    if [[ $cur == *:* && ${{COMP_WORDBREAKS-}} == *:* ]]; then
        local head=${{cur%"${{cur##*:}}"}}
        for ((i = 0; i < ${{#COMPREPLY[@]}}; i++)); do
            COMPREPLY[i]=${{COMPREPLY[i]#"$head"}}
        done
    fi
    return 0
}}
"""
