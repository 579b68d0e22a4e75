"""Reuse resolved while a loop is read: import:, fragment:/with:, fragments:, from:, flow:.

Each construct is checked through the real `ll-loop` (validate, compile, simulate, run with
real bash) on loops and fragment libraries of our own, written into a scratch project.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.reuse import project_loops_folder, resolve
from little_loops.fsm.facts.errors import LoopFileError

CHECKS_LIB = """\
fragments:
  shell_exit:
    description: a shell command, judged by its exit code
    action_type: shell
    evaluate:
      type: exit_code
  says:
    action_type: shell
    evaluate:
      type: output_contains
      pattern: "OK"
  counter:
    parameters:
      word:
        type: string
        required: true
      limit:
        type: integer
        default: 3
    action_type: shell
    action: "echo ${param.word} > word.txt; echo 2"
    evaluate:
      type: output_numeric
      operator: lt
      target: "${param.limit}"
"""


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    """A scratch project: each FILE (under `.loops/`) with its text."""
    for name, text in files.items():
        path = tmp_path / ".loops" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def ok(root: Path, *args: str) -> str:
    result = ll_loop(root, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def walked(root: Path, name: str, *args: str) -> list[str]:
    """The states `ll-loop simulate NAME ARGS...` goes through."""
    import json

    result = ll_loop(root, "simulate", name, "--json", *args)
    assert result.stdout, result.stderr
    report = json.loads(result.stdout)
    return [step["state"] for step in report["steps"]]


# --- import: and fragment: ---------------------------------------------------------------

USES_LIB = """\
name: uses-lib
import:
  - lib/checks.yaml
initial: make
states:
  make:
    fragment: shell_exit
    action: "echo made > made.txt"
    on_success: done
    on_failure: broken
  done:
    terminal: true
  broken:
    terminal: true
    outcome: failure
"""


def test_a_state_takes_a_fragment_of_an_imported_library_and_runs(tmp_path: Path) -> None:
    root = project(tmp_path, {"lib/checks.yaml": CHECKS_LIB, "uses-lib.yaml": USES_LIB})
    assert ok(root, "validate", "uses-lib") == ".loops/uses-lib.yaml: ok\n"
    ok(root, "run", "uses-lib")
    assert (root / "made.txt").read_text() == "made\n"
    assert "type: exit_code" in ok(root, "compile", "uses-lib")


def test_the_state_s_keys_win_and_evaluate_merges_key_by_key(tmp_path: Path) -> None:
    loop = USES_LIB.replace("fragment: shell_exit", "fragment: says").replace(
        'action: "echo made > made.txt"',
        'action: "echo GO"\n    evaluate:\n      pattern: "GO"',
    )
    root = project(tmp_path, {"lib/checks.yaml": CHECKS_LIB, "uses-lib.yaml": loop})
    compiled = ok(root, "compile", "uses-lib")
    assert "    evaluate:\n      type: output_contains\n      pattern: GO\n" in compiled
    result = ll_loop(root, "run", "uses-lib")
    assert result.returncode == 0, result.stdout + result.stderr  # `GO` found: done


def test_with_binds_the_fragment_s_parameters(tmp_path: Path) -> None:
    loop = USES_LIB.replace(
        'fragment: shell_exit\n    action: "echo made > made.txt"',
        "fragment: counter\n    with:\n      word: hello",
    )
    root = project(tmp_path, {"lib/checks.yaml": CHECKS_LIB, "uses-lib.yaml": loop})
    compiled = ok(root, "compile", "uses-lib")
    assert "action: echo hello > word.txt; echo 2\n" in compiled
    assert "target: 3\n" in compiled  # the default, as a number: the whole text was the reference
    ok(root, "run", "uses-lib")  # 2 < 3: success
    assert (root / "word.txt").read_text() == "hello\n"
    bound = loop.replace("word: hello", "word: hi\n      limit: 1")
    root = project(tmp_path, {"uses-lib.yaml": bound})
    failed = ll_loop(root, "run", "uses-lib")  # 2 < 1 is false: to `broken`
    assert failed.returncode != 0
    assert "Loop ended in broken" in failed.stdout + failed.stderr


def test_local_fragments_replace_imported_ones_of_the_same_name(tmp_path: Path) -> None:
    loop = USES_LIB.replace(
        "initial: make",
        "fragments:\n  shell_exit:\n    action_type: shell\n"
        "    evaluate:\n      type: output_contains\n      pattern: made\n"
        "initial: make",
    ).replace('"echo made > made.txt"', '"echo made"')
    root = project(tmp_path, {"lib/checks.yaml": CHECKS_LIB, "uses-lib.yaml": loop})
    compiled = ok(root, "compile", "uses-lib")
    assert "type: output_contains" in compiled
    assert "import" not in compiled
    assert "fragments" not in compiled


def test_a_library_imports_another_from_its_own_folder(tmp_path: Path) -> None:
    outer = "import:\n  - more/inner.yaml\nfragments: {}\n"
    inner = (
        "fragments:\n  shell_exit:\n    action_type: shell\n    evaluate:\n      type: exit_code\n"
    )
    loop = USES_LIB.replace("lib/checks.yaml", "lib/outer.yaml")
    files = {"lib/outer.yaml": outer, "lib/more/inner.yaml": inner, "uses-lib.yaml": loop}
    root = project(tmp_path, files)
    ok(root, "run", "uses-lib")
    assert (root / "made.txt").is_file()


def test_an_import_is_found_in_the_project_s_loops_folder_too(tmp_path: Path) -> None:
    root = project(tmp_path, {"lib/checks.yaml": CHECKS_LIB, "oracles/uses-lib.yaml": USES_LIB})
    assert walked(root, ".loops/oracles/uses-lib.yaml", "--default", "failure") == [
        "make",
        "broken",
    ]


# --- from: -------------------------------------------------------------------------------

BASE = """\
name: base
max_iterations: 7
context:
  greeting: hello
  target: world
