"""The loop the fallback e2e tests run: `fix` on a list of two agents (the first may be
unable to run), then a shell check that the planted bug in `calc.sh` (2+3) is fixed."""

from __future__ import annotations

# Fill with .format(first=..., second=..., declared=...): `declared` holds the agents'
# settings or definitions (one YAML line each), or "".
FIX_CALC_LOOP = """\
name: fallback
initial: fix
agent: [{first}, {second}]
{declared}
states:
  fix:
    action_type: prompt
    action: "Fix the planted bug in calc.sh"
    evaluate: {{type: exit_code}}
    on_success: check
    on_failure: failed
    on_error: failed
  check:
    action: "bash calc.sh | grep -qx 4"
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
"""
