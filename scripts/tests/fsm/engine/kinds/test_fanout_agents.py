"""Agents' limits inside a fan-out, with real `ll-loop`, git and custom agents (shell
scripts): each branch waits out its own agent's limit with its own `rate_limit:` ladder,
and a branch whose agent is out of quota runs on the next agent of its list, while the
other branches go on untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.gitrepo import git, loops_project
from support.llproc import ll_loop, state

# Limited at its first call for each prompt (a file per prompt in $LL_TEST_HITS), then works.
BUSY = """\
#!/bin/bash
key=$(printf %s "$1" | tr -c 'a-z' _)
if [ ! -e "$LL_TEST_HITS/$key" ]; then
  touch "$LL_TEST_HITS/$key"; echo "rate limit reached, try later" >&2; exit 1
fi
echo "did: $1"
echo "cost: \\$0.01"
"""
# Always out of quota; each call told in $LL_TEST_HITS/out-calls.
OUT = """\
#!/bin/bash
echo "$1" >> "$LL_TEST_HITS/out-calls"
echo "usage limit reached" >&2
exit 1
"""
AGENTS = """\
agents:
  busy:
    command: ./tools/busy
    limit_pattern: "(rate|usage) limit reached"
    cost_pattern: 'cost: \\$([0-9.]+)'
  out:
    command: ./tools/out
    limit_pattern: "usage limit reached"
    cost_pattern: 'cost: \\$([0-9.]+)'
"""
# A child loop whose one prompt runs on AGENT, its limits waited 0.2 s.
CHILD = """\
name: NAME
context:
  item: ""
rate_limit: {ladder: [0.2], max_wait: 30}
initial: work
states:
  work:
    action: Do ${context.item}
    action_type: prompt
    agent: AGENT
    evaluate: {type: exit_code}
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""
FAN = """\
name: fan
initial: fan
states:
  fan:
    parallel:
      branches:
        - {loop: waits, with: {item: a}}
        - {loop: switches, with: {item: b}}
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
    outcome: failure
"""


def _child_events(root: Path, key: str) -> list[dict[str, Any]]:
    path = root / ".loops" / ".running" / f"{key}.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_branch_waits_its_own_limit_and_switches_its_own_agent(tmp_path: Path) -> None:
    hits = tmp_path / "hits"
    hits.mkdir()
    root = loops_project(
        tmp_path,
        {
            "tools/busy": BUSY,
            "tools/out": OUT,
            ".loops/agents.yaml": AGENTS,
            ".loops/waits.yaml": CHILD.replace("NAME", "waits").replace("AGENT", "busy"),
            ".loops/switches.yaml": CHILD.replace("NAME", "switches").replace(
                "AGENT", "[out, busy]"
            ),
            ".loops/fan.yaml": FAN,
        },
    )
    for name in ("busy", "out"):
        (root / "tools" / name).chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable agents")

    done = ll_loop(root, "run", "fan", timeout=120, env={"LL_TEST_HITS": str(hits)})

    assert done.returncode == 0, done.stdout + done.stderr
    parent = _child_events(root, "fan")
    keys = {e["index"]: e["key"] for e in parent if e["event"] == "branch_finish"}
    verdicts = [e["verdict"] for e in parent if e["event"] == "branch_finish"]
    assert verdicts == ["success", "success"]
    waits, switches = (_child_events(root, keys[i]) for i in (0, 1))
    # The first branch: its agent's limit waited out by its own ladder, the same agent again.
    assert [(e["agent"], e["seconds"]) for e in waits if e["event"] == "rate_limit_wait"] == [
        ("busy", 0.2)
    ]
    assert not [e for e in waits if e["event"] == "agent_switch"]
    # The second: out of quota on `out`, it runs on `busy`, the next of its list (and when
    # both are limited, it waits for them and tries its list again); `out` was asked by that
    # branch alone, never by the first.
    switched = [(e["from"], e["to"], e["reason"]) for e in switches if e["event"] == "agent_switch"]
    assert switched[0] == ("out", "busy", "usage_limit")
    assert {e["agent"] for e in switches if e["event"] == "rate_limit_wait"} <= {"every agent"}
    asked = (hits / "out-calls").read_text().splitlines()
    assert asked
    assert set(asked) == {"Do b"}
    # Each branch's spend is its own and the parent counts both.
    assert [e["cost_usd"] for e in parent if e["event"] == "branch_finish"] == [0.01, 0.01]
    assert state(root, "fan")["cost_usd"] == 0.02
