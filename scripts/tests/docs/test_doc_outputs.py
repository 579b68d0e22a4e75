"""Doc output samples compared with what ll-loop prints, and blocks with checks of their own."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from support.doc_blocks import Block, all_blocks, kind, normalise
from support.doc_checks import COMPARED, HELLO, TYPO, Run, keyed
from support.paths import DATA, REPO
from support.slowdown import scaled

from little_loops.fsm.definition.writing.writer import dump_fsm_yaml
from little_loops.fsm.evaluators.llm_structured import DEFAULT_LLM_SCHEMA
from little_loops.fsm.paradigms.registry import PARADIGMS, compile_paradigm
from little_loops.fsm.runs.notify import RunSummary

if TYPE_CHECKING:
    from support.fake_anthropic import FakeAnthropic
    from support.project import LoopProject

BLOCKS = all_blocks()
SAMPLES = [b for b in BLOCKS if keyed(b, COMPARED) is not None]
BIN = Path(sys.executable).parent
MYPY = """#!/bin/sh
test -f fixed && echo "Success: no issues found in 1 source file" && exit 0
echo "src/app.py:3: error: Missing return statement"
echo "Found 1 error in 1 file (checked 1 source file)"
exit 1
"""


def block(doc: str, prefix: str) -> Block:
    (found,) = [b for b in BLOCKS if b.starts(doc, prefix)]
    return found


def add_loops(project: LoopProject) -> None:
    """This repository's .loops/ and the doc loops of scripts/tests/data, into *project*."""
    for source in (REPO / ".loops", DATA / "doc_loops"):
        for path in source.glob("*.yaml"):
            shutil.copy(path, project.loops / path.name)


@pytest.fixture
def project(loop_project: LoopProject) -> LoopProject:
    """A project with the loops of add_loops()."""
    add_loops(loop_project)
    return loop_project


def install(project: LoopProject, files: dict[str, str]) -> None:
    for name, text in files.items():
        if text.startswith("@"):
            text = block(*text[1:].split("|", 1)).text
        (project.root / name).parent.mkdir(parents=True, exist_ok=True)
        (project.root / name).write_text(text)


def real_output(project: LoopProject, run: Run, argv: list[str]) -> str:
    if not run.bare:
        add_loops(project)
    install(project, run.files)
    for _ in range(run.times if run.before else 0):
        project.run(*run.before)
    (project.root / run.cwd).mkdir(exist_ok=True)
    os.chdir(project.root / run.cwd)
    result = project.run(*argv)
    assert result.code == run.code, result.err
    text = result.out if run.stream == "out" else result.err
    lines = text.replace(str(project.root), "/home/me/project").splitlines()
    start, end = run.printed or run.lines
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("sample", SAMPLES, ids=[b.where for b in SAMPLES])
def test_the_sample_is_what_ll_loop_prints(sample: Block, loop_project: LoopProject) -> None:
    runs = keyed(sample, COMPARED)
    for run in runs if isinstance(runs, tuple) else (runs,):
        assert isinstance(run, Run)
        shown = sample.text
        argv = list(run.argv)
        if kind(sample) == "session":
            command, _, shown = sample.text.partition("\n")
            argv = shlex.split(command)[2:]
        shown = "\n".join(shown.splitlines()[run.lines[0] : run.lines[1]])
        assert normalise(shown) == normalise(real_output(loop_project, run, argv))


def test_a_changed_sample_fails(loop_project: LoopProject) -> None:
    sample = block("docs/cli.md", "[1/5] check → test -f flag")
    run = keyed(sample, COMPARED)
    assert isinstance(run, Run)
    wrong = sample.text.replace("• exit 0", "• done (exit 0)")
    assert normalise(wrong) != normalise(real_output(loop_project, run, list(run.argv)))


def test_the_default_schema_is_the_real_one() -> None:
    shown = yaml.safe_load(block("docs/evaluators.md", "type: object").text)
    assert shown == DEFAULT_LLM_SCHEMA


def test_the_schema_comment_points_at_the_schema() -> None:
    comments = {line for b in BLOCKS for line in b.text.splitlines() if "$schema=" in line}
    assert comments
    for line in comments:
        target = line.split("$schema=", 1)[1].strip()
        assert (REPO / ".loops" / target).is_file(), line


def paradigm_pairs() -> list[tuple[Block, Block]]:
    """(paradigm example, the `Compiles to:` block after it) in docs/paradigms.md."""
    loops = [b for b in BLOCKS if b.doc == "docs/paradigms.md" and kind(b) == "loop"]
    return [
        (source, compiled)
        for source, compiled in zip(loops, loops[1:], strict=False)
        if source.text.startswith("paradigm:") and "\ninitial:" in compiled.text
    ]


