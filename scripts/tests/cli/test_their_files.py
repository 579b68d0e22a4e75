"""Smaller things little-loops' own files do, through `ll-loop` with real bash.

Each loop here is our own, written as that project writes them: a terminal in the middle of
a `flow:`, `with: input:` to a child's free-form input, a decision state with nothing to
evaluate, `default_timeout:`, a key little-loops ignores, a state's `agent:` that names a
Claude Code subagent, and a loop in a folder of `.loops/` named `oracles/x`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.llproc import console, events


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / ".loops" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def visited(root: Path, name: str) -> list[str]:
    """The states a run went through: where it started, then each route's target."""
    routes = [e for e in events(root, name) if e.get("event") == "route"]
    return [routes[0]["from"], *(e["to"] for e in routes)] if routes else []


FLOW = """\
    name: chain
    initial: check
    flow:
      - "check?work:failed"
      - work
      - failed
      - done
    state_defs:
      check:
        action: "exit 1"
      work:
        action: "true"
      failed:
        terminal: true
        failure: true
"""


def test_a_terminal_in_the_middle_of_a_flow_ends_the_run_there(tmp_path: Path) -> None:
    root = project(tmp_path, {"chain": FLOW})
    checked = console(root, "validate", "chain")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = console(root, "run", "chain")
    assert ran.returncode == 7, ran.stdout + ran.stderr  # failed: a failure terminal
    assert visited(root, "chain") == ["check", "failed"]


CHILD = """\
    name: child
    context:
      mode: quick
    initial: show
    states:
      show:
        action: 'printf "%s %s" "${context.input}" "${context.mode}" > seen.txt'
        next: done
      done:
        terminal: true
"""
PARENT = """\
    name: parent
    initial: call
    states:
      call:
        loop: child
        with:
          input: "ISSUE-7"
        on_yes: done
        on_no: done
      done:
        terminal: true
"""


def test_a_parent_gives_its_child_the_free_form_input_by_name(tmp_path: Path) -> None:
    root = project(tmp_path, {"child": CHILD, "parent": PARENT})
    ran = console(root, "run", "parent")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (root / "seen.txt").read_text() == "ISSUE-7 quick"


DECIDE = """\
    name: decide
    initial: probe
    states:
      probe:
        action: "echo SNAPSHOT_STALE"
        next: branch
      branch:
        evaluate:
          type: output_contains
          pattern: SNAPSHOT_STALE
        on_yes: stale
        on_no: fresh
      stale:
        terminal: true
      fresh:
        terminal: true
"""


def test_a_decision_state_with_nothing_to_evaluate_is_refused_and_runs_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"decide": DECIDE})
    refused = console(root, "validate", "decide")
    assert refused.returncode == 2
    assert "nothing to evaluate" in refused.stdout
    assert "give evaluate a source (such as ${prev.output})" in refused.stdout
    # As written, little-loops evaluates the empty text there: never found.
    ran = console(root, "run", "--compat", "decide")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert visited(root, "decide") == ["probe", "branch", "fresh"]


SLOW = """\
    name: slow
    default_timeout: 1
    initial: wait
    states:
      wait:
        action: "sleep 30"
        on_yes: done
        on_error: gave_up
      done:
        terminal: true
      gave_up:
        terminal: true
"""


def test_default_timeout_bounds_a_state_that_sets_none(tmp_path: Path) -> None:
    root = project(tmp_path, {"slow": SLOW})
    ran = console(root, "run", "slow", timeout=60)
    assert ran.returncode == 7, ran.stdout + ran.stderr  # a terminal reached on an error
    assert "action timed out after 1.0s" in ran.stderr
    assert visited(root, "slow") == ["wait", "gave_up"]
    (start,) = [e for e in events(root, "slow") if e.get("event") == "action_start"]
    assert start["timeout"] == 1


IGNORED = """\
    name: ignored
    initial: go
    states:
      go:
        action: "true"
        next: done
      done:
        terminal: true
        output:
          summary: "${captured.x}"
"""


def test_a_key_little_loops_ignores_is_an_error_and_a_warning_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"ignored": IGNORED})
    refused = console(root, "validate", "ignored")
    assert refused.returncode == 2
    assert "output: unknown key" in refused.stdout
    relaxed = console(root, "validate", "--compat", "ignored")
    assert relaxed.returncode == 0, relaxed.stdout
    assert "warning" in relaxed.stdout
    assert console(root, "run", "--compat", "ignored").returncode == 0


