"""The `*_ok` flags: every one accepted, each mapped to the check of ours it silences."""

from __future__ import annotations

from support.paths import REPO

from little_loops.fsm.definition.model.lint_flags import CHECKS, LINT_FLAG_KEYS, STRICTER, silenced

UPSTREAM_FLAGS = (
    "partial_route_ok",
    "unsafe_context_interpolation_ok",
    "capture_reachability_ok",
    "evaluate_unknown_keys_ok",
    "meta_self_eval_ok",
    "shared_state_ok",
    "artifact_versioning_ok",
    "generator_fix_ok",
    "bash_default_ok",
    "evidence_contract_ok",
    "shell_pid_ok",
    "parse_swallow_ok",
    "policy_dims_scored_ok",
    "terminal_action_ok",
    "abandonment_verdict_ok",
    "tamper_guard_ok",
    "prepatch_check_ok",
    "session_mode_ok",
    "pruning_profile_ok",
    "haiku_generator_ok",
)


def test_every_flag_of_little_loops_is_a_key() -> None:
    assert sorted(CHECKS) == sorted(UPSTREAM_FLAGS)
    assert set(LINT_FLAG_KEYS) == set(CHECKS)


def test_each_flag_names_a_stricter_check_or_none() -> None:
    assert {check for check in CHECKS.values() if check} <= set(STRICTER)
    assert silenced({"partial_route_ok": True, "shared_state_ok": True}) == {"route-never-given"}
    assert silenced({"partial_route_ok": False}) == set()


def test_the_docs_name_every_flag() -> None:
    docs = (REPO / "docs" / "loop-files.md").read_text()
    for flag in CHECKS:
        assert f"`{flag}`" in docs, flag
