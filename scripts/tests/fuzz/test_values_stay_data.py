"""A value never runs as code: random and hand-written bash templates x hostile values,
through the real `ll-loop run`.

Each template (fuzz/bashgen.py makes them at random; fuzz/corpus.txt holds the hand-written
ones) places `${context.v}`, `${context.l}` (a list), `${captured.c.output}` or
`${env.LLFUZZ_X}` somewhere in bash; each value, if bash ever ran it as code, would create
a marker file. Batches of a few hundred states run as loops with `ll-loop run`
(fuzz/harness.py); a state `validate` or the run refuses counts as safe and the others run.
The test asserts that no marker appears, that at least 10,000 pairs with random templates
(and about 2,000 with hand-written ones) ran or were refused, and that at most 60% were
refused (a refusal is safe, but a fuzz that is mostly refused tests little: about 30% of
the random templates and half of the hand-written ones put the value where bash evaluates
it, and those a correct ll-loop refuses).

A bigger or another run, without scripts/dev (the figures are printed with `-s`):

    LL_FUZZ_N=100000 LL_FUZZ_SEED=7 .venv/bin/python -m pytest -s -p no:cacheprovider \\
        scripts/tests/fuzz/test_values_stay_data.py

`LL_FUZZ_N` is the number of pairs with random templates (default 10,000), `LL_FUZZ_SEED`
the seed of the random templates (default 29; a failure prints it, to replay the same ones).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from fuzz import bashgen, harness

pytestmark = pytest.mark.reliability

PAIRS = int(os.environ.get("LL_FUZZ_N", "10000"))
SEED = int(os.environ.get("LL_FUZZ_SEED", "29"))
MAX_REFUSED_SHARE = 0.6


def test_no_hostile_value_runs_whatever_bash_surrounds_it(tmp_path: Path) -> None:
    tally = harness.fuzz(tmp_path, SEED, PAIRS)
    print(tally.summary())
    shown = "\n".join(tally.escapes[:30])
    assert tally.escapes == [], f"{tally.summary()}\nfirst payload runs:\n{shown}"
    assert tally.random_pairs >= PAIRS, tally.summary()
    assert tally.refused <= MAX_REFUSED_SHARE * tally.pairs, tally.summary()
    assert tally.start_refusals == [], tally.start_refusals


def test_the_harness_sees_a_value_pasted_as_code(tmp_path: Path) -> None:
    # `${raw:...}` pastes the value as code on purpose: every payload must be seen, so
    # a quiet fuzz means the values did not run, not that the harness did not look.
    marks = tmp_path / "marks"
    (tmp_path / ".loops").mkdir()
    batch = harness.Batch(
        index=0,
        states=[
            ("b000s0000", "echo ${raw:context.v}", "control#0"),
            ("b000s0001", "${raw:env.LLFUZZ_X}", "control#1"),
            ("b000s0002", "echo ${context.v}", "control#2"),
        ],
        v=f"x; touch {marks}/M$LLFUZZ_T",
        x=f"touch {marks}/M$LLFUZZ_T",
        items=[],
        by_set=True,
        marks=marks,
    )
    tally = harness.Tally(seed=0)
    harness.run_batch(tmp_path, batch, tally)
    harness.collect_markers(batch, tally)
    assert sorted(e.split(":")[0] for e in tally.escapes) == ["control#0", "control#1"]
    assert (tally.ran, tally.refused) == (3, 0), tally.summary()


def test_the_templates_are_the_same_for_a_seed_and_hold_references() -> None:
    assert bashgen.templates(5, 50) == bashgen.templates(5, 50)
    assert bashgen.templates(5, 50) != bashgen.templates(6, 50)
    assert all(any(ref in t for ref in bashgen.REFS) for t in bashgen.templates(5, 500))


def test_the_corpus_holds_enough_hand_written_templates() -> None:
    found = harness.corpus()
    assert len(found) >= 120
    assert all("${" in t for t in found)
    assert len(set(found)) == len(found)


def test_a_run_that_stops_in_a_state_goes_on_after_it() -> None:
    left = [(f"b000s000{i}", "echo ${context.v}", f"random#0.{i}") for i in range(5)]

    def stopped(said: str) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(["ll-loop"], 1, "", said)

    tally = harness.Tally(seed=0)
    # Stopped in s0002, the last state the run names: refused; s0001, which the run went
    # through (its progress line names it), did not run either.
    said = "b000s0000 ok\nb000s0001 refused\nfailed in b000s0002"
    rest = harness._after_stop(left, {"b000s0000"}, stopped(said), tally)
    assert [s[0] for s in rest] == ["b000s0003", "b000s0004"]
    assert (tally.ran, tally.refused_at_run) == (1, 2)
    # The run ended after s0003 ran, naming nothing: the rest runs again from s0004.
    rest = harness._after_stop(rest, {"b000s0003"}, stopped("killed"), tally)
    assert [s[0] for s in rest] == ["b000s0004"]
    # Nothing ran and nothing is named: the values were refused before any state.
    assert harness._after_stop(rest, set(), stopped("bad value"), tally) == []
    assert (tally.ran, tally.refused_at_run, tally.refused_at_start) == (2, 2, 1)
    assert tally.start_refusals == ["bad value"]
