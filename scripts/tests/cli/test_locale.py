"""Under a C (ASCII) locale with Python's UTF-8 mode off, text outside the locale still runs
and prints: an emoji value reaches the action as UTF-8, messages never crash; a JSON
context file is read as JSON (its `\\ud83d\\ude00` escapes are one character)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

ECHO = """\
name: emo
initial: say
parameters:
  v: {type: string}
states:
  say:
    action: printf '%s' ${context.v} > said.txt
    on_success: done
    on_failure: done
  done:
    terminal: true
"""
VALUE = "caf\u00e9 \U0001f600 \u4e2d"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "emo.yaml").write_text(ECHO)
    return tmp_path


def _ll_loop(project: Path, *args: str, utf8: bool = False) -> subprocess.CompletedProcess[str]:
    """`ll-loop ARGS...` under the C locale, no UTF-8 mode, no locale coercion (ASCII output:
    stricter than Latin-1 or GBK, none of which this machine may have installed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANGUAGE")}
    if not utf8:
        env |= {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    return subprocess.run(
        [str(Path(sys.executable).parent / "ll-loop"), *args],
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=scaled(60),
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
    )


def test_an_emoji_value_runs_under_an_ascii_locale(project: Path) -> None:
    (project / "ctx.yaml").write_text(f'v: "{VALUE}"\n', encoding="utf-8")
    done = _ll_loop(project, "run", "emo", "--context-file", "ctx.yaml")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "NUL byte" not in done.stderr
    assert (project / "said.txt").read_bytes() == VALUE.encode("utf-8")
    # What is shown of it is escaped, not a crash, on stdout and stderr alike.
    report = _ll_loop(project, "report", "emo")
    assert report.returncode == ExitCode.OK, report.stderr
    assert "Traceback" not in report.stderr
    assert "loop emo \\u00b7 run " in report.stdout
    history = _ll_loop(project, "history", "emo")
    assert history.returncode == ExitCode.OK, history.stderr
    assert "\\ud83d\\ude00" in history.stdout
    # Escaped as JSON escapes it: `--json` output is still JSON, with the text itself in it.
    as_json = _ll_loop(project, "history", "emo", "--json")
    assert as_json.returncode == ExitCode.OK, as_json.stderr
    actions = [e["action"] for e in json.loads(as_json.stdout) if e["event"] == "action_start"]
    assert len(actions) == 1
    assert VALUE in actions[0]  # as shown, however the value is handed to bash


def test_bytes_given_on_the_command_line_go_back_as_they_came(project: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "ll-loop"), "run", "emo", "--set", b"v=\xe9\xff"],
        cwd=project,
        capture_output=True,
        timeout=scaled(60),
        env={**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert (project / "said.txt").read_bytes() == b"\xe9\xff"


def test_a_json_context_file_with_surrogate_escapes_is_read_as_json(project: Path) -> None:
    (project / "ctx.json").write_text(json.dumps({"v": VALUE}))
    assert "\\ud83d\\ude00" in (project / "ctx.json").read_text()
    for utf8 in (True, False):
        done = _ll_loop(project, "run", "emo", "--context-file", "ctx.json", utf8=utf8)
        assert done.returncode == ExitCode.OK, done.stderr
        assert (project / "said.txt").read_bytes() == VALUE.encode("utf-8")
    # JSON content in a file of another name is JSON too; YAML's flow style stays YAML.
    (project / "ctx.txt").write_text(json.dumps({"v": "\U0001f600"}))
    assert _ll_loop(project, "run", "emo", "--context-file", "ctx.txt").returncode == ExitCode.OK
    assert (project / "said.txt").read_text(encoding="utf-8") == "\U0001f600"
    (project / "flow.yaml").write_text("{v: plain}\n")
    assert _ll_loop(project, "run", "emo", "--context-file", "flow.yaml").returncode == 0
    assert (project / "said.txt").read_text() == "plain"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"v": "a", "v": "b"}', "not valid JSON: the key 'v' is given twice"),
        ('{"v": NaN}', "not valid JSON: NaN is not a JSON number"),
        ('{"v": ', "not valid JSON: Expecting value: line 1 column 7 (char 6)"),
        ('["v"]', "expected a mapping of KEY: VALUE"),
    ],
)
def test_a_bad_json_context_file_is_one_line(project: Path, text: str, why: str) -> None:
    (project / "bad.json").write_text(text)
    done = _ll_loop(project, "run", "emo", "--context-file", "bad.json")
    assert (done.returncode, done.stderr) == (
        ExitCode.USAGE,
        f"ll-loop: error: context file bad.json: {why}\n",
    )


def test_a_lone_surrogate_is_named_as_such(project: Path) -> None:
    (project / "lone.json").write_text('{"v": "a\\ud83d b"}')
    done = _ll_loop(project, "run", "emo", "--context-file", "lone.json")
    assert "the action contains \\ud83d, a lone surrogate no encoding can carry" in done.stderr
    assert "NUL byte" not in done.stderr
