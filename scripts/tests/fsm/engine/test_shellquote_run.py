"""Values reach bash as data: injection strings through a real `ll-loop run` and real bash.

Each value is handed to `printf '%s'` from `${context.X}`, `${env.X}` and `${captured.X}`,
unquoted, in "..." and in '...'; the files it writes must hold exactly the value, and no
value may have run as code (each payload would create a file named PWNED...).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from support.slowdown import scaled

VALUES = [
    "$(touch PWNED_dollar)",
    "`touch PWNED_backtick`",
    "it's done",
    "'; touch PWNED_single; '",
    'say "hi"; touch PWNED_double; "',
    "a; touch PWNED_semicolon",
    "line one\ntouch PWNED_newline",
    "back\\slash \\n \\' \\\\",
    "*",
    "-n",
    "",
    "  spaced   out  ",
    "unicode: é ☃ 😀",
    "\x01\x07\x1b[31mred\x7f",
    "${HOME} $HOME !! !$ ~ {a,b} [x] >out <in | & #",
    "$'\\x41' $\"x\"",
]
CONTEXTS = {
    "word": "printf '%s' REF",
    "double": "printf '%s' \"REF\"",
    "single": "printf '%s' 'REF'",
}
SOURCES = ("context", "env", "captured")


def _loop(root: Path) -> dict[str, object]:
    """A loop that writes every value from every source in every context to out/."""
    states: dict[str, dict[str, object]] = {}
    names: list[str] = []
    for i, value in enumerate(VALUES):
        (root / "values" / str(i)).write_text(value, encoding="utf-8")
        names.append(f"capture{i}")
        states[f"capture{i}"] = {"action": f"cat values/{i}", "capture": f"v{i}"}
        for source in SOURCES:
            ref = {
                "context": f"${{context.v{i}}}",
                "env": f"${{env.LL_TEST_V{i}}}",
                "captured": f"${{captured.v{i}}}",
            }[source]
            commands = [
                f"{command.replace('REF', ref)} > out/{source}-{where}-{i}"
                for where, command in CONTEXTS.items()
            ]
            names.append(f"{source}{i}")
            states[f"{source}{i}"] = {"action": "; ".join(commands)}
    for name, after in zip(names, [*names[1:], "done"], strict=True):
        states[name]["next"] = after
    states["done"] = {"terminal": True}
    return {
        "name": "inject",
        "initial": names[0],
        "max_iterations": len(names) + 5,
        "context": {f"v{i}": value for i, value in enumerate(VALUES)},
        "states": states,
    }


def _write(root: Path) -> None:
    text = yaml.safe_dump(_loop(root), allow_unicode=True, sort_keys=False)
    (root / ".loops" / "inject.yaml").write_text(text, encoding="utf-8")


def test_values_reach_bash_exactly_and_never_run(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / "values").mkdir()
    (tmp_path / "out").mkdir()
    _write(tmp_path)
    env = {**os.environ, **{f"LL_TEST_V{i}": v for i, v in enumerate(VALUES)}}
    proc = subprocess.run(
        [sys.executable, "-m", "little_loops.cli", "run", "inject"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.rglob("PWNED*")) == []
    wrong = []
    for i, value in enumerate(VALUES):
        for source in SOURCES:
            for where in CONTEXTS:
                got = (tmp_path / "out" / f"{source}-{where}-{i}").read_bytes()
                if got != value.encode():
                    wrong.append((source, where, value, got))
    assert wrong == []


def test_validate_passes_the_quoted_loop_without_warnings(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / "values").mkdir()
    _write(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "little_loops.cli", "validate", "--strict", "inject"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