initial: greet
states:
  greet:
    action: "echo ${context.greeting} ${context.target}"
    action_type: shell
    on_success: done
    on_failure: done
  done:
    terminal: true
"""
CHILD = """\
name: child
from: base
context:
  target: moon
states:
  greet:
    on_failure: sad
  sad:
    terminal: true
    outcome: failure
"""


def test_from_lays_the_child_over_its_base_loop(tmp_path: Path) -> None:
    root = project(tmp_path, {"base.yaml": BASE, "child.yaml": CHILD})
    compiled = ok(root, "compile", "child")
    assert "name: child\n" in compiled
    assert "max_iterations: 7\n" in compiled
    assert "  greeting: hello\n  target: moon\n" in compiled
    assert walked(root, "child", "--default", "failure") == ["greet", "sad"]
    result = ll_loop(root, "run", "child")
    assert result.returncode == 0, result.stderr
    assert "echo hello moon" in result.stdout + result.stderr


# --- flow: and state_defs: ---------------------------------------------------------------

FLOW = """\
name: chain
initial: build
flow:
  - build
  - "check?ship:fix"
  - fix
  - ship
state_defs:
  build:
    action: "echo built"
    action_type: shell
  check:
    action: "true"
    action_type: shell
  fix:
    action: "echo fixing"
    action_type: shell
