"""`join: best` by the LLM judge: each branch's diff and output put to the judge, one picked."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.judge_rules import MAX_OUTPUT_CHARS
from little_loops.fsm.evaluators.llm_structured import SPEC as LLM_JUDGE
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.fanout import children
from little_loops.fsm.fanout.branches import BranchRecord
from little_loops.fsm.processes.gitcmd import git

CANNOT_JUDGE = "cannot_judge"  # the judge's answer when no branch can be told better
_ROOM = MAX_OUTPUT_CHARS - 400  # what the branches' texts may take of what the judge reads
_LEAST = 160  # the fewest characters a branch is shown in (its tags and a little of its diff)
MAX_JUDGED = _ROOM // _LEAST  # the most branches one call can show the judge
CUT = "[cut]"  # where a branch's diff or output was cut to fit


@dataclass(frozen=True)
class Judgement:
    """The judge's pick (None: it could not judge, *reason* says why), its reason, and the
    evaluation's details (model, usage, cost) for the run's spend."""

    picked: BranchRecord | None
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


def label(record: BranchRecord) -> str:
    """How the judge names a branch: `branch_1` for the first."""
    return f"branch_{record.branch.index + 1}"


def judge_best(
    records: Sequence[BranchRecord],
    base: str | None,
    loops_dir: Path,
    question: str,
    llm: LLMConfig,
) -> Judgement:
    """The branch of *records* (the successful ones) the judge finds best at *question*,
    from each one's change since *base* and its last output; one branch needs no judge."""
    if not records:
        return Judgement(None, "no branch succeeded")
    if len(records) == 1:
        return Judgement(records[0], "the only successful branch")
    if not llm.enabled:
        return Judgement(None, "the LLM judge is off (--no-llm or llm.enabled: false)")
    if len(records) > MAX_JUDGED:  # it would be shown too little of each, or not all
        return Judgement(
            None, f"the judge compares at most {MAX_JUDGED} branches, {len(records)} succeeded"
        )
    if base is None:  # the branches ran one after another in the project, on one set of files
        return Judgement(None, "the judge compares the branches' changes: not a git repository")
    names = {label(r): r for r in records}
    schema = {
        "type": "object",
        "properties": {
            "verdict": {
                "type": "string",
                "enum": [*names, CANNOT_JUDGE],
                "description": f"the best branch, or {CANNOT_JUDGE} when none is better",
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string", "description": "Brief explanation"},
        },
        "required": ["verdict", "confidence", "reason"],
    }
    share = (_ROOM - 2 * len(records)) // len(records)
    text = "\n\n".join(_branch_text(r, base, loops_dir, share) for r in records)
    config = EvaluateConfig(type=LLM_JUDGE.name, prompt=question, schema=schema)
    result = LLM_JUDGE.run(config, text, 0, llm, None)
    details = dict(result.details)
    reason = one_line(str(details.get("reason") or details.get("error") or ""))
    picked = names.get(result.verdict)
    if picked is None:
        said = reason or result.verdict
        return Judgement(None, f"the judge could not judge ({result.verdict}): {said}", details)
    if details.get("confident") is False:
        why = f"the judge was not confident ({details.get('confidence')}): {reason}"
        return Judgement(None, why, details)
    return Judgement(picked, reason, details)


def _branch_text(record: BranchRecord, base: str | None, loops_dir: Path, room: int) -> str:
    """One branch as the judge reads it, in at most *room* characters: its diff (its start)
    and its last output (its end)."""
    head = f'<branch name="{label(record)}" loop="{one_line(record.branch.item)[:40]}">\n<diff>\n'
    middle, tail = "\n</diff>\n<output>\n", "\n</output>\n</branch>"
    room -= len(head) + len(middle) + len(tail)
    diff = _cut(diff_of(record, base), room * 2 // 3, keep_end=False)
    said = children.saved(loops_dir, record.key).get("prev_result")
    output = str(said.get("output") or "") if isinstance(said, dict) else ""
    output = _cut(output, room - len(diff), keep_end=True)
    return f"{head}{diff}{middle}{output}{tail}"


def diff_of(record: BranchRecord, base: str | None) -> str:
    """What the branch changed since *base*, as a diff: its commits and what it left
    uncommitted, new files too (read through an index of its own: its worktree untouched)."""
    where = record.worktree
    if base is None or where is None:
        return "(not a git repository: no diff)"
    if not where.is_dir():
        return "(no change: its worktree was removed, it changed nothing)"
    with tempfile.TemporaryDirectory(prefix="ll-judge-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        try:
            git(where, "read-tree", base, env=env)
            git(where, "add", "-A", env=env)
            found = git(where, "diff", "--cached", "--no-color", "--no-ext-diff", base, env=env)
        except LoopRuntimeError as exc:
            return f"(no diff: {exc})"
    return found.out or "(no change)"


def _cut(text: str, room: int, *, keep_end: bool) -> str:
    """*text*, or its start (or end) and `[cut]` where the rest was, in *room* characters."""
    if len(text) <= room:
        return text
    if room < len(CUT) + 1:
        return ""
    keep = room - len(CUT) - 1
    return f"{CUT}\n{text[len(text) - keep :]}" if keep_end else f"{text[:keep]}\n{CUT}"
