"""Measure how little-loops' shipped loops fare here: `scripts/dev upstream DIR [--simulate|--run]`.

DIR is a little-loops checkout (or an extracted tree of one). A scratch project is made
whose `.loops/` holds DIR/scripts/little_loops/loops/* (lib/ and oracles/ included) and
DIR/.loops/*.yaml (a project loop wins over a built-in of its name, as there; the
built-in it hides is measured from `.loops/shadowed/`). Each loop (not the fragment
libraries of lib/, not templates) is validated with this repository's `ll-loop validate`,
and with `--compat` too when this build has it. Prints one line per loop, then the
figures: how many validate with no error, and the failing checks with the loops each
stops.

With --simulate, the original little-loops is installed into its own venv (from
--upstream-src, default DIR/scripts when it holds a pyproject.toml; or --upstream-ll-loop
names an installed `ll-loop` of it) and, for each loop that validates in both, both tools'
`simulate --scenario S` walks are compared state by state for each scenario: the whole walk
when theirs ends at a terminal state, else (its simulate stops at 20 steps, or a limit)
as far as theirs went. With --run, both tools run each such loop for real, a scripted
stand-in `claude` (stand_in_claude.py) first on PATH, and the states entered are compared.
--ours-src measures another tree's ll-loop (a merge, say). A dev
tool: the network is used only to install little-loops' dependencies, and the test suite
never runs it against it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Our `ll-loop`: the package this Python imports (the venv `scripts/dev` runs this with, or
# the tree --ours-src puts first on PYTHONPATH).
OURS = [sys.executable, "-m", "little_loops.cli"]
OURS_ENV = dict(os.environ)
UPSTREAM_VENV = ROOT / ".cache" / "upstream-venv"
SCENARIOS = ("all-pass", "all-fail", "all-error", "first-fail", "alternating")
SKIPPED_FOLDERS = ("lib",)  # fragment libraries, imported by loops, not loops themselves
SHADOWED = "shadowed"
TERMINAL = "terminal"  # little-loops' `Terminated by:` when the walk ends at a terminal state
CALL_TIMEOUT = 120.0


@dataclass
class Loop:
    """One loop of the scratch project: its name there and its file."""

    name: str
    path: Path
    errors: list[dict[str, object]] = field(default_factory=list)
    compat_errors: list[dict[str, object]] | None = None


def build_project(source: Path, into: Path) -> list[Loop]:
    """Make the scratch project under *into* from the little-loops tree *source*."""
    shipped = source / "scripts" / "little_loops" / "loops"
    if not shipped.is_dir():
        raise SystemExit(f"upstream: {shipped} is not a folder: is {source} a little-loops tree?")
    loops_dir = into / ".loops"
    shutil.copytree(shipped, loops_dir, ignore=shutil.ignore_patterns("__pycache__"))
    found = [Loop(p.stem, p) for p in sorted(loops_dir.glob("*.yaml"))]
    for sub in sorted(p for p in loops_dir.iterdir() if p.is_dir()):
        if sub.name not in SKIPPED_FOLDERS and sub.name != "__pycache__":
            found.extend(Loop(f"{sub.name}/{p.stem}", p) for p in sorted(sub.glob("*.yaml")))
    for project_loop in sorted((source / ".loops").glob("*.yaml")):
        target = loops_dir / project_loop.name
        if target.exists():  # the project's loop hides the built-in: measure both
            hidden = loops_dir / SHADOWED / project_loop.name
            hidden.parent.mkdir(exist_ok=True)
            shutil.move(target, hidden)
            for loop in found:
                if loop.path == target:
                    loop.name, loop.path = f"{SHADOWED}/{project_loop.stem}", hidden
        shutil.copy2(project_loop, target)
        found.append(Loop(project_loop.stem, target))
    return sorted(found, key=lambda loop: loop.name)


def has_compat() -> bool:
    """Whether this build's `validate` takes --compat."""
    helped = subprocess.run(
        [*OURS, "validate", "--help"], capture_output=True, text=True, env=OURS_ENV
    )
    return "--compat" in helped.stdout


def validate_all(project: Path, loops: Sequence[Loop], *, compat: bool = False) -> None:
    """Our `validate --json` of every loop in one call; errors kept on each Loop."""
    argv = [*OURS, "validate", "--json", *(["--compat"] if compat else [])]
    argv += [str(loop.path.relative_to(project)) for loop in loops]
    done = subprocess.run(argv, cwd=project, capture_output=True, text=True, env=OURS_ENV)
    try:
        files = json.loads(done.stdout)["files"]
    except (ValueError, KeyError):
        raise SystemExit(f"upstream: ll-loop validate failed: {done.stderr.strip()}") from None
    for loop, report in zip(loops, files, strict=True):
        errors = [e for e in report["errors"] if e["severity"] == "error"]
        if compat:
            loop.compat_errors = errors
        else:
            loop.errors = errors