def test_every_paradigm_has_its_compiled_form() -> None:
    assert len(paradigm_pairs()) == len(PARADIGMS) - 1  # every paradigm but `fsm` itself


@pytest.mark.parametrize(("source", "compiled"), paradigm_pairs(), ids=lambda b: b.where)
def test_the_compiled_form_is_what_compile_writes(source: Block, compiled: Block) -> None:
    real = yaml.safe_load(dump_fsm_yaml(compile_paradigm(yaml.safe_load(source.text))))
    assert yaml.safe_load(compiled.text) == real


def bash(project: LoopProject, script: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", *flags, "-c", script],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")
def test_the_ci_simulate_commands_pass(project: LoopProject) -> None:
    script = block("docs/analysis.md", "# in CI:").text
    done = bash(project, script, "-euo", "pipefail")
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")
def test_the_convergence_check_prints_a_number(project: LoopProject) -> None:
    spec = yaml.safe_load(block("docs/paradigms.md", "paradigm: convergence").text)
    (project.root / "src").mkdir()
    (project.root / "src" / "a.py").write_text("import os\nimport sys\n")
    done = bash(project, spec["check"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_the_pre_commit_snippet_runs_the_declared_hook(project: LoopProject) -> None:
    (repo,) = yaml.safe_load(block("docs/guide.md", "repos:").text)["repos"]
    (hook,) = repo["hooks"]
    (declared,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert repo["repo"] == "local"
    for key in ("id", "name", "entry", "files", "exclude"):
        assert hook[key] == declared[key], key
    assert hook["language"] == "system"
    program, *args = shlex.split(hook["entry"])
    assert program == "ll-loop"
    install(project, {".loops/typo.yaml": TYPO, ".loops/hello.yaml": HELLO})
    assert project.run(*args, ".loops/hello.yaml").code == 0
    assert project.run(*args, ".loops/typo.yaml").code == 2


def _shape(value: Any) -> Any:
    """The keys of *value*, nested: what a JSON sample must share with the real document."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list) and value:
        return [_shape(value[0])]
    return None


def test_validate_json_is_the_real_document(project: LoopProject) -> None:
    install(project, {".loops/fix-types.yaml": TYPO})
    real = json.loads(project.run("validate", "--json", "fix-types").out)
    assert json.loads(block("docs/loop-files.md", '{\n  "valid"').text) == real
    assert _shape(json.loads(block("docs/cli.md", '{"valid"').text)) == _shape(real)


def test_run_json_and_the_state_file_have_the_documented_keys(project: LoopProject) -> None:
    from support.doc_checks import HELLO

    install(project, {".loops/hello.yaml": HELLO})
    real = json.loads(project.run("run", "hello", "--json").out)
    shown = json.loads(block("docs/cli.md", '{\n  "final_state"').text)
    assert set(shown) == set(real)
    state = json.loads((project.loops / ".running" / "hello.state.json").read_text())
    shown = json.loads(block("docs/persistence.md", '{\n  "schema_version"').text)
    assert set(shown) == set(state)
    assert set(shown["caps"]) == set(state["caps"])  # the caps' counts too


def test_the_readme_run_is_what_ll_loop_prints(
    loop_project: LoopProject, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.fake_claude import REPORT, install_claude

    install(loop_project, {".loops/fix-types.yaml": block("README.md", "# yaml-language").text})
    report = json.dumps({**REPORT, "total_cost_usd": 0.183})
    install_claude(loop_project.root, monkeypatch, f"#!/bin/sh\ntouch fixed\necho '{report}'\n")
    mypy = loop_project.root / "bin" / "mypy"
    mypy.write_text(MYPY)
    mypy.chmod(0o755)
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 0.92, "reason": "fixed"})
    sample = block("README.md", "$ ll-loop fix-types")
    command, _, shown = sample.text.partition("\n")
    result = loop_project.run(*shlex.split(command)[2:], "--no-color")
    assert result.code == 0, result.err

    def costs(text: str) -> str:
        return normalise(re.sub(r"\$\d+\.\d+", "$<COST>", text))

    assert costs(shown) == costs(result.err)


def test_the_notify_summary_has_the_fields_notifications_send() -> None:
    shown = json.loads(block("docs/notifications.md", '{\n  "run_id"').text)
    assert list(shown) == list(RunSummary.__dataclass_fields__)
    kinds = {"duration_ms": int, "exit_code": int, "passes": int, "cost_usd": float}
    for name, value in shown.items():
        assert isinstance(value, kinds.get(name, str)), name
