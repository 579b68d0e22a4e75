"""migrate_text: keys rewritten in place from the spellings table; comments and layout kept."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.endings import FAILURE_NAMES
from little_loops.fsm.definition.model.spellings import SPELLINGS
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.migrate import migrate_text
from little_loops.fsm.facts.errors import LoopFileError

THEIRS = """\
# their spelling, with comments
name: tidy
initial: check
states:
  check:
    action: "make lint"   # the check
    on_yes: done          # clean
    on_no: fix
  fix:
    action: "make fix"
    route:
      yes: check
      "no": failed
      error: aborted
  failed:
    terminal: true  # gave up
  aborted: {terminal: true}
  kept:
    terminal: true
    failure: false
  done:
    terminal: true
"""

OURS = """\
# their spelling, with comments
name: tidy
initial: check
states:
  check:
    action: "make lint"   # the check
    on_success: done          # clean
    on_failure: fix
  fix:
    action: "make fix"
    route:
      success: check
      failure: failed
      error: aborted
  failed:
    terminal: true  # gave up
    outcome: failure
  aborted: {terminal: true, outcome: failure}
  kept:
    terminal: true
    outcome: success
  done:
    terminal: true
"""


def test_the_keys_change_and_nothing_else() -> None:
    migration = migrate_text(THEIRS, "tidy.yaml")
    assert migration.after == OURS
    assert [(c.line, c.what) for c in migration.changes] == [
        (7, "on_yes -> on_success in state 'check'"),
        (8, "on_no -> on_failure in state 'check'"),
        (12, "yes -> success in the route of state 'fix'"),
        (13, "no -> failure in the route of state 'fix'"),
        (16, "wrote outcome: failure in terminal state 'failed' (its name)"),
        (17, "wrote outcome: failure in terminal state 'aborted' (its name)"),
        (20, "failure: false -> outcome: success in state 'kept'"),
    ]
    assert migration.notes == []


def test_ours_is_left_as_it_is() -> None:
    migration = migrate_text(OURS, "tidy.yaml")
    assert migration.after == OURS
    assert migration.changes == []


def test_the_data_is_the_same_under_our_keys() -> None:
    before = load_text(THEIRS).data["states"]
    after = load_text(migrate_text(THEIRS).after).data["states"]
    assert after["check"] == {"action": "make lint", "on_success": "done", "on_failure": "fix"}
    assert after["fix"]["route"] == {"success": "check", "failure": "failed", "error": "aborted"}
    assert after["kept"] == {"terminal": True, "outcome": "success"}
    assert after.keys() == before.keys()


def test_every_spelling_of_the_table_is_rewritten() -> None:
    """One loop using each entry of spellings.py at its level: none is left behind."""
    for spelling in SPELLINGS:
        value = "true" if spelling.values else "done"
        if spelling.level == "state":
            state = f"    action: 'true'\n    {spelling.theirs}: {value}\n    next: done\n"
            if spelling.values:
                state = f"    terminal: true\n    {spelling.theirs}: {value}\n"
        elif spelling.level == "route":
            state = f"    action: 'true'\n    route:\n      {spelling.theirs}: done\n"
        else:
            pytest.fail(f"no test loop for a {spelling.level}-level spelling yet")
        text = f"name: x\ninitial: s\nstates:\n  s:\n{state}  done:\n    terminal: true\n"
        migration = migrate_text(text)
        assert f"{spelling.theirs}:" not in migration.after, spelling
        assert f"{spelling.ours}:" in migration.after, spelling


def test_both_spellings_in_one_state_are_left_with_a_note() -> None:
    text = "name: x\ninitial: s\nstates:\n  s:\n    action: 'true'\n    on_yes: d\n"
    text += "    on_success: d\n  d:\n    terminal: true\n"
    migration = migrate_text(text, "x.yaml")
    assert migration.after == text
    assert [(n.line, n.what) for n in migration.notes] == [
        (6, "left on_yes in state 's': on_success is there too")
    ]


@pytest.mark.parametrize("name", FAILURE_NAMES)
def test_a_failure_named_terminal_with_an_outcome_is_left(name: str) -> None:
    text = f"name: x\ninitial: {name}\nstates:\n  {name}:\n    terminal: true\n"
    text += "    outcome: success\n"
    assert migrate_text(text).changes == []


def test_not_yaml_is_refused_with_the_line() -> None:
    with pytest.raises(LoopFileError, match=r"^x.yaml:2:\d+: YAML syntax error"):
        migrate_text("name: x\n  bad: [\n", "x.yaml")


def test_fragments_and_state_defs_are_rewritten_too() -> None:
    text = """\
fragments:
  shell_exit:
    action_type: shell
    on_yes: done  # a caller may override
state_defs:
  probe:
    action: "true"
    route: {yes: done, no: failed}
  failed:
    terminal: true
"""
    migration = migrate_text(text, "lib.yaml")
    assert migration.after == (
        text.replace("on_yes:", "on_success:")
        .replace("{yes: done, no: failed}", "{success: done, failure: failed}")
        .replace("    terminal: true\n", "    terminal: true\n    outcome: failure\n")
    )
    assert [c.what for c in migration.changes] == [
        "on_yes -> on_success in fragment 'shell_exit'",
        "yes -> success in the route of state 'probe'",
        "no -> failure in the route of state 'probe'",
        "wrote outcome: failure in terminal state 'failed' (its name)",
    ]


def test_windows_line_ends_stay_and_a_last_line_without_one() -> None:
    crlf = THEIRS.replace("\n", "\r\n")
    assert migrate_text(crlf).after == OURS.replace("\n", "\r\n")
    text = "name: x\ninitial: failed\nstates:\n  failed:\n    terminal: true"
    assert migrate_text(text).after == text + "\n    outcome: failure"


ALIASED = """\
name: shared
initial: x
states:
  x: &step
    action: "true"
    on_yes: done
    on_no: {first}
  y: *step
  {first}: &end
    terminal: true
  {second}: *end
"""


def test_a_state_shared_through_an_alias_is_rewritten_once() -> None:
    text = ALIASED.format(first="done", second="failed")
    migration = migrate_text(text, "shared.yaml")
    assert "    on_success: done\n    on_failure: done\n" in migration.after
    assert [c.line for c in migration.changes] == [6, 7]
    assert load_text(migration.after).data["states"]["y"]["on_success"] == "done"


def test_a_failure_terminal_shared_with_another_terminal_gets_no_outcome() -> None:
    text = ALIASED.format(first="failed", second="done")
    migration = migrate_text(text, "shared.yaml")
    assert "outcome" not in migration.after  # it would make `done` fail too
    assert any("YAML alias" in note.what for note in migration.notes)


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85", "\r"], ids=["LS", "PS", "NEL", "CR"])
def test_a_line_break_yaml_counts_inside_a_string_moves_no_edit(brk: str) -> None:
    text = (
        f'name: c\ninitial: x\nstates:\n  x:\n    action: "echo a{brk}b"\n    on_yes: failed\n'
        "  failed:\n    terminal: true\n  zzz:\n    terminal: true\n"
    )
    migration = migrate_text(text, "c.yaml")
    assert migration.after == text.replace("on_yes", "on_success").replace(
        "  failed:\n    terminal: true\n", "  failed:\n    terminal: true\n    outcome: failure\n"
    )
    assert [c.line for c in migration.changes] == [6, 8]