"""


def test_flow_makes_a_chain_of_states(tmp_path: Path) -> None:
    root = project(tmp_path, {"chain.yaml": FLOW})
    assert ok(root, "validate", "chain") == ".loops/chain.yaml: ok\n"
    assert walked(root, "chain", "--default", "success") == ["build", "check", "ship"]
    failing = walked(root, "chain", "--verdicts", "check=failure", "--default", "success")
    assert failing == ["build", "check", "fix", "ship"]
    compiled = ok(root, "compile", "chain")
    assert "  check:\n    action: 'true'\n    action_type: shell\n" in compiled
    assert "  ship:\n    terminal: true\n" in compiled


# --- messages: the file and line a value came from ----------------------------------------


def test_a_problem_in_a_fragment_names_the_library_s_file_and_line(tmp_path: Path) -> None:
    broken = CHECKS_LIB.replace("type: exit_code", "type: exit_cod")
    root = project(tmp_path, {"lib/checks.yaml": broken, "uses-lib.yaml": USES_LIB})
    result = ll_loop(root, "validate", "-q", "uses-lib")
    assert result.returncode == 2
    assert result.stdout.startswith(
        ".loops/lib/checks.yaml:6: error: loop 'uses-lib' > states > make > evaluate > type: "
    )


def test_compile_and_run_name_the_library_s_file_and_line_too(tmp_path: Path) -> None:
    broken = CHECKS_LIB.replace("type: exit_code", "type: exit_cod")
    root = project(tmp_path, {"lib/checks.yaml": broken, "uses-lib.yaml": USES_LIB})
    for command in ("compile", "run"):
        result = ll_loop(root, command, "uses-lib")
        assert result.returncode == 2
        assert result.stderr.startswith(
            "ll-loop: error: .loops/lib/checks.yaml:6: loop 'uses-lib' > states > make >"
            " evaluate > type: "
        ), result.stderr


def test_a_problem_from_a_base_loop_names_the_base_s_file(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {"base.yaml": BASE.replace("max_iterations: 7", "max_iterations: -1"), "child.yaml": CHILD},
    )
    result = ll_loop(root, "validate", "-q", "child")
    assert result.returncode == 2
    assert result.stdout.startswith(".loops/base.yaml:2: error: loop 'child' > max_iterations: ")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"uses-lib.yaml": USES_LIB},
            ".loops/uses-lib.yaml:3: error: import: no file 'lib/checks.yaml'"
            " (looked for .loops/lib/checks.yaml)",
        ),
        (
            {
                "lib/a.yaml": "import: [b.yaml]\nfragments: {}\n",
                "lib/b.yaml": "import: [a.yaml]\nfragments: {}\n",
                "uses-lib.yaml": USES_LIB.replace("checks.yaml", "a.yaml"),
            },
            ".loops/lib/b.yaml:1: error: import: 'a.yaml' imports itself"
            " (uses-lib.yaml -> a.yaml -> b.yaml -> a.yaml)",
        ),
        (
            {
                "lib/checks.yaml": CHECKS_LIB,
                "uses-lib.yaml": USES_LIB.replace("shell_exit", "shel_exit"),
            },
            ".loops/uses-lib.yaml:7: error: states > make > fragment: no fragment named"
            " 'shel_exit' (did you mean shell_exit?) (fragments: counter, says, shell_exit)",
        ),
        (
            {
                "lib/checks.yaml": CHECKS_LIB,
                "uses-lib.yaml": USES_LIB.replace("fragment: shell_exit", "fragment: counter"),
            },
            ".loops/uses-lib.yaml:7: error: states > make > with: fragment 'counter' needs"
            " parameter 'word' (bind it in with:)",
        ),
        (
            {
                "lib/checks.yaml": CHECKS_LIB,
                "uses-lib.yaml": USES_LIB.replace(
                    "fragment: shell_exit", "fragment: counter\n    with:\n      wrd: x"
                ),
            },
            ".loops/uses-lib.yaml:9: error: states > make > with > wrd: fragment 'counter' has"
            " no parameter 'wrd' (did you mean word?) (parameters: limit, word)",
        ),
        (
            {
                "lib/checks.yaml": CHECKS_LIB,
                "uses-lib.yaml": USES_LIB.replace(
                    "fragment: shell_exit",
                    "fragment: counter\n    with:\n      word: x\n      limit: many",
                ),
            },
            ".loops/uses-lib.yaml:10: error: states > make > with > limit: expected integer,"
            " got 'many'",
        ),
        (
            {"base.yaml": "name: base\nfrom: child\n", "child.yaml": CHILD},
            ".loops/base.yaml:2: error: from: 'child' inherits from itself"
            " (child.yaml -> base.yaml -> child.yaml)",
        ),
        (
            {"child.yaml": CHILD},
            ".loops/child.yaml:2: error: from: no file 'base' (looked for .loops/base.yaml)",
        ),
        (
            {"chain.yaml": FLOW.replace('"check?ship:fix"', '"check?ship"')},
            ".loops/chain.yaml:5: error: flow: entry 'check?ship' must be NAME?YES:NO,"
            " each part non-empty",
        ),
    ],
    ids=[
        "missing-import",
        "import-cycle",
        "unknown-fragment",
        "unbound-parameter",
        "unknown-with-key",
        "with-value-of-wrong-type",
        "from-cycle",
        "missing-base",
        "bad-flow-entry",
    ],
)
def test_a_reuse_that_cannot_be_resolved_is_one_line_naming_file_and_line(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    root = project(tmp_path, files)
    name = next(n for n in ("child.yaml", "chain.yaml", "uses-lib.yaml") if n in files)
    result = ll_loop(root, "validate", "-q", f".loops/{name}")
    assert result.returncode == 2
    assert result.stdout == message + "\n"
    run = ll_loop(root, "run", f".loops/{name}")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].startswith("ll-loop: error: ")
    assert "Traceback" not in run.stderr


# --- the resolver itself -----------------------------------------------------------------


def test_a_loop_without_reuse_keys_is_read_as_it_is(tmp_path: Path) -> None:
    doc = load_text("name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n", "x.yaml")
    assert resolve(doc).data == doc.data


def test_a_flow_and_states_in_one_file_are_an_error(tmp_path: Path) -> None:
    doc = load_text(FLOW + "states: {}\n", str(tmp_path / "chain.yaml"))
    with pytest.raises(LoopFileError, match=r"chain.yaml:3: a loop has either flow: or states:"):
        resolve(doc)


def test_the_project_s_loops_folder_is_the_nearest_one_the_file_is_in(tmp_path: Path) -> None:
    assert project_loops_folder(Path(".loops/oracles/x.yaml")) == Path(".loops")
    assert project_loops_folder(tmp_path / ".loops" / "x.yaml") == tmp_path / ".loops"


def _chain(tmp_path: Path, key: str, depth: int) -> Path:
    """A project whose loop starts a chain of DEPTH files, each naming the next by KEY."""
    files: dict[str, str] = {}
    for i in range(depth):
        last = i == depth - 1
        if key == "from":
            head = f"name: c{i}\n" + ("" if last else f"from: c{i + 1}\n")
            body = "initial: a\nstates:\n  a:\n    terminal: true\n"
            files[f"c{i}.yaml"] = head + (body if last else f"context:\n  k{i}: 1\n")
        else:
            head = "" if last else f"import: [c{i + 1}.yaml]\n"
            files[f"lib/c{i}.yaml"] = head + "fragments:\n  shell_exit:\n    action_type: shell\n"
    if key == "import":
        files["uses-lib.yaml"] = USES_LIB.replace("lib/checks.yaml", "lib/c0.yaml")
    return project(tmp_path, files)


@pytest.mark.parametrize("key", ["from", "import"])
def test_a_chain_too_deep_is_one_line_not_a_traceback(tmp_path: Path, key: str) -> None:
    root = _chain(tmp_path, key, 1500)
    name = ".loops/c0.yaml" if key == "from" else ".loops/uses-lib.yaml"
    result = ll_loop(root, "validate", "-q", name, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{key}: chain of " in result.stdout
    assert result.stdout.count("\n") == 1


@pytest.mark.parametrize("key", ["from", "import"])
def test_a_chain_of_a_few_dozen_files_is_fine(tmp_path: Path, key: str) -> None:
    root = _chain(tmp_path, key, 40)
    name = ".loops/c0.yaml" if key == "from" else ".loops/uses-lib.yaml"
    assert ok(root, "validate", "-q", name) == ""