def check_of(error: dict[str, object]) -> str:
    """The check an error comes from, named so that one check is one group."""
    detail = " ".join(str(error["detail"]).split())
    if detail.startswith("unknown key"):
        return f"unknown key '{error['key']}'"
    if detail.startswith("missing required key"):
        return detail
    child = re.match(r"child loop (\S+) is not valid", detail)
    if child is not None:  # the child's own problem is counted where it is measured
        return f"child loop not valid: {child.group(1)}"
    detail = re.sub(r"^\$\{[^}]*\}: ", "${…}: ", detail)
    return re.sub(r"'[^']*'", "'…'", detail)[:90]


def report_validation(loops: Sequence[Loop], *, compat: bool, out: list[str]) -> None:
    """Append the per-loop lines and the figures of one validation to *out*."""
    label = "ll-loop validate --compat" if compat else "ll-loop validate"
    by_check: dict[str, list[str]] = defaultdict(list)
    passed = 0
    out.append(f"== {label}")
    for loop in loops:
        errors = loop.compat_errors if compat else loop.errors
        assert errors is not None
        if not errors:
            passed += 1
            out.append(f"ok    {loop.name}")
            continue
        checks = sorted({check_of(e) for e in errors})
        for check in checks:
            by_check[check].append(loop.name)
        first = " ".join(str(errors[0]["message"]).split())
        first = first if len(first) <= 160 else first[:159] + "…"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        out.append(f"FAIL  {loop.name}: {first}{more}")
    out.append("")
    out.append(f"{label}: {passed} of {len(loops)} validate with no error")
    if by_check:
        out.append("failing checks (loops they stop, most first):")
        for check, names in sorted(by_check.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
            out.append(f"  {len(names):4d}  {check}: {shown}")
    out.append("")


def upstream_ll_loop(source: Path, src: Path | None, given: Path | None) -> Path:
    """The original's `ll-loop`: *given*, or installed once into .cache/upstream-venv."""
    if given is not None:
        return given
    binary = UPSTREAM_VENV / "bin" / "ll-loop"
    if binary.exists():
        return binary
    src = src if src is not None else source / "scripts"
    if not (src / "pyproject.toml").is_file():
        raise SystemExit(
            f"upstream: no pyproject.toml in {src}: give --upstream-src (a little-loops "
            "checkout's scripts/, e.g. from git archive of the mirror) or --upstream-ll-loop"
        )
    print(f"upstream: installing little-loops from {src} into {UPSTREAM_VENV}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(UPSTREAM_VENV)], check=True)
    with tempfile.TemporaryDirectory() as tmp:  # pip may write into the tree it builds
        copy = Path(tmp) / "src"
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        pip = [str(UPSTREAM_VENV / "bin" / "python"), "-m", "pip", "install", "-q", str(copy)]
        subprocess.run(pip, check=True)
    return binary


def upstream_env(home: Path) -> dict[str, str]:
    """A bare environment: no API keys, no agent CLIs on PATH, a scratch HOME."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def upstream_walk(
    binary: Path, project: Path, name: str, scenario: str
) -> tuple[list[str], str] | str:
    """The states the original's simulate walks and its `Terminated by`, or why none."""
    argv = [str(binary), "simulate", name, "--scenario", scenario]
    try:
        done = subprocess.run(
            argv,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT,
            env=upstream_env(project / ".home"),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {CALL_TIMEOUT:g}s"
    visited = re.search(r"^States visited: ?(.*)$", done.stdout, re.MULTILINE)
    ended = re.search(r"^Terminated by: (.*)$", done.stdout, re.MULTILINE)
    if visited is None or ended is None:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        return f"exit {done.returncode}: {last[:120]}"
    states = [s for s in visited.group(1).split(" \u2192 ") if s]
    moves = re.findall(r"^\s*Transition: .* \u2192 (.*)$", done.stdout, re.MULTILINE)
    if ended.group(1).strip() == TERMINAL and moves:  # a terminal state is not "visited"
        states.append(moves[-1].strip())
    return states, ended.group(1).strip()


def our_walk(project: Path, loop: Loop, scenario: str, compat: bool) -> list[str] | str:
    """The states our simulate walks (the loop's own, not a sub-loop's; with *compat*,
    with little-loops' meanings: `--compat`), or why none."""
    argv = [*OURS, "simulate", str(loop.path.relative_to(project)), "--scenario", scenario]
    argv += ["--compat"] if compat else []
    done = subprocess.run(
        [*argv, "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        env=OURS_ENV,
    )
    try:
        steps = json.loads(done.stdout)["steps"]
    except (ValueError, KeyError):
        return f"exit {done.returncode}: {done.stderr.strip()[:120]}"
    return [step["state"] for step in steps if step.get("depth", 0) == 0]


def compare(theirs: list[str], ended: str, ours: list[str]) -> bool:
    """Whether the walks are the same: all of it when theirs ended at a terminal state,
    else (a cap: its 20 steps, max_steps, max_iterations) as far as theirs went."""
    if ended != TERMINAL:
        return ours[: len(theirs)] == theirs
    return ours == theirs


def upstream_valid(binary: Path, project: Path, loop: Loop) -> bool:
    """Whether little-loops' own `validate` takes the loop."""
    checked = subprocess.run(
        [str(binary), "validate", loop.name],
        cwd=project,
        capture_output=True,
        text=True,
        env=upstream_env(project / ".home"),
        timeout=CALL_TIMEOUT,
    )
    return checked.returncode == 0


class _Printed(list[str]):
    """Lines printed as they are added (a comparison of 100 loops takes many minutes)."""

    def append(self, line: str) -> None:
        print(line, flush=True)
        super().append(line)

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.append(line)


def simulate_all(binary: Path, project: Path, loops: Sequence[Loop], out: list[str]) -> None:
    """Compare both tools' walks of each loop valid in both, for every scenario (ours with
    `--compat` when this build has it: the loops valid with it)."""
    compat = all(loop.compat_errors is not None for loop in loops)
    label = "ours with --compat" if compat else "ours"
    out.append(f"== simulate --scenario, little-loops ({binary}) against {label}")
    theirs_valid = [loop for loop in loops if upstream_valid(binary, project, loop)]
    out.append(f"little-loops' own validate: {len(theirs_valid)} of {len(loops)} valid")
    both = [loop for loop in theirs_valid if not (loop.compat_errors if compat else loop.errors)]
    matched: list[str] = []
    for loop in both:
        results = []
        for scenario in SCENARIOS:
            theirs = upstream_walk(binary, project, loop.name, scenario)
            ours = our_walk(project, loop, scenario, compat)
            if isinstance(theirs, str) or isinstance(ours, str):
                why = theirs if isinstance(theirs, str) else ours
                results.append(f"{scenario}: not compared ({why})")
                continue
            same = compare(*theirs, ours)
            results.append(
                f"{scenario}: {'same' if same else 'DIFFERENT'}"
                + ("" if same else f" (theirs {' > '.join(theirs[0])}; ours {' > '.join(ours)})")
            )
        all_same = all(r.endswith(": same") for r in results)
        if all_same:
            matched.append(loop.name)
        out.append(f"{'same ' if all_same else 'DIFF '} {loop.name}")
        out.extend(f"        {r}" for r in results if not r.endswith(": same"))
    out.append("")
    out.append(
        f"simulate: {len(matched)} of {len(both)} loops valid in both walk the same states "
        f"in all {len(SCENARIOS)} scenarios: {', '.join(matched) or '-'}"
    )


STAND_IN = Path(__file__).resolve().parent / "stand_in_claude.py"
RUN_TIMEOUT = 90.0  # seconds of one `ll-loop run` of one loop (a step cap stops most first)
INPUT = "stand-in input"  # a loop's `input`, given to both as the positional argument


def run_env(project: Path, bin_dir: Path, *, ours: bool) -> dict[str, str]:
    """The environment of a real run: the stand-in `claude` first on PATH, a key it never
    sends, root allowed to skip permissions; nothing else of the developer's."""
    base = OURS_ENV if ours else upstream_env(project / ".home")
    env: dict[str, str] = {k: base[k] for k in ("PATH", "PYTHONPATH", "LANG") if k in base}
    env.update(HOME=str(project / ".home"), ANTHROPIC_API_KEY="stand-in", IS_SANDBOX="1")
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "/usr/bin:/bin")])
    return env


def run_walk(
    argv: list[str], project: Path, env: dict[str, str], events: str, seconds: float
) -> tuple[list[str], bool] | str:
    """The states a real run of *argv* in *project* entered (its `state_enter` events, the
    loop's own: files matching *events* under .loops) and whether *seconds* cut it, or
    why there are none."""
    cut = False
    try:
        subprocess.run(
            argv,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=seconds,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        cut = True  # compared as far as it went
    files = sorted((project / ".loops").glob(events), key=lambda path: path.stat().st_mtime)
    states: list[str] = []
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "state_enter" and not event.get("depth"):
                states.append(str(event.get("state")))
    return (states, cut) if states else "no state entered"


def run_all(
    binary: Path, project: Path, loops: Sequence[Loop], out: list[str], seconds: float
) -> None:
    """Run each loop valid in both for real with each tool (ours with `--compat`), the
    stand-in `claude` answering every prompt, each in a fresh copy of the project, and
    compare the states entered (as far as the shorter went when one was cut)."""
    out.append(f"== ll-loop run, little-loops ({binary}) against ours with --compat")
    out.append(f"   (stand-in claude: {STAND_IN}; each run at most {seconds:g} s)")
    both = [
        loop for loop in loops if not loop.compat_errors and upstream_valid(binary, project, loop)
    ]
    matched: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = Path(tmp) / "bin"
        bin_dir.mkdir()
        (bin_dir / "claude").symlink_to(STAND_IN)
        for loop in both:
            text = loop.path.read_text(encoding="utf-8", errors="replace")
            reads = re.search(r"\$\{context\.input\b|^input_key:", text, re.MULTILINE)
            given = [INPUT] if reads else []  # a loop that reads no input gets none
            walks: list[tuple[list[str], bool] | str] = []
            for ours in (False, True):
                copy = Path(tmp) / ("ours" if ours else "theirs") / loop.name
                shutil.copytree(project, copy, symlinks=True)
                subprocess.run(["git", "init", "-q"], cwd=copy, check=False)
                env = run_env(copy, bin_dir, ours=ours)
                if ours:
                    name = str(loop.path.relative_to(project))
                    argv = [*OURS, "run", name, *given, "--compat", "--no-sandbox"]
                    walks.append(
                        run_walk(argv, copy, env, f".running/{loop.name}.events.jsonl", seconds)
                    )
                else:
                    argv = [str(binary), "run", loop.name, *given]  # its own caps, as written
                    walks.append(
                        run_walk(argv, copy, env, f"**/*{loop.name}*events.jsonl", seconds)
                    )
                shutil.rmtree(copy, ignore_errors=True)
            first, second = walks
            if isinstance(first, str) or isinstance(second, str):
                why = [w if isinstance(w, str) else "ran" for w in walks]
                out.append(f"NOT   {loop.name}: theirs {why[0]}; ours {why[1]}")
                continue
            (theirs, cut_theirs), (mine, cut_mine) = first, second
            # As far as the shorter went only when it was cut (--run-seconds);
            # a shorter walk that ended by itself where the other went on is a difference.
            capped = {"theirs": cut_theirs, "ours": cut_mine}
            shorter = "theirs" if len(theirs) < len(mine) else "ours"
            length = min(len(theirs), len(mine))
            if len(theirs) != len(mine) and capped[shorter]:
                same = theirs[:length] == mine[:length]
            else:
                same = theirs == mine
            if same:
                matched.append(loop.name)
            shown = f"theirs {' > '.join(theirs)}; ours {' > '.join(mine)}"
            out.append(
                f"{'same ' if same else 'DIFF '} {loop.name} ({len(theirs)}/{len(mine)} states)"
                + ("" if same else f": {shown}")
            )
    out.append("")
    out.append(
        f"run: {len(matched)} of {len(both)} loops valid in both enter the same states: "
        f"{', '.join(matched) or '-'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/dev upstream", description=__doc__)
    parser.add_argument("dir", type=Path, metavar="DIR", help="a little-loops checkout or tree")
    parser.add_argument("--simulate", action="store_true", help="compare simulate walks too")
    parser.add_argument(
        "--run", action="store_true", help="compare real runs too (a stand-in claude on PATH)"
    )
    parser.add_argument(
        "--run-seconds", type=float, default=RUN_TIMEOUT, help="cut each real run after this"
    )
    parser.add_argument("--upstream-src", type=Path, help="little-loops' scripts/ to install")
    parser.add_argument("--upstream-ll-loop", type=Path, help="an installed little-loops ll-loop")
    parser.add_argument("--keep", type=Path, help="build the scratch project here and keep it")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="compare the walks of these loops only"
    )
    parser.add_argument(
        "--ours-src", type=Path, help="measure the ll-loop of this tree's scripts/ instead"
    )
    args = parser.parse_args(argv)
    if args.ours_src is not None:
        path = [str(args.ours_src.resolve()), OURS_ENV.get("PYTHONPATH", "")]
        OURS_ENV["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    with tempfile.TemporaryDirectory() as tmp:
        project = args.keep if args.keep is not None else Path(tmp)
        project.mkdir(parents=True, exist_ok=True)
        loops = build_project(args.dir.resolve(), project)
        validate_all(project, loops)
        out: list[str] = []
        report_validation(loops, compat=False, out=out)
        if has_compat():
            validate_all(project, loops, compat=True)
            report_validation(loops, compat=True, out=out)
        else:
            out.append("(this build's validate has no --compat)")
            out.append("")
        print("\n".join(out), flush=True)
        chosen = [loop for loop in loops if not args.only or loop.name in args.only]
        if args.simulate or args.run:
            binary = upstream_ll_loop(args.dir, args.upstream_src, args.upstream_ll_loop)
        if args.simulate:
            simulate_all(binary.resolve(), project, chosen, _Printed())
        if args.run:
            run_all(binary.resolve(), project, chosen, _Printed(), args.run_seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
