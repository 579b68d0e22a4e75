"""Run batches of bash templates with hostile values through the real `ll-loop run`.

A batch is one loop file of a few hundred states, one template each, chained so that every
state moves on whatever its verdict (error included). Its values come in every way a run
takes them: the string parameter `v` and the list parameter `l` (from `--set` or a
`--context-file`), `${env.LLFUZZ_X}` from the environment, and `${captured.c.output}`, the
output of a first state that prints `$LLFUZZ_X`. Before its template each state exports its
name as `LLFUZZ_T` and appends it to the file `$LLFUZZ_RAN`: so the harness knows which
states ran, and a marker `M<state>` written by a payload names the state that let it run.

The `ll-loop` processes are forked from one that imported it once (support/forkserver.py).
A state `ll-loop validate` refuses is dropped and the batch validated again; a state the run
refuses (its action not run) is counted and the run goes on, or, if the run stops there, is
run again from the state after it. Refused states count as safe: nothing of theirs ran.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from fuzz import bashgen
from support.forkserver import ll_loop

CORPUS = Path(__file__).with_name("corpus.txt")
END = "LLFUZZ-END"
# The channels a corpus template's reference is swapped to, one per batch in turn.
CORPUS_CHANNELS = ("${context.v}", "${captured.c.output}", "${env.LLFUZZ_X}")


def corpus() -> list[str]:
    """The hand-written templates of corpus.txt (each follows a `%%` line)."""
    found: list[str] = []
    for block in re.split(r"^%%[^\n]*\n", CORPUS.read_text(), flags=re.MULTILINE):
        if block.strip():
            found.append(block.removesuffix("\n"))
    return found


@dataclass
class Batch:
    """One loop file's worth of states: (name, template, where it came from) and the values."""

    index: int
    states: list[tuple[str, str, str]]
    v: str
    x: str
    items: list[str]
    by_set: bool  # `v` given with --set (else in the context file)
    marks: Path  # where its values' payloads write their markers


@dataclass
class Tally:
    """What the batches did."""

    seed: int
    ran: int = 0
    refused_by_validate: int = 0
    refused_at_run: int = 0
    refused_at_start: int = 0
    runs: int = 0
    seconds: float = 0.0
    random_pairs: int = 0
    escapes: list[str] = field(default_factory=list)
    escaped_templates: set[str] = field(default_factory=set)
    start_refusals: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        """Count *other*'s figures in too."""
        self.ran += other.ran
        self.refused_by_validate += other.refused_by_validate
        self.refused_at_run += other.refused_at_run
        self.refused_at_start += other.refused_at_start
        self.runs += other.runs
        self.escapes += other.escapes
        self.escaped_templates |= other.escaped_templates
        self.start_refusals += other.start_refusals

    @property
    def refused(self) -> int:
        return self.refused_by_validate + self.refused_at_run + self.refused_at_start

    @property
    def pairs(self) -> int:
        return self.ran + self.refused

    def summary(self) -> str:
        hand = sum(1 for t in self.escaped_templates if t.startswith("corpus#"))
        fresh = sum(1 for t in self.escaped_templates if t.startswith("random#"))
        return (
            f"value fuzz (LL_FUZZ_SEED={self.seed}): {self.pairs} template x value pairs "
            f"({self.random_pairs} with random templates, the others hand-written), "
            f"{self.ran} ran, {self.refused} refused ({self.refused_by_validate} by validate, "
            f"{self.refused_at_run} at run time, {self.refused_at_start} at start; "
            f"{self.refused / max(self.pairs, 1):.1%} of the pairs refused); "
            f"{len(self.escapes)} payload runs: from {hand} hand-written templates, {fresh} "
            f"random ones and {len(self.escaped_templates) - hand - fresh} markers naming no "
            f"state; {self.runs} ll-loop runs in {self.seconds:.0f}s"
        )


