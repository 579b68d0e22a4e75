"""`ll-loop simulate --branch-verdicts STATE=V1,V2,...`: each branch of a fan-out state scripted,
the state's verdict their join as a run joins them (all, any, best), run as real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode

CHILD = (
    "name: fix\ncontext:\n  item: ''\ninitial: work\nstates:\n"
    "  work:\n    action: 'true'\n    next: done\n  done:\n    terminal: true\n"
)


def _project(tmp_path: Path, fan: str, join: str = "all", extra: str = "") -> Path:
    root = tmp_path / "project"
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "fix.yaml").write_text(CHILD)
    loop = (
        'name: fan\ninitial: fan\ncontext:\n  list: \'["x", "y"]\'\nstates:\n  fan:\n'
        f"{fan}      join: {join}\n{extra}"
        "    on_success: good\n    on_failure: bad\n"
        "  good:\n    terminal: true\n  bad:\n    terminal: true\n    outcome: failure\n"
    )
    (root / ".loops" / "fan.yaml").write_text(loop)
    return root


MAP = "    map:\n      items: [a, b, c]\n      loop: fix\n"
PARALLEL = "    parallel:\n      branches:\n        - loop: fix\n        - loop: fix\n"
TEXT_MAP = "    map:\n      items: ${context.list}\n      loop: fix\n"


def simulate(root: Path, *args: str) -> tuple[int, str, str]:
    done = llproc.ll_loop(root, "simulate", "fan", *args)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("join", "verdicts", "verdict", "end"),
    [
        ("all", "success,success,success", "success", "good"),
        ("all", "success,failure,success", "failure", "bad"),
        ("all", "success,success,stopped", "failure", "bad"),
        ("any", "failure,stopped,success", "success", "good"),
        ("any", "failure,failure,stopped", "failure", "bad"),
        ("best", "failure,yes,no", "success", "good"),
        ("best", "no,no,no", "failure", "bad"),
    ],
)
def test_each_branch_is_scripted_and_the_state_gets_their_join(
    tmp_path: Path, join: str, verdicts: str, verdict: str, end: str
) -> None:
    extra = "      score: echo 1\n" if join == "best" else ""
    root = _project(tmp_path, MAP, join, extra)
    code, out, err = simulate(root, "--branch-verdicts", f"fan={verdicts}")
    assert err == ""
    words = [{"yes": "success", "no": "failure"}.get(v, v) for v in verdicts.split(",")]
    mark = "✓" if verdict == "success" else "✗"
    route = "on_success" if verdict == "success" else "on_failure"
    assert out.splitlines()[1:6] == [
        *(
            f"       ⇉ #{i} {x}: {w} (scripted)"
            for i, (x, w) in enumerate(zip("abc", words, strict=True))
        ),
        f"       {mark} {verdict} (join {join} of the scripted branches)",
        f"       → {end} ({route})",
    ]
    assert code == (ExitCode.OK if end == "good" else ExitCode.TERMINAL_FAILURE)


def test_parallel_branches_are_named_by_their_loop_and_a_text_maps_by_index(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p", PARALLEL)
    _, out, _ = simulate(root, "--branch-verdicts", "fan=success,failure")
    assert "       ⇉ #0 fix: success (scripted)\n       ⇉ #1 fix: failure (scripted)\n" in out
    root = _project(tmp_path / "t", TEXT_MAP)
    # Items known only when it runs: as many branches as verdicts given.
    code, out, _ = simulate(root, "--branch-verdicts", "fan=success,success,success,success")
    assert [line.strip() for line in out.splitlines() if "⇉" in line] == [
        f"⇉ #{i}: success (scripted)" for i in range(4)
    ]
    assert code == 0


def test_the_json_walk_has_the_branches_and_each_visit_uses_the_list(tmp_path: Path) -> None:
    root = _project(tmp_path, MAP)
    loop = root / ".loops" / "fan.yaml"
    loop.write_text(loop.read_text().replace("on_failure: bad", "on_failure: fan"))
    done = llproc.ll_loop(
        root, "simulate", "fan", "--branch-verdicts", "fan=success,failure,success", "--json"
    )
    walk = json.loads(done.stdout)
    fans = [s for s in walk["steps"] if s["state"] == "fan"]
    assert len(fans) > 1  # it goes round: the same branches each time, up to the limit
    for step in fans:
        assert step["branches"] == [
            {"branch": "#0 a", "verdict": "success"},
            {"branch": "#1 b", "verdict": "failure"},
            {"branch": "#2 c", "verdict": "success"},
        ]
        assert step["verdict"] == "failure"
    assert all("branches" not in s for s in walk["steps"] if s["state"] != "fan")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--branch-verdicts", "fan=success,success"],
            "--branch-verdicts: state 'fan' has 3 branches (a, b, c), given 2 verdicts",
        ),
        (
            ["--branch-verdicts", "good=success"],
            "--branch-verdicts: 'good' is not a fan-out state of loop 'fan' (its fan-out"
            " states: fan)",
        ),
        (
            ["--branch-verdicts", "fan=success,maybe,success"],
            "--branch-verdicts: 'maybe' is not how a branch ends (success, failure, stopped)",
        ),
        (
            ["--branch-verdicts", "fan=success,success,success", "--verdicts", "fan=success"],
            "--verdicts and --branch-verdicts both script state 'fan': give one",
        ),
        (
            ["--branch-verdicts", "fan"],
            "--branch-verdicts 'fan': expected STATE=VERDICT[,VERDICT...], e.g."
            " check=failure,success",
        ),
    ],
)
def test_a_wrong_branch_script_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], said: str
) -> None:
    root = _project(tmp_path, MAP)
    code, out, err = simulate(root, *args)
    assert code == 2
    assert out == ""
    assert err == f"ll-loop: error: {said}\n"


def test_without_branch_verdicts_the_fan_out_state_is_scripted_as_a_whole(tmp_path: Path) -> None:
    root = _project(tmp_path, MAP)
    code, out, _ = simulate(root, "--verdicts", "fan=success")
    assert code == 0
    assert "⇉" not in out
    assert "       ✓ success (scripted)\n" in out