# Keys no loop file has, spelled as the model's own bookkeeping (the child loops it loaded,
# the file it came from, whether it reads as little-loops): unknown keys like any other.
BOOKKEEPING = """\
    name: kept
    initial: a
    children: 5
    source: /nonexistent/elsewhere.yaml
    theirs: false
    states:
      a:
        action: "exit 3"
        theirs: true
        route:
          success: done
          _: done
      done:
        terminal: true
"""


def test_keys_named_as_the_models_bookkeeping_are_unknown_keys_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"kept": BOOKKEEPING})
    relaxed = console(root, "validate", "--compat", "kept")
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    for key in ("children", "source", "theirs"):
        assert f"{key}: unknown key" in relaxed.stdout
    ran = console(root, "run", "--compat", "kept")
    assert "Traceback" not in ran.stderr, ran.stderr
    # little-loops routes an error verdict to `_`; a run that ends on one failed (exit 7)
    assert ran.returncode == 7, ran.stdout + ran.stderr
    assert visited(root, "kept") == ["a", "done"]
    refused = console(root, "run", "kept")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr, refused.stderr


# A key little-loops ignores inside a block of the loop or of a state: as any unknown key of
# theirs, a warning with --compat (as before findings carried their check).
IN_BLOCKS = """\
    name: blocks
    initial: a
    sandbox: {zzz: 1}
    commands:
      - {cmd: x, zzz: 1}
    circuit: {zzz: 1}
    states:
      a:
        action: "echo hi"
        sandbox: {zzz: 1}
        throttle: {zzz: 1}
        learning: {zzz: 1}
        pruning_profile: {zzz: 1}
        next: done
      done:
        terminal: true
"""


def test_an_unknown_key_in_a_block_is_an_error_and_a_warning_with_compat(tmp_path: Path) -> None:
    root = project(tmp_path, {"blocks": IN_BLOCKS})
    refused = console(root, "validate", "blocks")
    assert refused.returncode == 2, refused.stdout
    assert refused.stdout.count(": error:") == 7, refused.stdout
    relaxed = console(root, "validate", "--compat", "blocks")
    assert relaxed.returncode == 0, relaxed.stdout
    assert relaxed.stdout.count(": warning:") == 7, relaxed.stdout
    for place in ("sandbox", "commands", "circuit", "throttle", "learning", "pruning_profile"):
        assert f"{place}: unknown key" in relaxed.stdout, relaxed.stdout
    ran = console(root, "run", "--compat", "blocks")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert visited(root, "blocks") == ["a", "done"]


SUBAGENT = """\
    name: review
    initial: ask
    states:
      ask:
        action: "Review the change."
        action_type: prompt
        agent: code-reviewer
        next: done
      done:
        terminal: true
"""


def test_a_state_agent_that_names_no_agent_is_claudes_subagent_with_compat(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"review": SUBAGENT})
    refused = console(root, "validate", "review")
    assert refused.returncode == 2
    assert "unknown agent 'code-reviewer'" in refused.stdout
    assert "write claude: {agent: NAME}" in refused.stdout
    planned = console(root, "run", "--compat", "--dry-run", "review")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "claude: agent=code-reviewer" in planned.stdout  # run as `claude --agent ...`


ORACLE = """\
    name: gate
    initial: check
    states:
      check:
        action: "true"
        on_yes: done
        on_no: done
      done:
        terminal: true
"""


def test_a_loop_in_a_folder_is_named_with_its_folder(tmp_path: Path) -> None:
    root = project(tmp_path, {"oracles/gate": ORACLE})
    assert console(root, "validate", "oracles/gate").returncode == 0
    ran = console(root, "run", "oracles/gate")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    missing = console(root, "validate", "oracles/nope")
    assert missing.returncode != 0
    assert "no such file" in missing.stderr + missing.stdout


LOOSE_CHILD = """\
    name: loose
    initial: go
    states:
      go:
        action: "true"
        with_:
          mode: fast
        next: done
      done:
        terminal: true
"""
CALLER = """\
    name: caller
    initial: call
    states:
      call:
        loop: loose
        on_yes: done
        on_no: done
      done:
        terminal: true
"""


def test_compat_reaches_the_child_loops_a_parent_calls(tmp_path: Path) -> None:
    root = project(tmp_path, {"loose": LOOSE_CHILD, "caller": CALLER})
    strict = console(root, "validate", "caller")
    assert strict.returncode == 2
    assert "child loop loose.yaml is not valid" in strict.stdout
    relaxed = console(root, "validate", "--compat", "caller")
    assert relaxed.returncode == 0, relaxed.stdout
    ran = console(root, "run", "--compat", "caller")
    assert ran.returncode == 0, ran.stdout + ran.stderr
