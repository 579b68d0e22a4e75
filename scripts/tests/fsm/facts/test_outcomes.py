"""Outcomes, statuses and exit codes: one table each in facts/outcomes.py, the docs agree."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from support.paths import REPO

import little_loops
from little_loops.fsm.facts.outcomes import (
    OUTCOMES,
    STATUSES,
    TERMINATION_EXIT_CODE,
    TERMINATION_STATUS,
    ExitCode,
    Outcome,
    Status,
    how_to_go_on,
    outcome_of,
)

PACKAGE = Path(little_loops.__file__).parent
DOCS = REPO / "docs"
# The modules of run control: they name outcomes and statuses through the enums only.
RUN_CONTROL = [
    *sorted((PACKAGE / "fsm" / "runs").glob("*.py")),
    *(
        PACKAGE / "cli" / f"{name}.py"
        for name in (
            "__init__",
            "stop",
            "status",
            "background",
            "resume",
            "run",
            "session",
            "history",
            "listing",
        )
    ),
]
WORDS = {str(o) for o in Outcome} | {str(s) for s in Status}


def _table(text: str, heading: str) -> list[list[str]]:
    """The cells of the first markdown table after `heading`, header and rule left out."""
    section = text[text.index(heading) :]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


def test_the_exit_code_table_of_docs_cli_is_exit_code_and_outcome() -> None:
    rows = _table((DOCS / "cli.md").read_text(), "## Exit codes")
    documented = {int(code): terminated_by for code, _meaning, terminated_by in rows}
    assert set(documented) == set(ExitCode)
    for code, terminated_by in documented.items():
        if terminated_by:
            assert Outcome(terminated_by).exit_code == code
        else:
            assert code not in {o.exit_code for o in Outcome}
            assert code == ExitCode.USAGE


def test_the_status_table_of_docs_persistence_is_outcome() -> None:
    rows = _table((DOCS / "persistence.md").read_text(), "## Statuses and exit codes")
    documented = {by: (status, int(code)) for by, status, code, _meaning in rows}
    assert documented == {str(o): (str(o.status), int(o.exit_code)) for o in Outcome}


def test_each_outcome_has_its_status_and_exit_code() -> None:
    assert {o: (o.status, o.exit_code) for o in Outcome} == {
        "terminal": ("completed", 0),
        "terminal_failure": ("failed", 7),
        "error": ("failed", 1),
        "max_iterations": ("failed", 3),
        "max_steps": ("failed", 10),
        "timeout": ("failed", 4),
        "handoff": ("awaiting_continuation", 5),
        "handoff_ended": ("failed", 5),
        "budget": ("failed", 6),
        "interrupted": ("interrupted", 130),
        "stopped": ("stopped", 143),
        "stall": ("failed", 8),
        "awaiting_approval": ("awaiting_approval", 9),
    }
    assert {o: o.exit_code for o in Outcome} == TERMINATION_EXIT_CODE
    assert {o: o.status for o in Outcome} == TERMINATION_STATUS
    assert {str(o): o for o in Outcome} == OUTCOMES
    assert tuple(str(s) for s in Status) == STATUSES


def test_the_enums_are_their_words_in_json() -> None:
    assert json.dumps({"status": Status.FAILED, "by": Outcome.BUDGET}) == (
        '{"status": "failed", "by": "budget"}'
    )
    assert f"{Outcome.STOPPED} {Status.RUNNING} {ExitCode.STOPPED}" == "stopped running 143"
    assert type(str(Outcome.TIMEOUT)) is str


def test_an_unknown_reason_is_an_error_and_limits_say_how_to_go_on() -> None:
    assert outcome_of("nonsense") is outcome_of(None) is Outcome.ERROR
    assert outcome_of("handoff") is Outcome.HANDOFF
    assert how_to_go_on("budget", "x") == "ll-loop resume x --max-cost USD"
    assert how_to_go_on("terminal", "x") is None


def _compared_words(path: Path, root: Path = PACKAGE) -> list[str]:
    """Outcome and status words a module compares with or looks up as string literals."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "request_shutdown":
            operands = list(node.args)
        else:
            continue
        for operand in operands:
            items = (
                operand.elts if isinstance(operand, ast.Tuple | ast.Set | ast.List) else [operand]
            )
            for item in items:
                if isinstance(item, ast.Constant) and item.value in WORDS:
                    found.append(f"{path.relative_to(root)}:{item.lineno}: {item.value!r}")
    return found


def test_the_scan_sees_a_literal_outcome_word(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('x = s == "running"\ny = how in ("stopped", "x")\nz = k == "loop_start"\n')
    assert _compared_words(module, tmp_path) == ["m.py:1: 'running'", "m.py:2: 'stopped'"]


def test_run_control_compares_outcomes_through_the_enums() -> None:
    found = [hit for path in RUN_CONTROL for hit in _compared_words(path)]
    assert found == []


def test_outcome_words_in_string_literals_are_only_in_outcomes() -> None:
    pattern = re.compile(r"^(?:" + "|".join(sorted(WORDS)) + r")$")
    outcomes = PACKAGE / "fsm" / "runs" / "outcomes.py"
    for path in RUN_CONTROL:
        if path == outcomes:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return) and node.value is not None:
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    assert not pattern.match(value.value), f"{path}:{node.lineno}"
