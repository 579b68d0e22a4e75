"""`ll-loop` itself: what starting a command loads (startup time is part of the product)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.imports import compiled_at_import, loaded_by, other_kind_modules


def test_help_loads_no_yaml_and_no_runner(tmp_path: Path) -> None:
    code, modules = loaded_by(tmp_path, "--help")
    assert code == 0
    assert not modules & {"yaml", "jsonschema", "anthropic", "little_loops.fsm.engine.executor"}


def test_help_lists_every_command_without_importing_one(tmp_path: Path) -> None:
    from little_loops.cli import SUBCOMMANDS

    proc = subprocess.run(
        [sys.executable, "-m", "little_loops.cli", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    for name, (_, summary) in SUBCOMMANDS.items():
        assert re.search(rf"^    {name} +{re.escape(summary.split()[0])}", proc.stdout, re.M)
    _, modules = loaded_by(tmp_path, "--help")
    assert sorted(m for m in modules if m.startswith("little_loops.cli.")) == []


def test_the_outline_parser_prints_the_full_parsers_help() -> None:
    from little_loops.cli import build_parser

    assert build_parser(outline=True).format_help() == build_parser().format_help()
    assert build_parser(outline=True).format_usage() == build_parser().format_usage()


# `ll-loop --help` needs argparse and the SUBCOMMANDS table, nothing more: typing, pathlib,
# the error classes, exit codes, run options, run layout, diagram, simulator, JSON and
# did-you-mean load when a command runs.
NOT_AT_HELP = {
    "typing",
    "pathlib",
    "dataclasses",
    "json",
    "difflib",
    "little_loops.fsm.facts.errors",
    "little_loops.fsm.facts.outcomes",
    "little_loops.fsm.facts.layout",
    "little_loops.fsm.definition.writing.diagram",
    "little_loops.fsm.engine.simulate",
    "little_loops.cli.options",
}


def test_help_loads_only_argparse_and_the_command_table(tmp_path: Path) -> None:
    code, modules = loaded_by(tmp_path, "--help")
    assert code == 0
    assert sorted(modules & NOT_AT_HELP) == []


def test_simulate_help_loads_no_simulator_and_no_json(tmp_path: Path) -> None:
    code, modules = loaded_by(tmp_path, "simulate", "--help")
    assert code == 0
    assert sorted(modules & {"little_loops.fsm.engine.simulate", "json"}) == []


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    loop = tmp_path / "x.yaml"
    loop.write_text("name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n")
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    cli = {m for m in modules if m.startswith("little_loops.cli.")}
    assert cli <= {
        "little_loops.cli.validate",
        "little_loops.cli.resolve",
    }
    assert "yaml" in modules
    assert not modules & {"jsonschema", "anthropic", "little_loops.fsm.actions.runners"}
    # Did-you-mean (difflib) is for a typo; JSON for --json.
    assert sorted(modules & {"difflib", "json"}) == []


# Every regular expression the validate path would compile at import, by module. The
# loader's are the YAML resolver's (every file read uses them); the others are compiled
# when first used, so importing a module costs nothing it does not need.
def test_validate_compiles_no_regex_at_import_but_the_yaml_resolvers() -> None:
    # The standard library's modules validate needs anyway are imported first: any other
    # module the validate path imports that compiles one (textwrap, shlex ...) shows up.
    preload = ("argparse", "dataclasses", "enum", "pathlib", "re", "typing", "yaml")
    imports = ("little_loops.cli.validate", "little_loops.fsm.validate.loopfile")
    code, compiled = compiled_at_import(imports=imports, preload=preload)
    assert (code, compiled) == (0, ["little_loops.fsm.definition.reading.loader"])


# The modules of the run path that still compile a pattern as they are imported (or as an
# import calls them): the YAML resolvers', the engine's step and fallback rule, and the run
# layout's run-id pattern read at import. Rate limits, prices, an agent's retry lines and
# git's lock message compile theirs when first used: a run of shell steps never does.
COMPILED_AT_RUN_IMPORTS = {
    "little_loops.fsm.definition.reading.loader",
    "little_loops.fsm.engine.step",
    "little_loops.fsm.engine.rules.fallback",
    "little_loops.fsm.facts.layout",
    "little_loops.fsm.runs.archive",
}


def _two_step_shell_loop(root: Path) -> None:
    """`.loops/x.yaml` under *root*: a `true` shell state, then a terminal one."""
    (root / ".loops").mkdir()
    (root / ".loops" / "x.yaml").write_text(
        "name: x\ninitial: a\nstates:\n  a:\n    action: 'true'\n    next: done\n"
        "  done:\n    terminal: true\n"
    )


def test_a_shell_run_compiles_no_regex_at_import_of_what_only_agents_and_errors_use(
    tmp_path: Path,
) -> None:
    _two_step_shell_loop(tmp_path)
    preload = (
        "argparse",
        "dataclasses",
        "enum",
        "json",
        "locale",
        "pathlib",
        "re",
        "typing",
        "yaml",
    )
    code, compiled = compiled_at_import(argv=["run", "x"], preload=preload, cwd=tmp_path)
    assert code == 0
    assert sorted(set(compiled) - COMPILED_AT_RUN_IMPORTS) == []


def test_the_shorthand_reads_the_run_flags_from_the_run_parser() -> None:
    from little_loops.cli import run_flags

    with_value, switches = run_flags()
    assert {"-n", "--max-iterations", "--max-cost", "--set", "--base"} <= with_value
    assert {"-q", "--quiet", "--worktree", "--dry-run", "-h"} <= switches
    assert not with_value & switches


def test_a_run_flag_with_a_value_before_a_word_is_skipped_with_its_value() -> None:
    # The value of `--set` is `status` here, so the first word is `run`, not `status`.
    from little_loops.cli import _first_word

    assert _first_word(["--set", "status", "run", "x"]) == 2
    assert _first_word(["--quiet", "status", "x"]) == 1


REUSE_MODULES = {
    "little_loops.fsm.definition.reading.reuse",
    "little_loops.fsm.definition.reading.fragments",
    "little_loops.fsm.definition.reading.flow",
    "little_loops.fsm.definition.reading.located",
}


def test_a_loop_without_reuse_keys_loads_no_reuse_module(tmp_path: Path) -> None:
    loop = tmp_path / "x.yaml"
    loop.write_text("name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n")
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    assert sorted(modules & REUSE_MODULES) == []
    loop.write_text("name: x\nflow: [a]\ninitial: a\n")
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    assert modules >= REUSE_MODULES


# The built-in agent kinds (and MCP's): validate imports one only for a file that uses it.
AGENT_KINDS = other_kind_modules()
SHELL_LOOP = """\
name: x
initial: check
context:
  marker: flag