def make_batches(seed: int, count: int, per_batch: int, marks: Path) -> list[Batch]:
    """Batches of at least *count* random templates in all, and the hand-written ones: a
    third of the corpus in each batch, so that each hand-written template meets every
    channel (`CORPUS_CHANNELS`) once in nine batches, each time with other values."""
    hand = corpus()
    share = len(CORPUS_CHANNELS)
    batches: list[Batch] = []
    made = 0
    while made < count:
        b = len(batches)
        channel = CORPUS_CHANNELS[(b // share) % len(CORPUS_CHANNELS)]
        texts = [
            (t.replace(bashgen.CORPUS_REF, channel), f"corpus#{i}")
            for i, t in enumerate(hand)
            if i % share == b % share
        ]
        fresh = bashgen.templates(seed * 100_003 + b, min(per_batch, count - made))
        texts += [(t, f"random#{b}.{i}") for i, t in enumerate(fresh)]
        states = [(f"b{b:03d}s{i:04d}", t, src) for i, (t, src) in enumerate(texts)]
        folder = marks / f"b{b:03d}"  # a marker whose $LLFUZZ_T did not expand: the batch
        values = bashgen.hostile_values(str(folder))
        lists = bashgen.hostile_lists(str(folder))
        batches.append(
            Batch(
                index=b,
                states=states,
                v=values[b % len(values)],
                x=values[(b * 7 + 3) % len(values)],
                items=lists[b % len(lists)],
                by_set=b % 2 == 0,
                marks=folder,
            )
        )
        made += len(fresh)
    return batches


def loop_document(name: str, states: list[tuple[str, str, str]]) -> dict[str, object]:
    """The loop file of *states*: a capture first, then each template, each moving on."""
    names = [s[0] for s in states] + ["llfuzz-end"]
    body: dict[str, object] = {
        "llfuzz-capture": {
            "action": 'printf %s "$LLFUZZ_X"',
            "capture": "c",
            "route": {"_": names[0], "_error": names[0]},
        }
    }
    for (state, text, _), nxt in zip(states, names[1:], strict=True):
        body[state] = {
            "action": f'export LLFUZZ_T={state}\necho {state} >> "$LLFUZZ_RAN"\n{text}',
            "timeout": 30,
            "route": {"_": nxt, "_error": nxt},
        }
    body["llfuzz-end"] = {"action": f'echo {END} >> "$LLFUZZ_RAN"', "next": "done"}
    body["done"] = {"terminal": True}
    return {
        "name": name,
        "initial": "llfuzz-capture",
        "max_iterations": 1_000_000,
        "parameters": {"v": {"type": "string"}, "l": {"type": "list", "default": []}},
        "states": body,
    }


def _refused_by_validate(
    root: Path, path: Path, env: dict[str, str], known: set[str]
) -> set[str] | str:
    """The states `ll-loop validate` finds errors in; a message when an error names none."""
    done = ll_loop(root, "validate", "--json", str(path), timeout=600, env=env)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return f"validate printed no JSON (exit {done.returncode}): {done.stderr[-500:]}"
    bad: set[str] = set()
    for file in report.get("files", []):
        for problem in file.get("errors", []):
            if problem.get("severity") != "error":
                continue
            state = problem.get("state")
            if state not in known:
                named = known & set(re.findall(r"b\d+s\d+", problem.get("message", "")))
                if not named:
                    return f"validate: {problem.get('message')}"
                state = min(named)
            bad.add(state)
    return bad


def run_batch(root: Path, batch: Batch, tally: Tally) -> None:
    """Validate, run and re-run *batch* until every state ran or was refused; tally it."""
    left = list(batch.states)
    batch.marks.mkdir(parents=True, exist_ok=True)
    ran_log = root / f"ran-{batch.index}.txt"
    env = {**os.environ, "LLFUZZ_X": batch.x, "LLFUZZ_RAN": str(ran_log)}
    context = {"l": batch.items} | ({} if batch.by_set else {"v": batch.v})
    context_file = root / f"context-{batch.index}.json"
    context_file.write_text(json.dumps(context))
    attempt = 0
    while left:
        attempt += 1
        name = f"fz{batch.index}r{attempt}"
        path = root / ".loops" / f"{name}.yaml"
        path.write_text(yaml.safe_dump(loop_document(name, left), sort_keys=False))
        tally.runs += 1
        bad = _refused_by_validate(root, path, env, {s[0] for s in left})
        if isinstance(bad, str):
            raise AssertionError(bad)
        if bad:
            tally.refused_by_validate += len(bad)
            left = [s for s in left if s[0] not in bad]
            continue
        ran_log.write_text("")
        args = ["run", name, "--context-file", context_file.name]
        if batch.by_set:
            args += ["--set", f"v={batch.v}"]
        tally.runs += 1
        done = ll_loop(root, *args, timeout=600, env=env)
        ran = ran_log.read_text().split()
        if END in ran:
            tally.ran += len(set(ran) - {END})
            tally.refused_at_run += len(left) - len(set(ran) - {END})
            break
        left = _after_stop(left, set(ran), done, tally)


def _after_stop(
    left: list[tuple[str, str, str]],
    ran: set[str],
    done: subprocess.CompletedProcess[str],
    tally: Tally,
) -> list[tuple[str, str, str]]:
    """The states still to run after a run stopped before its end: those after the stop.

    The state it stopped in is the last one the run's output names (it shows each state it
    enters): it, and those before it that did not run, were refused. When none after the
    last that ran is named (the run ended after it), the rest is run again.
    """
    last = max((i for i, s in enumerate(left) if s[0] in ran), default=-1)
    tally.ran += len(ran)
    tally.refused_at_run += last + 1 - len(ran)
    rest = left[last + 1 :]
    said = done.stderr + done.stdout
    stop = max((i for i, s in enumerate(rest) if re.search(rf"\b{s[0]}\b", said)), default=None)
    if stop is not None:
        tally.refused_at_run += stop + 1
        return rest[stop + 1 :]
    if last == -1:  # nothing ran, and no state named: the values themselves were refused
        first = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        tally.start_refusals.append(first)
        tally.refused_at_start += len(left)
        return []
    return rest


def collect_markers(batch: Batch, tally: Tally) -> None:
    """Every marker in *batch*'s folder as an escape, with the state its name starts with (a
    payload whose `$LLFUZZ_T` was not expanded names no state, only the batch)."""
    states = {state: (text, source) for state, text, source in batch.states}
    values = f"v={batch.v!r} x={batch.x!r} l={batch.items!r}".replace(str(batch.marks), "MARKS")
    for marker in sorted(p.name for p in batch.marks.iterdir()):
        named = re.match(r"M(b\d+s\d+)", marker)
        if named is None or named[1] not in states:
            tally.escapes.append(f"batch {batch.index}: marker {marker!r}, with {values}")
            tally.escaped_templates.add(f"batch {batch.index}: marker {marker!r}")
            continue
        text, source = states[named[1]]
        tally.escapes.append(f"{source}: {text!r} with {values}")
        tally.escaped_templates.add(source)


def fuzz(root: Path, seed: int, count: int, per_batch: int = 430, workers: int = 2) -> Tally:
    """Run *count* random template x value pairs (*per_batch* a batch), and the hand-written
    templates' on top, in the folder *root*, *workers* batches at a time (an `ll-loop run`
    waits on its disk writes as much as it computes)."""
    marks = root / "marks"
    started = time.monotonic()
    batches = make_batches(seed, count, per_batch, marks)

    def one(batch: Batch) -> Tally:
        part = Tally(seed=seed)
        project = root / f"project-{batch.index}"  # loops of one project wait for each other
        (project / ".loops").mkdir(parents=True)
        run_batch(project, batch, part)
        collect_markers(batch, part)
        return part

    tally = Tally(seed=seed)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(one, batches):
            tally.add(part)
    tally.random_pairs = sum(s[2].startswith("random#") for b in batches for s in b.states)
    tally.seconds = time.monotonic() - started
    return tally
