"""What an `ll-loop` command imports, in a fresh Python: its modules, those compiling a regex."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from support.slowdown import scaled

_PROBE = """\
import contextlib, io, sys
from little_loops.cli import main_loop
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main_loop(sys.argv[1:])
print(code, " ".join(sorted(sys.modules)))
"""


def loaded_by(cwd: Path, *argv: str) -> tuple[int, set[str]]:
    """The exit code of `ll-loop ARGV...` run in a fresh Python in *cwd*, and the names of
    every module it had imported by its end."""
    code, modules = _probe(_PROBE, list(argv), cwd)
    return code, set(modules)


# Run by a fresh Python with one argument, a JSON object: `preload` (modules imported before
# the watch begins), `imports` (modules then imported), `argv` (then an ll-loop command).
# A compile counts when a module's top-level code (not the probe's own) is running: at
# import, in the module itself or in a function it calls; it is put to the module whose code
# asked for it (the first frame outside `re`).
_REGEX_PROBE = """\
import contextlib, importlib, io, json, re, sys
spec = json.loads(sys.argv[1])
for name in spec["preload"]:
    importlib.import_module(name)
compiled = set()
original = re._compile
def spy(pattern, flags):
    frame, caller, importing = sys._getframe(1), None, False
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if caller is None and name.split(".")[0] != "re":
            caller = name
        importing = importing or (frame.f_code.co_name == "<module>" and name != "__main__")
        frame = frame.f_back
    if importing:
        compiled.add(caller)
    return original(pattern, flags)
re._compile = spy
for name in spec["imports"]:
    importlib.import_module(name)
code = 0
if spec["argv"]:
    from little_loops.cli import main_loop
    with contextlib.redirect_stdout(io.StringIO()):
        code = main_loop(spec["argv"])
re._compile = original
print(code, " ".join(sorted(compiled)))
"""


def compiled_at_import(
    *,
    imports: Sequence[str] = (),
    argv: Sequence[str] = (),
    preload: Sequence[str] = (),
    cwd: Path | None = None,
) -> tuple[int, list[str]]:
    """The exit code of *argv* (0 without one) and the modules that compiled a regular
    expression as they were imported, in a fresh Python in *cwd*."""
    spec = {"preload": list(preload), "imports": list(imports), "argv": list(argv)}
    return _probe(_REGEX_PROBE, [json.dumps(spec)], cwd)


def _probe(script: str, args: list[str], cwd: Path | None) -> tuple[int, list[str]]:
    """Run *script* with *args* in a fresh Python; it prints an exit code and names."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )
    code, _, names = proc.stdout.strip().partition(" ")
    assert code.lstrip("-").isdigit(), proc.stdout + proc.stderr
    return int(code), names.split()


def other_kind_modules() -> set[str]:
    """The module of every action kind the registry knows but the shell's (the one a loop of
    bash commands uses): a file that names none of them needs none."""
    from little_loops.fsm.actions.registry import ENTRIES, entry_of

    shell = entry_of(None, "true").name
    return {f"little_loops.fsm.actions.{e.module}" for e in ENTRIES.values() if e.name != shell}
