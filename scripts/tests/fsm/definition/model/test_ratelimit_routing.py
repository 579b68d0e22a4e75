"""A state's own rate-limit waits (little-loops' keys) and its on_rate_limit_exhausted route,
checked in a real run against a `claude` that always answers 429."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_claude import shell_claude
from support.gitrepo import loops_project
from support.llproc import events, ll_loop

from little_loops.fsm.definition.model.blocks import RateLimitConfig
from little_loops.fsm.definition.model.ratelimit_routing import short_tier, state_rate_limit


def test_the_short_tier_doubles_from_its_base() -> None:
    assert short_tier(None, None) == []
    assert short_tier(2, 0.5) == [0.5, 1.0]
    assert short_tier(None, 10) == [10, 20, 40]
    assert short_tier(0, 10) == []


def test_a_state_lays_its_waits_over_the_loops() -> None:
    loop = RateLimitConfig(ladder=[60.0], max_wait=100.0)
    assert state_rate_limit(loop) is loop
    assert state_rate_limit(loop, retries=1, base=5) == RateLimitConfig([5.0, 60.0], 100.0)
    mine = state_rate_limit(loop, ladder=[1.0, 2.0], max_wait=0)
    assert (mine.ladder, mine.max_wait) == ([1.0, 2.0], 0.0)


LOOP = """\
name: limited
initial: refine
states:
  refine:
    action: "/ll:refine 1"
    action_type: slash_command
    max_rate_limit_retries: 2
    rate_limit_backoff_base_seconds: 0.1
    rate_limit_long_wait_ladder: [0.3]
    rate_limit_max_wait_seconds: 1
    route:
      _: done
      _error: done
    on_rate_limit_exhausted: skipped
  skipped:
    action: echo skipped
    next: done
  done:
    terminal: true
"""


def test_the_waits_run_out_into_on_rate_limit_exhausted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = loops_project(tmp_path, {".loops/limited.yaml": LOOP})
    calls = tmp_path / "calls.log"
    body = f'echo x >> {calls}\necho "API Error: Request rejected (429) · slow down"\nexit 1'
    shell_claude(tmp_path, monkeypatch, body)
    assert ll_loop(root, "validate", "limited").returncode == 0
    run = ll_loop(root, "run", "limited", timeout=60)
    assert run.returncode == 0, run.stderr + run.stdout
    waits = [e["seconds"] for e in events(root, "limited") if e["event"] == "rate_limit_wait"]
    assert waits == [0.1, 0.2, 0.3, 0.3, 0.1], json.dumps(waits)  # 1s in all, then the route
    assert len(calls.read_text().split()) == len(waits) + 1
    routes = [e for e in events(root, "limited") if e["event"] == "route"]
    assert routes[0]["to"] == "skipped"
