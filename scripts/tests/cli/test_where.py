"""The flags of where a run happens: `--worktree`, `--base REF`, `--run-id ID`, and their Where."""

from __future__ import annotations

import argparse

import pytest

from little_loops.cli.where import add_worktree_flags, where_from_args
from little_loops.fsm.runs.new_run import Where


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="ll-loop run")
    add_worktree_flags(made)
    return made


def test_no_flags_is_the_main_checkout_with_no_id() -> None:
    assert where_from_args(parser().parse_args([])) == Where(False, None, None)


def test_every_flag_reaches_the_where() -> None:
    args = parser().parse_args(["--worktree", "--base", "v1.2", "--run-id", "ab12"])
    assert where_from_args(args) == Where(worktree=True, base="v1.2", run_id="ab12")


def test_base_without_worktree_is_parsed_as_given() -> None:
    # The flags only carry it: Where.for_loop is what refuses --base without --worktree.
    assert where_from_args(parser().parse_args(["--base", "main"])) == Where(False, "main", None)


@pytest.mark.parametrize("run_id", ["ab1", "ab123", "AB12", "ab-2", "", "ab12\n"])
def test_a_run_id_that_is_not_four_lowercase_letters_or_digits_is_a_usage_error(
    run_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        parser().parse_args(["--run-id", run_id])
    assert raised.value.code == 2
    assert f"argument --run-id: {run_id!r} is not a run id" in capsys.readouterr().err


@pytest.mark.parametrize("run_id", ["ab12", "0000", "zzzz", "a1b2"])
def test_a_good_run_id_is_kept_as_written(run_id: str) -> None:
    assert where_from_args(parser().parse_args(["--run-id", run_id])).run_id == run_id


def test_the_help_names_each_flag() -> None:
    text = parser().format_help()
    for flag in ("--worktree", "--base REF", "--run-id ID"):
        assert flag in text
