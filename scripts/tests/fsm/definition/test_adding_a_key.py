"""A new loop key is one row: the worked example of docs/architecture.md, put into a copy
of the package, is known to validate, --dry-run, the schema, the key docs and migrate, and
a run obeys it; nothing else of the package is edited."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from support.paths import REPO

import little_loops
from little_loops.fsm.definition.checks.key_tables import STATE_KEYS

DOC = REPO / "docs" / "architecture.md"
GUARDS = Path("little_loops") / "fsm" / "definition" / "model" / "guard_keys.py"


def _row() -> str:
    """The doc's row, as written there."""
    found = re.search(r"<!-- loop-key-row -->\n *```python\n(.*?)\n *```", DOC.read_text(), re.S)
    assert found is not None, "docs/architecture.md has no loop-key-row block"
    return textwrap.dedent(found.group(1))


def _with_row(source: str, row: str) -> str:
    """guard_keys.py's *source* with *row* as the last row of its KEYS."""
    head, tail = source.rsplit("\n)\n", 1)
    assert head.rstrip().endswith("),")
    assert not tail.strip()  # KEYS closes the module
    return head + "\n" + textwrap.indent(row, "    ") + "\n)\n"


LOOP = """\
name: {name}
initial: say
states:
  say:
    action: 'echo "word=[$LL_GREETING]" > said.txt'
    {key}: hello
    next: done
  done:
    terminal: true
"""


def test_the_documented_key_is_one_row_that_everything_reads(tmp_path: Path) -> None:
    copy = tmp_path / "package"
    shutil.copytree(
        Path(little_loops.__file__).parent,
        copy / "little_loops",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    guards = copy / GUARDS
    guards.write_text(_with_row(guards.read_text(), _row()))
    project = tmp_path / "project"
    (project / ".loops").mkdir(parents=True)
    for name, key in (("greet", "greeting"), ("typo", "greetng"), ("theirs", "salutation")):
        (project / ".loops" / f"{name}.yaml").write_text(LOOP.format(name=name, key=key))
    env = {**os.environ, "PYTHONPATH": str(copy), "NO_COLOR": "1"}

    def python(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], cwd=project, env=env, capture_output=True, text=True
        )

    def ll_loop(*args: str) -> subprocess.CompletedProcess[str]:
        return python("-m", "little_loops.cli", *args)

    # `scripts/dev schema`, as the walkthrough says after a key changes.
    made = python("-m", "little_loops.fsm.validate.json_schema")
    assert made.returncode == 0, made.stderr
    edited = sorted(
        str(p.relative_to(copy))
        for p in copy.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and before.get(p) != p.read_bytes()
    )
    assert edited == [str(GUARDS), "little_loops/fsm/fsm-loop-schema.json"]

    checked = ll_loop("validate", "greet")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    typo = ll_loop("validate", "typo")
    assert typo.returncode != 0
    assert "greetng: unknown key (did you mean greeting?)" in typo.stdout + typo.stderr

    plan = ll_loop("run", "greet", "--dry-run")
    assert "    greeting: $LL_GREETING is 'hello'" in plan.stdout, plan.stdout + plan.stderr

    shown = ll_loop("schema", "--content")
    schema = json.loads(shown.stdout)
    state = schema["$defs"]["stateConfig"]["properties"]["greeting"]
    assert state["description"] == "A word this state's action gets in $LL_GREETING."
    docs = python(
        "-c", "from little_loops.fsm.validate import key_docs as d; print(d.STATE_KEYS['greeting'])"
    )
    assert docs.stdout.strip() == "A word this state's action gets in $LL_GREETING."

    migrated = ll_loop("migrate", "theirs")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert "salutation -> greeting" in migrated.stdout, migrated.stdout
    assert "    greeting: hello\n" in (project / ".loops" / "theirs.yaml").read_text()

    for name in ("greet", "theirs"):
        (project / "said.txt").unlink(missing_ok=True)
        ran = ll_loop("run", name)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert (project / "said.txt").read_text() == "word=[hello]\n"
    # The copy was the one imported: the installed package has no such key.
    assert "greeting" not in STATE_KEYS