states:
  check:
    action: test -f "${context.marker}" && echo present
    capture: seen
    evaluate:
      type: output_contains
      pattern: present
    on_success: done
    on_failure: fix
  fix:
    action: touch "${context.marker}" # ${captured.seen.output}
    next: check
  done:
    terminal: true
"""


# The check modules of features a loop file may have: validate imports each only for a file
# with one of the keys it acts on (definition/checks/features.py says which).
FEATURE_CHECKS = {
    f"little_loops.fsm.definition.checks.{name}"
    for name in (
        "agent_checks",
        "approval_checks",
        "commit_checks",
        "stall_checks",
        "subloop_checks",
    )
}


def test_validate_of_a_shell_only_loop_imports_no_check_of_a_feature_it_lacks(
    tmp_path: Path,
) -> None:
    loop = tmp_path / "x.yaml"
    loop.write_text(SHELL_LOOP)
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    assert sorted(modules & FEATURE_CHECKS) == []


_SUBLOOP = SHELL_LOOP.replace(
    'action: touch "${context.marker}" # ${captured.seen.output}\n    next: check',
    "loop: inner\n    on_success: check\n    on_failure: done",
)
_CHECKPOINT_AND_STALL = (
    SHELL_LOOP.replace("    next: check\n", "    next: check\n    rollback: true\n")
    + "stall:\n  same_result: 3\n"
)
_APPROVAL = SHELL_LOOP.replace(
    "  fix:\n    action:", "  fix:\n    action_type: approval\n    action:"
)


@pytest.mark.parametrize(
    ("text", "checks"),
    [
        (_SUBLOOP, ["subloop_checks"]),
        (_CHECKPOINT_AND_STALL, ["commit_checks", "stall_checks"]),
        (_APPROVAL, ["approval_checks"]),
        (SHELL_LOOP + "agent: codex\n", ["agent_checks"]),
    ],
    ids=["sub-loop", "checkpoint-and-stall", "approval", "agent"],
)
def test_validate_imports_the_checks_of_the_features_a_loop_has(
    tmp_path: Path, text: str, checks: list[str]
) -> None:
    (tmp_path / "inner.yaml").write_text(
        "name: inner\ninitial: a\nstates:\n  a:\n    terminal: true\n"
    )
    loop = tmp_path / "x.yaml"
    loop.write_text(text)
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0, modules
    # The checks of the features the file has, and no other feature's.
    assert sorted(modules & FEATURE_CHECKS) == [
        f"little_loops.fsm.definition.checks.{name}" for name in checks
    ]


def test_validate_imports_the_agent_kind_a_loop_names_and_no_other(tmp_path: Path) -> None:
    loop = tmp_path / "x.yaml"
    # The kind the file names is imported when validate needs one of its facts (here how
    # long its agent may be quiet, for `idle_timeout`), and only that one: `action_type:
    # prompt` is served by Claude Code's module, but the state runs on Codex.
    quiet = "  fix:\n    idle_timeout: 60\n    action_type: prompt\n"
    loop.write_text(
        SHELL_LOOP.replace("  fix:\n    action:", f"{quiet}    agent: codex\n    action:")
    )
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0, modules
    assert sorted(modules & AGENT_KINDS) == ["little_loops.fsm.actions.codex"]
    # A prompt with no `agent:` runs on Claude Code: its module, and no other agent's.
    loop.write_text(SHELL_LOOP.replace("  fix:\n    action:", f"{quiet}    action:"))
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0, modules
    assert sorted(modules & AGENT_KINDS) == ["little_loops.fsm.actions.claude_code"]


def test_validate_imports_the_custom_agents_kind_only_for_a_loop_with_custom_agents(
    tmp_path: Path,
) -> None:
    loop = tmp_path / "x.yaml"
    loop.write_text(
        SHELL_LOOP.replace(
            "  fix:\n    action:",
            "  fix:\n    action_type: prompt\n    agent: mine\n    action:",
        )
        + "agents:\n  mine:\n    command: cat\n    sandbox: none\n"
    )
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0, modules
    assert "little_loops.fsm.actions.custom" in modules
    assert sorted(modules & AGENT_KINDS) == []


def test_validate_imports_only_the_evaluators_the_file_names(tmp_path: Path) -> None:
    from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES

    def evaluators(modules: set[str]) -> list[str]:
        return [
            name for name in EVALUATOR_TYPES if f"little_loops.fsm.evaluators.{name}" in modules
        ]

    loop = tmp_path / "x.yaml"
    loop.write_text(SHELL_LOOP)
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    # The one it names; classify for the words of its `line:` key, which every file may have.
    assert evaluators(modules) == ["output_contains", "classify"]
    loop.write_text(SHELL_LOOP.replace("type: output_contains", "type: diff_stall"))
    code, modules = loaded_by(tmp_path, "validate", str(loop))
    assert code == 0
    assert evaluators(modules) == ["classify", "diff_stall"]


def test_run_of_a_shell_only_loop_imports_no_http_logging_xml_toml_or_metadata(
    tmp_path: Path,
) -> None:
    # Those serve webhooks, telemetry, guards' test reports, pyproject's pytest table and
    # installed versions: a run of a loop with none of them pays for none of them.
    _two_step_shell_loop(tmp_path)
    code, modules = loaded_by(tmp_path, "run", "x")
    assert code == 0
    heavy = {
        "ssl",
        "urllib.request",
        "http.client",
        "email",
        "logging",
        "xml.etree.ElementTree",
        "tomllib",
        "importlib.metadata",
    }
    assert sorted(modules & heavy) == []


def test_run_imports_only_the_state_kinds_the_loop_reaches(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    loop = tmp_path / ".loops" / "x.yaml"
    loop.write_text(
        "name: x\ninitial: a\nstates:\n  a:\n    action: 'true'\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    kinds = "little_loops.fsm.engine.kinds."
    code, modules = loaded_by(tmp_path, "run", "x")
    assert code == 0
    assert sorted(m.removeprefix(kinds) for m in modules if m.startswith(kinds)) == [
        "action",
        "guards",
        "names",
        "registry",
        "terminal",
    ]
    # A sub-loop state is reached: its kind is imported then.
    (tmp_path / ".loops" / "inner.yaml").write_text(
        loop.read_text().replace("name: x", "name: inner")
    )
    loop.write_text(
        loop.read_text().replace(
            "action: 'true'\n    next: done", "loop: inner\n    on_success: done"
        )
    )
    code, modules = loaded_by(tmp_path, "run", "x")
    assert code == 0
    assert f"{kinds}subloop" in modules
    assert f"{kinds}approval" not in modules
    assert f"{kinds}learning" not in modules


def test_a_run_of_a_step_judged_by_its_exit_code_imports_no_other_evaluator(tmp_path: Path) -> None:
    from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES

    def evaluators(modules: set[str]) -> list[str]:
        return [
            name for name in EVALUATOR_TYPES if f"little_loops.fsm.evaluators.{name}" in modules
        ]

    (tmp_path / ".loops").mkdir()
    loop = tmp_path / ".loops" / "x.yaml"
    loop.write_text(
        "name: x\ninitial: a\nstates:\n  a:\n    action: 'echo 0'\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    code, modules = loaded_by(tmp_path, "run", "x")
    assert code == 0
    # exit_code judges the step; classify reads the `line:` words every file may have.
    assert evaluators(modules) == ["exit_code", "classify"]


# What a run of a loop of bash commands does not use: the agent kinds, the sandbox, fan-out,
# learning, circuit and throttle blocks, reports and the live view. Each loads when a loop
# has the key (or the command) that needs it.
NOT_IN_A_SHELL_RUN = {
    *AGENT_KINDS,
    "little_loops.fsm.actions.custom",
    "little_loops.fsm.actions.sandbox",
    "little_loops.fsm.actions.refusals",
    "little_loops.fsm.definition.model.fanout",
    "little_loops.fsm.definition.model.learning",
    "little_loops.fsm.definition.model.circuit",
    "little_loops.fsm.definition.model.state_guards",
    "little_loops.fsm.definition.model.pr_block",
    "little_loops.fsm.definition.model.policy_blocks",
}
NOT_IN_A_SHELL_RUN_UNDER = (
    "little_loops.fsm.fanout",
    "little_loops.fsm.paradigms",
    "little_loops.cli.watch",
    "little_loops.cli.report",
    "little_loops.fsm.actions.mcp",
)


def test_a_run_of_a_shell_only_loop_imports_nothing_for_features_it_lacks(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "x.yaml").write_text(SHELL_LOOP)
    code, modules = loaded_by(tmp_path, "run", "x", "--set", "marker=flag", "-n", "3")
    assert code in (0, 3), modules  # done, or stopped at max_iterations
    assert "little_loops.fsm.engine.executor" in modules  # (it did run)
    assert sorted(modules & NOT_IN_A_SHELL_RUN) == []
    assert sorted(m for m in modules if m.startswith(NOT_IN_A_SHELL_RUN_UNDER)) == []


def test_a_run_imports_the_modules_of_the_features_its_loop_has(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    loop = SHELL_LOOP.replace("  fix:\n", "  fix:\n    throttle:\n      hard_max: 5\n")
    (tmp_path / ".loops" / "x.yaml").write_text(loop + "sandbox: none\n")
    code, modules = loaded_by(tmp_path, "run", "x", "-n", "3")
    assert code in (0, 3), modules
    assert "little_loops.fsm.definition.model.state_guards" in modules


@pytest.mark.parametrize("columns", [None, "abc", "-5", "0", "57", " 60", "99999"])
def test_the_help_is_as_wide_as_argparse_would_make_it(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    import argparse
    import shutil

    from little_loops.cli import build_parser, terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    # argparse's own formatter, which finds the width with shutil, lays out the same text.
    parser = build_parser("validate")
    ours = parser.format_help()
    monkeypatch.setattr(
        parser, "_get_formatter", lambda: argparse.ArgumentParser._get_formatter(parser)
    )
    assert parser.format_help() == ours


def test_the_parsers_formatter_takes_what_argparse_may_hand_it() -> None:
    """Python 3.14's argparse (after python/cpython#156144) asks `_get_formatter(file=...)`
    for the stream help goes to: ll-loop's parser takes it (a TypeError on `ll-loop --help`
    else) and lays the help out at the same width."""
    import argparse
    import io

    from little_loops.cli import build_parser

    parser = build_parser()
    plain = parser._get_formatter()
    assert isinstance(plain, argparse.HelpFormatter)
    for made in (parser._get_formatter(file=sys.stderr), parser._get_formatter(io.StringIO())):
        assert isinstance(made, argparse.HelpFormatter)
        assert made._width == plain._width


def test_the_program_freezes_what_it_made_before_exiting_and_a_call_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    from little_loops.cli import main_loop

    # A call with an argument list (a test's, a script's) leaves the collector as it was:
    # its process goes on.
    before = gc.get_freeze_count()
    assert main_loop(["--version"]) == 0
    assert gc.get_freeze_count() == before
    assert capsys.readouterr().out.startswith("ll-loop ")
    # The program (argv from sys.argv) freezes its objects: the collections at exit skip them.
    probe = (
        "import gc, sys\nsys.argv = ['ll-loop', '--version']\n"
        "from little_loops.cli import main_loop\n"
        "code = main_loop()\nprint(code, gc.get_freeze_count() > 1000)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines()[-1] == "0 True"
