"""Which check acts on which keys (definition/checks/features.py): a check skipped for a file
without its keys would have found nothing there, and one with them finds what it should."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from fsm.definition import user_surface

from little_loops.fsm.definition.checks import features
from little_loops.fsm.definition.checks.features import (
    AGENT_CHECKS,
    FANOUT_CHILDREN,
    STALL,
    STATE_CHECKS,
    SUBLOOP_CHILDREN,
    Feature,
)
from little_loops.fsm.definition.checks.key_tables import LOOP_KEYS, STATE_KEYS
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.facts.errors import LoopDefinitionError

# Values a key may have in a file, right or wrong: what each check compares against.
VALUES: tuple[object, ...] = (
    None,
    True,
    False,
    0,
    "x",
    "approval",
    "prompt",
    "continue",
    "mine",
    "claude",
    "codex",
    "nosuch",
    "${context.x}",
    [],
    ["claude", "nosuch"],
    {},
    {"branches": [{"agent": "nosuch", "prompt": "p"}]},
    {"backend": "nosuch"},
    {"same_result": 2, "ignore_volatile": True},
    {"ignore_volatile": True},
)


def _all_problems(feature: Feature, *args: Any) -> list[Any]:
    """The check's problems, run whatever keys the file has."""
    return list(feature.function()(*args))


def _datas() -> Iterator[Mapping[str, Any]]:
    """Every loop of the repository, its docs and its tests that YAML can read."""
    texts = [path.read_text(encoding="utf-8") for path in user_surface.loop_files()]
    texts += [text for _, text in (*user_surface.doc_examples(), *user_surface.test_loops())]
    for text in texts:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if isinstance(data, Mapping) and isinstance(data.get("states"), Mapping):
            yield data


def _random_state(rng: random.Random) -> dict[str, object]:
    keys = rng.sample(sorted(STATE_KEYS), rng.randint(0, 6))
    return {key: rng.choice(VALUES) for key in keys}


def _random_loop(rng: random.Random) -> dict[str, object]:
    keys = rng.sample(sorted(set(LOOP_KEYS) - {"states"}), rng.randint(0, 4))
    data: dict[str, object] = {key: rng.choice(VALUES) for key in keys}
    data["states"] = {f"s{i}": _random_state(rng) for i in range(rng.randint(0, 3))}
    return data


def test_a_state_check_finds_nothing_in_a_state_without_its_keys() -> None:
    rng = random.Random(40)
    states = [_random_state(rng) for _ in range(4000)]
    for data in _datas():
        states += [s for s in data["states"].values() if isinstance(s, Mapping)]
    for state in states:
        for feature in STATE_CHECKS:
            assert feature.at_state(state) == _all_problems(feature, state), (feature, state)


def test_the_agent_checks_find_nothing_in_a_file_without_their_keys() -> None:
    rng = random.Random(42)
    datas = [_random_loop(rng) for _ in range(3000)] + list(_datas())
    for data in datas:
        for project in ((), ("mine",)):  # a custom agent of the project: it keeps no session
            expected = _all_problems(AGENT_CHECKS, data, project)
            assert AGENT_CHECKS.at_file(data, project) == expected, data


def test_a_model_check_finds_nothing_in_a_model_without_its_keys(tmp_path: Path) -> None:
    source = str(tmp_path / "x.yaml")
    checked = 0
    for data in _datas():
        try:
            fsm = FSMLoop.from_dict(dict(data))
        except (LoopDefinitionError, TypeError, ValueError, AttributeError, KeyError):
            continue
        checked += 1
        assert STALL.at_model(fsm) == _all_problems(STALL, fsm)
        assert FANOUT_CHILDREN.at_model(fsm, source) == _all_problems(FANOUT_CHILDREN, fsm, source)
        if not SUBLOOP_CHILDREN.in_model(fsm):
            assert _all_problems(SUBLOOP_CHILDREN, fsm, source, None) == []
    assert checked >= 300


def test_each_check_runs_on_a_state_or_file_with_its_keys() -> None:
    approval, subloop, fanout, commit = STATE_CHECKS
    assert approval.at_state({"on_timeout": "x"}) != []
    assert approval.at_state({"action_type": "approval"}) != []
    for state in ({"with": {}}, {"worktree": True}, {"outcome": "x"}, {"loop": "c", "next": "a"}):
        assert subloop.at_state(state) != [], state
    assert fanout.at_state({"parallel": {}, "map": {}}) != []
    assert commit.at_state({"rollback": True, "terminal": True}) != []
    assert AGENT_CHECKS.at_file({"agent": "nosuch", "states": {}}) != []
    assert AGENT_CHECKS.at_file({"states": {"a": {"agent": "claude"}}}) != []
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "stall": {"ignore_volatile": True},
            "states": {"a": {"terminal": True}},
        }
    )
    assert STALL.at_model(fsm) != []
    fsm.stall = None
    fsm.states["a"] = StateConfig.from_dict({"terminal": True, "stall": {"ignore_volatile": True}})
    assert STALL.at_model(fsm) != []
    # `session: continue` on a custom agent's state: the agent is named, so the check runs.
    custom = {"agents": {"mine": {"command": "cat"}}, "agent": "mine"}
    state = {"action_type": "prompt", "action": "x", "session": "continue"}
    assert AGENT_CHECKS.at_file({**custom, "states": {"a": state}}) != []


def test_every_check_names_a_function_of_the_checks_or_the_model() -> None:
    declared = [value for value in vars(features).values() if isinstance(value, Feature)]
    declared += list(STATE_CHECKS)
    assert len(declared) == 8
    for feature in declared:
        assert feature.check.split(".")[0] in ("checks", "model"), feature
        assert callable(feature.function()), feature
        assert feature.loop_keys or feature.state_keys, feature


class _CountingState(dict[str, object]):
    """A raw state that counts the values read from it."""

    reads = 0

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        type(self).reads += 1
        return super().get(key, default)


def test_a_state_with_none_of_a_feature_s_keys_has_no_value_read() -> None:
    # Every state of a big file is asked once per feature: a state with none of its keys
    # (most of them) must be passed over without reading a value per key (counted).
    features_ = (*STATE_CHECKS, AGENT_CHECKS, STALL, SUBLOOP_CHILDREN, FANOUT_CHILDREN)
    plain = _CountingState(action="echo hi", next="done", capture="out")
    _CountingState.reads = 0
    assert not any(f.in_state(plain) for f in features_)
    assert _CountingState.reads == 0
    # With one of the keys it reads them, as before.
    assert any(f.in_state(_CountingState(plain, loop="child")) for f in features_)
    assert _CountingState.reads > 0
