"""What an agent needs of $HOME in a sandbox: what it writes and runs is in its places."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from little_loops.fsm.actions.registry import AGENTS


def _within(name: str, places: tuple[str, ...]) -> bool:
    path = PurePosixPath(name.rstrip("/"))
    return any(path == PurePosixPath(p) or PurePosixPath(p) in path.parents for p in places)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_what_an_agent_writes_or_runs_is_one_of_its_places(agent: str) -> None:
    """The sandbox shows only an agent's `paths` (read-only): what it `writes` is made
    writable in them, and what it runs `code` from read-only again in what it writes."""
    home = AGENTS[agent].home
    assert all(_within(name, home.paths) for name in home.writes), home
    assert all(_within(name, home.writes) for name in home.code), home
