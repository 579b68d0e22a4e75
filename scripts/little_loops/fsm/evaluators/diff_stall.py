"""The `diff_stall` evaluator: has `git diff --stat` stopped changing between rounds."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.plateau import stall_detail
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result
from little_loops.fsm.facts.errors import LoopRuntimeError

# Where the last diff and the count are kept between rounds (and runs), per scope:
# `.loops/tmp/ll-diff-stall-<hash of the scope>.txt` and `.count`, in the current folder;
# the folder is ignored by git (a `.gitignore` holding `*`, as for `.running/`), so the
# memory is never committed by the loop's own `git add -A`. The folder is layout.MEMORY_DIR.


def _memory(scope: list[str] | None, where: Path) -> tuple[Path, Path]:
    named = "|".join(sorted(scope)) if scope else "_root_"
    key = hashlib.sha256(named.encode()).hexdigest()[:12]
    from little_loops.fsm.facts.layout import LOOPS_DIR_NAME, MEMORY_DIR  # not at import

    folder = where / LOOPS_DIR_NAME / MEMORY_DIR
    return folder / f"ll-diff-stall-{key}.txt", folder / f"ll-diff-stall-{key}.count"


def _count(counter: Path) -> int:
    """The rounds in a row the diff stayed the same (0 when unknown or unreadable)."""
    try:
        return max(0, int(counter.read_text().strip()))
    except (OSError, ValueError):
        return 0


def evaluate_diff_stall(
    scope: list[str] | None = None, max_stall: int = 1, where: Path | None = None
) -> EvaluationResult:
    """`success` when `git diff --stat` (of *scope*) changed since the last round or has
    not yet stayed the same *max_stall* rounds in a row; `failure` once it has; `error`
    when git fails. The first round only remembers the diff."""
    # Not at import: validate runs no git.
    from little_loops.fsm.processes.gitcmd import NO_SUBMODULE_RUN, git

    here = Path.cwd() if where is None else where
    paths = ["--", *scope] if scope else []
    try:
        result = git(here, "diff", "--stat", NO_SUBMODULE_RUN, *paths, check=False)
    except LoopRuntimeError as exc:
        return error_result(str(exc))
    if not result.ok:
        return error_result(f"git diff failed: {result.err.strip()[:200]}")
    snapshot, counter = _memory(scope, here)
    details: dict[str, Any] = {"stall_count": 0, "max_stall": max_stall, "diff_changed": True}
    from little_loops.fsm.facts.layout import make_running_dir

    try:
        make_running_dir(snapshot.parent)  # made ignored by git; a symbolic link is refused
        for path in (snapshot, counter):
            if path.is_symlink():  # never written through to wherever it points
                raise LoopRuntimeError(f"{path} is a symbolic link, not diff_stall's memory")
        before = snapshot.read_text(encoding="utf-8") if snapshot.is_file() else None
        count = _count(counter)
        if before is not None and before == result.out:
            count += 1
            details.update(stall_count=count, diff_changed=False)
            counter.write_text(str(count))
            return EvaluationResult("failure" if count >= max_stall else "success", details)
        snapshot.write_text(result.out, encoding="utf-8")
        counter.write_text("0")
    except OSError as exc:
        return error_result(f"diff_stall cannot keep its memory in {snapshot.parent}: {exc}")
    except LoopRuntimeError as exc:
        return error_result(f"diff_stall cannot keep its memory: {exc}")
    return EvaluationResult("success", details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    scope = [str(path) for path in config.scope] if config.scope else None
    return evaluate_diff_stall(scope, config.max_stall)


def _detail(event: Mapping[str, object]) -> str | None:
    return stall_detail(dict(event))


SPEC = EvaluatorSpec(
    name="diff_stall",
    summary="success while `git diff --stat` (of scope) changes; failure after max_stall "
    "rounds without",
    run=_run,
    reads_exit_code=True,
    keys=("scope", "max_stall"),
    error_causes="a git failure (not a repository)",
    detail=_detail,
)
