"""Every run has a short id: NAME@ID names it; files from before run ids keep working."""

from __future__ import annotations

import json

from support.doc_blocks import all_blocks
from support.project import LoopProject

from little_loops.fsm.facts.layout import RUN_ID_PATTERN, run_files, split_run_key
from little_loops.fsm.facts.outcomes import ExitCode

COUNT = """\
    name: count
    initial: add
    states:
      add:
        action: echo x >> tally.txt
        next: done
      done:
        terminal: true
"""


def _state(project: LoopProject, key: str) -> dict[str, object]:
    data = json.loads(run_files(key, project.loops).state.read_text())
    assert isinstance(data, dict)
    return data


def test_a_run_gets_a_short_id_in_its_state_and_its_first_event(
    loop_project: LoopProject,
) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count").code == ExitCode.OK
    run_id = _state(loop_project, "count")["run_id"]
    assert isinstance(run_id, str)
    assert RUN_ID_PATTERN.fullmatch(run_id)
    first = json.loads(run_files("count", loop_project.loops).events.read_text().splitlines()[0])
    assert first["event"] == "loop_start"
    assert first["run_id"] == run_id
    assert "worktree" not in first  # a run in the main checkout
    assert loop_project.run("run", "count").code == ExitCode.OK
    assert _state(loop_project, "count")["run_id"] != run_id  # each run its own


def test_run_id_gives_the_run_its_id(loop_project: LoopProject) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count", "--run-id", "0042").code == ExitCode.OK
    assert _state(loop_project, "count")["run_id"] == "0042"
    assert loop_project.run("status", "count@0042").code == ExitCode.OK


def test_status_and_history_take_name_at_id(loop_project: LoopProject) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count").code == ExitCode.OK
    run_id = _state(loop_project, "count")["run_id"]
    by_name = loop_project.run("status", "count")
    by_id = loop_project.run("status", f"count@{run_id}")
    assert by_id.code == ExitCode.OK
    assert by_id.out == by_name.out
    history = loop_project.run("history", f"count@{run_id}")
    assert history.code == ExitCode.OK
    assert history.out == loop_project.run("history", "count").out
    assert history.out.splitlines()[0].endswith("loop_start      count at add")


def test_an_unknown_id_is_one_line_naming_the_runs_there_are(loop_project: LoopProject) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count").code == ExitCode.OK
    run_id = _state(loop_project, "count")["run_id"]
    (block,) = [b for b in all_blocks() if b.starts("docs/cli.md", "ll-loop: error: loop 'count'")]
    sample = block.text  # the sample in docs/cli.md
    for command in ("status", "stop", "resume", "history", "logs"):
        result = loop_project.run(command, "count@zz99")
        assert result.code == ExitCode.FAILED, command
        assert result.err == sample.replace("count@k3x9", f"count@{run_id}"), command


def test_a_state_file_from_before_run_ids_keeps_working(loop_project: LoopProject) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count").code == ExitCode.OK
    path = run_files("count", loop_project.loops).state
    data = json.loads(path.read_text())
    del data["run_id"], data["worktree"]
    path.write_text(json.dumps(data))
    status = loop_project.run("status", "count")
    assert status.code == ExitCode.OK
    assert "completed" in status.out
    listed = loop_project.run("list")
    assert listed.code == ExitCode.OK
    assert listed.out.splitlines()[1].split()[:3] == ["count", "fsm", "completed"]
    assert loop_project.run("run", "count").code == ExitCode.OK  # replaced as before


def test_base_without_worktree_and_a_bad_run_id_are_usage_errors(
    loop_project: LoopProject,
) -> None:
    loop_project.write("count", COUNT)
    result = loop_project.run("run", "count", "--base", "main")
    assert result.code == ExitCode.USAGE
    assert result.err == "ll-loop: error: --base REF needs --worktree (or worktree: true)\n"
    bad = loop_project.run("run", "count", "--run-id", "../x")
    assert bad.code == ExitCode.USAGE
    assert "'../x' is not a run id" in bad.err
    assert not (loop_project.root / "tally.txt").exists()  # nothing ran


def test_split_run_key_takes_only_an_id_shaped_tail() -> None:
    assert split_run_key("fix@ab12") == ("fix", "ab12")
    assert split_run_key("fix") == ("fix", None)
    assert split_run_key("fix@AB12") == ("fix@AB12", None)
    assert split_run_key("fix@abc") == ("fix@abc", None)
    assert split_run_key("@ab12") == ("@ab12", None)


def test_the_archive_keeps_the_short_id_and_run_takes_it(loop_project: LoopProject) -> None:
    loop_project.write("count", COUNT)
    assert loop_project.run("run", "count").code == ExitCode.OK
    first = _state(loop_project, "count")["run_id"]
    assert loop_project.run("run", "count").code == ExitCode.OK
    listed = json.loads(loop_project.run("runs", "count", "--json").out)
    assert [run["id"] for run in listed][0] == first
    by_short = loop_project.run("history", "count", "--run", str(first))
    by_long = loop_project.run("history", "count", "--run", listed[0]["run_id"])
    assert by_short.code == ExitCode.OK
    assert by_short.out == by_long.out != loop_project.run("history", "count").out
