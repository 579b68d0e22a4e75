"""The `codex:` options: their checks and the codex exec flags they become."""

from __future__ import annotations

import pytest

from little_loops.fsm.actions.codex_options import (
    BYPASS_FLAG,
    CODEX_OPTIONS,
    codex_flags,
    toml_value,
)


def test_no_options_run_unattended_without_sandbox_or_questions() -> None:
    assert codex_flags({}) == [BYPASS_FLAG]


def test_each_option_becomes_its_flag_extra_args_last() -> None:
    options = {
        "extra_args": ["--oss"],
        "config": {"model_reasoning_effort": "high", "features.web_search": False},
        "approval_policy": "never",
        "profile": "ci",
        "model": "gpt-5-codex",
        "sandbox": "workspace-write",
    }
    assert codex_flags(options) == [
        "--sandbox",
        "workspace-write",
        "--model",
        "gpt-5-codex",
        "--profile",
        "ci",
        "-c",
        'approval_policy="never"',
        "-c",
        'model_reasoning_effort="high"',
        "-c",
        "features.web_search=false",
        "--oss",
    ]


def test_a_resumed_session_takes_its_sandbox_as_config_and_no_profile() -> None:
    flags = codex_flags({"sandbox": "read-only", "profile": "ci"}, resume=True)
    assert flags == ["-c", 'sandbox_mode="read-only"']


@pytest.mark.parametrize(
    ("value", "written"),
    [("o3", '"o3"'), (True, "true"), (3, "3"), (0.5, "0.5"), (["a", 1], '["a", 1]'),
     ('say "hi"', '"say \\"hi\\""')],
)  # fmt: skip
def test_values_are_written_as_toml(value: object, written: str) -> None:
    assert toml_value(value) == written


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("sandbox", "none", "expected one of read-only, workspace-write, danger-full-access"),
        ("approval_policy", "always", "expected one of untrusted, on-request"),
        ("config", ["a"], "expected a mapping of config keys to values, got"),
        ("config", {"a": {"b": 1}}, "config a: expected a string, number, true/false"),
        ("model", "", "expected a non-empty string"),
    ],
)
def test_bad_values_are_named(name: str, value: object, problem: str) -> None:
    found = CODEX_OPTIONS[name].check(value)
    assert found is not None
    assert found.startswith(problem), found


def test_every_option_has_a_doc() -> None:
    for name, option in CODEX_OPTIONS.items():
        assert option.doc.strip().endswith("."), name
