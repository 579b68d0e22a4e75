"""One run as `watch` shows it: hostile text escaped, only the log's end read, nothing written."""

from __future__ import annotations

import asyncio
import hashlib
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.cli.watch.detail import LINE_CHARS, TAIL_EVENTS, load_view, output_tail
from little_loops.fsm.facts.outcomes import ExitCode

# A state name with a C1 control (CSI), output with ESC, CR, BEL and a 10 MB line.
HOSTILE = """\
    name: hostile
    initial: "loud\\u009b31m"
    states:
      "loud\\u009b31m":
        action: >-
          head -c 10000000 /dev/zero | tr '\\0' 'x'; printf '\\n';
          printf 'title \\033]0;pwned\\007 bell \\a cr \\r clear \\033[2J\\n';
          printf 'after \\033[31mred\\n'; sleep {marker}
        capture: said
        next: done
      done:
        terminal: true
"""
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b")


def files_digest(root: Path) -> dict[str, str]:
    running = root / ".loops" / ".running"
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in running.iterdir()}


def test_hostile_text_is_shown_escaped_everywhere(tmp_path: Path, marker: str) -> None:
    pytest.importorskip("textual")
    from cli.watch.test_app import screen_text, until

    from little_loops.cli.watch.app import WatchApp

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "hostile.yaml").write_text(
        textwrap.dedent(HOSTILE.format(marker=marker))
    )
    started = llproc.console(tmp_path, "run", "hostile", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the output")
    seen: list[str] = []

    async def drive() -> None:
        app = WatchApp(tmp_path / ".loops")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "loud\\x9b31m" in screen_text(app), "the escaped state")
            seen.append(screen_text(app))
            await pilot.press("enter")
            await until(pilot, lambda: "after \\x1b[31mred" in screen_text(app), "the live output")
            seen.append(screen_text(app))
            await pilot.press("o")
            await until(pilot, lambda: "(last 2 lines)" in screen_text(app), "the full output")
            seen.append(screen_text(app))

    asyncio.run(drive())
    llproc.console(tmp_path, "stop", "hostile")
    for text in seen:
        assert not any(ch in text for ch in RAW_CONTROLS), text
    for text in seen[1:]:
        assert "title \\x1b]0;pwned\\x07 bell \\x07 cr \\r clear \\x1b[2J" in text


def test_a_ten_megabyte_line_is_cut_before_it_is_escaped(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_bytes(b"\x1b" * 10_000_000 + b"\nlast \x07 line\n")
    lines = output_tail(str(out))
    assert lines[-1] == "last \\x07 line"
    assert all(len(line) <= LINE_CHARS * 4 + 1 for line in lines)
    assert all("\x1b" not in line for line in lines)


def test_looking_at_a_run_changes_none_of_its_files(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "quick.yaml").write_text(
        "name: quick\ninitial: a\nstates:\n  a:\n    action: echo hi\n    next: done\n"
        "  done:\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "quick").returncode == ExitCode.OK
    before = files_digest(tmp_path)
    view = load_view("quick", tmp_path / ".loops")
    assert view is not None
    assert view.steps[0].startswith("#1 a ")
    assert [line.text for line in view.graph] == ["a → done* (next)", "done"]
    assert files_digest(tmp_path) == before


def test_only_the_end_of_a_long_log_is_read(tmp_path: Path) -> None:
    from little_loops.fsm.runs.state import LoopState
    from little_loops.fsm.runs.store import StatePersistence

    store = StatePersistence("long", tmp_path / ".loops")
    store.initialize()
    state = LoopState(loop_name="long", current_state="a", run_id="abcd")
    store.save_state(state)
    for number in range(TAIL_EVENTS * 2):
        store.append_event({"event": "state_enter", "state": "a", "iteration": number, "ts": "x"})
    store.close()
    view = load_view("long", tmp_path / ".loops")
    assert view is not None
    assert view.steps[-1].startswith(f"#{TAIL_EVENTS} a ")  # numbered within what was read


AGENT = """\
    name: agent
    initial: fix
    states:
      fix:
        action: Fix the tests.
        action_type: prompt
        next: done
      done:
        terminal: true
"""


def test_the_live_step_shows_an_agents_tool_calls_as_they_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    from support.fake_claude import json_line, said, stream_claude

    tool = {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}
    result = {"type": "tool_result", "content": "3 passed\x1b[0m"}
    stream_claude(
        tmp_path,
        monkeypatch,
        said("Running the tests.")
        + json_line({"type": "assistant", "message": {"id": "m2", "content": [tool]}})
        + json_line({"type": "user", "message": {"content": [result]}})
        + f"sleep {marker}\n",
    )
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "agent.yaml").write_text(textwrap.dedent(AGENT))
    started = llproc.console(tmp_path, "run", "agent", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    try:
        llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the agent")
        view = load_view("agent", tmp_path / ".loops")
        assert view is not None
        assert view.live == [
            "fix: Fix the tests.",
            "Running the tests.",
            '→ Bash {"command": "pytest -q"}',
            "← 3 passed\\x1b[0m",
        ]
    finally:
        llproc.console(tmp_path, "stop", "agent")
