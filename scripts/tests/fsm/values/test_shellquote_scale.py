"""Thousands of values in one shell action: rendering and its check grow linearly, and a
script too long for `bash -c` is refused by `validate` and the run, not by the kernel."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.llproc import ll_loop

from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import (
    MAX_SCRIPT_BYTES,
    _placed,
    _plain,
    render,
    too_long,
    unquotable,
)

REF = "${context.v}"
# Actions of n references, in the shapes one action may take.
SHAPES: dict[str, Callable[[int], str]] = {
    "lines": lambda n: "\n".join(f"echo {REF} > /dev/null" for _ in range(n)),
    "arguments": lambda n: "echo " + " ".join(REF for _ in range(n)),
    "wrapped arguments": lambda n: "env X=1 echo " + " ".join(REF for _ in range(n)),
    "and-chain": lambda n: " && ".join(f"echo {REF}" for _ in range(n)),
    "pipeline": lambda n: " | ".join(f"echo {REF}" for _ in range(n)),
    "double quotes": lambda n: 'echo "' + " ".join(REF for _ in range(n)) + '"',
    "here-document": lambda n: "cat <<EOF\n" + "\n".join(REF for _ in range(n)) + "\nEOF",
    "function calls": lambda n: 'f() { echo "$1"; }\n' + "\n".join(f"f {REF}" for _ in range(n)),
}


def _calls(work: Callable[[], Any]) -> int:
    """How many Python and C functions *work* calls: a count, not a time."""
    count = 0

    def tally(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(tally)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def _forget() -> None:
    _plain.cache_clear()
    _placed.cache_clear()


@pytest.mark.parametrize("shape", SHAPES)
def test_rendering_and_its_check_grow_linearly_with_the_references(shape: str) -> None:
    ctx = InterpolationContext(context={"v": "a value"})

    def work(n: int) -> int:
        text = SHAPES[shape](n)
        # Each call parses anew: a short script's parse is remembered (shellquote._plain,
        # _placed) and a long one's is not, which would make the two sizes do different work.
        return _calls(lambda: (_forget(), unquotable(text), _forget(), render(text, ctx)))

    small, large = work(500), work(2000)
    # Linear work is 4x for 4x the references; the square of it (as before) was 16x.
    assert large <= 5 * small, (shape, small, large)


def test_the_variables_are_numbered_in_order() -> None:
    ctx = InterpolationContext(context={"v": "x", "l": []})
    rendered = render(
        "echo ${context.v} ${words:context.l} ${context.v}; echo $(( ${context.n:default=1} ))",
        ctx,
    )
    assert rendered.script == 'echo "${LL_V_1}"  "${LL_V_2}"; echo $(( 1 ))'
    assert list(rendered.env) == ["LL_V_1", "LL_V_2"]


def _project(tmp_path: Path, name: str, action: str, context: dict[str, str]) -> Path:
    (tmp_path / ".loops").mkdir(exist_ok=True)
    loop = {
        "name": name,
        "initial": "a",
        "context": context,
        "states": {"a": {"action": action, "next": "done"}, "done": {"terminal": True}},
    }
    path = tmp_path / ".loops" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(loop), encoding="utf-8")
    return path


def test_validate_and_run_refuse_a_script_too_long_for_bash_c(tmp_path: Path) -> None:
    # 10,000 values: each written as "${LL_V_n}" the script is ~300 KB, and bash -c takes
    # one argument of at most 128 KiB; `validate` used to say ok and the run then failed
    # with "Argument list too long".
    action = SHAPES["lines"](10_000)
    path = _project(tmp_path, "big", action, {"v": "hello"})
    fix = "put the commands in a script file and run it (bash FILE)"
    checked = ll_loop(tmp_path, "validate", str(path), timeout=120)
    assert checked.returncode != 0, checked.stdout
    line = next(line for line in checked.stdout.splitlines() if "bash -c takes" in line)
    assert f"more than the {MAX_SCRIPT_BYTES:,} bash -c takes as one argument" in line
    assert line.endswith(fix)
    ran = ll_loop(tmp_path, "run", "big", timeout=120)
    assert ran.returncode == 2, (ran.stdout, ran.stderr)
    assert "Argument list too long (" not in ran.stdout + ran.stderr.replace("too long):", "")
    assert fix in ran.stderr
    assert not (tmp_path / ".loops" / ".running" / "big.a.out").exists()


def test_a_long_action_without_references_is_refused_too(tmp_path: Path) -> None:
    action = "\n".join(f": line {i} {'x' * 60}" for i in range(2_500))
    assert too_long(action)
    path = _project(tmp_path, "long", action, {})
    checked = ll_loop(tmp_path, "validate", str(path), timeout=60)
    assert checked.returncode != 0
    assert "bash -c takes as one argument" in checked.stdout


def test_thousands_of_values_run_in_real_bash(tmp_path: Path) -> None:
    # 4,000 values of three keys in one here-document: each line is its own value.
    keys = ("a", "b", "c")
    refs = [f"${{context.{keys[i % 3]}}}" for i in range(4_000)]
    action = "cat > out.txt <<EOF\n" + "\n".join(refs) + "\nEOF"
    values = {"a": "$(touch PWNED)", "b": "it's", "c": "x`touch PWNED`"}
    _project(tmp_path, "many", action, values)
    ran = ll_loop(tmp_path, "run", "many", timeout=120)
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    lines = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    assert lines == [values[keys[i % 3]] for i in range(4_000)]
    assert not (tmp_path / "PWNED").exists()
