"""Graph checks at size: same findings as a brute-force reading on small graphs; big ones run."""

from __future__ import annotations

import gc
from collections import deque
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.bench_loops import bench_module
from support.project import LoopProject

from little_loops.fsm.definition.checks.analysis import _Analyzer, analyze
from little_loops.fsm.definition.checks.graph_checks import check_graph
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.validate.loopfile import check_file
from little_loops.fsm.values.interpolation import MAX_CONTEXT_DEPTH, MAX_CONTEXT_SIZE

SMALL = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
NAMES = ["x", "y"]


@st.composite
def machines(draw: st.DrawFn) -> dict[str, object]:
    """A small loop: random shorthand routes, captures, reads of captures, restarts."""
    n = draw(st.integers(min_value=2, max_value=7))
    names = [f"s{i}" for i in range(n)]
    target = st.sampled_from(names)
    states: dict[str, object] = {}
    for name in names:
        if draw(st.integers(0, 3)) == 0:
            state: dict[str, object] = {"terminal": True}
            if draw(st.booleans()):
                state["on_maintain"] = draw(target)
        else:
            state = {"action": "echo", "on_success": draw(target), "on_failure": draw(target)}
            if draw(st.booleans()):
                state["capture"] = draw(st.sampled_from(NAMES))
        states[name] = state
    # Reads only of names some state captures: reading one no state captures is an error.
    shells = [s for s in states.values() if isinstance(s, dict) and "action" in s]
    captured = sorted({str(s["capture"]) for s in shells if "capture" in s})
    for state in shells if captured else []:
        reads = draw(st.lists(st.sampled_from(captured), max_size=2, unique=True))
        state["action"] = "echo " + " ".join(f"${{captured.{r}.exit_code}}" for r in reads)
    if not any(s.get("terminal") for s in states.values()):  # type: ignore[attr-defined]
        states["done"] = {"terminal": True}
    return {
        "name": "small",
        "initial": "s0",
        "maintain": draw(st.booleans()),
        "states": states,
    }


def _edges(fsm: FSMLoop, written: bool = False) -> dict[str, list[str]]:
    """Where each state goes on; with *written*, also `on_maintain:` where maintain is off
    (reachability counts every written target; the dataflow only the ones taken)."""
    graph: dict[str, list[str]] = {}
    for name, state in fsm.states.items():
        if state.terminal:
            back = state.on_maintain or fsm.initial
            graph[name] = [back] if fsm.maintain else []
            if written and state.on_maintain is not None:
                graph[name].append(state.on_maintain)
        else:
            graph[name] = [t for t in (state.on_success, state.on_failure) if t is not None]
    return graph


def _reach(graph: dict[str, list[str]], start: str, through: set[str] | None = None) -> set[str]:
    """States reachable from *start*, not going on from the states in *through*."""
    seen, todo = {start}, deque([start])
    while todo:
        here = todo.popleft()
        if through is not None and here in through:
            continue
        for succ in graph[here]:
            if succ not in seen:
                seen.add(succ)
                todo.append(succ)
    return seen


def _expected_reachability(fsm: FSMLoop) -> set[tuple[str, str]]:
    graph = _edges(fsm, written=True)
    reached = _reach(graph, fsm.initial)
    terminals = set(fsm.terminal_states())
    out = {(name, "unreachable") for name in fsm.states if name not in reached}
    for name in reached:
        if not _reach(graph, name) & terminals:
            out.add((name, "no path"))
    return out


def _expected_unset(fsm: FSMLoop) -> set[tuple[str, str]]:
    """(state, name) for each read of a capture on some path where nothing captured it."""
    graph = _edges(fsm)
    captured = {s.capture for s in fsm.states.values() if s.capture and s.action}
    out = set()
    for name in captured:
        makers = {n for n, s in fsm.states.items() if s.capture == name and s.action}
        open_paths = _reach(graph, fsm.initial, makers)
        for state_name, state in fsm.states.items():
            reads = f"${{captured.{name}.exit_code}}" in (state.action or "")
            if reads and state_name in open_paths:
                out.add((state_name, name))
    return out


def _expected_restart_cycles(fsm: FSMLoop) -> list[str]:
    """The terminal states whose restarts come back to them through terminal states only,
    each cycle once, at its first state in file order (the rule as first written)."""
    if not fsm.maintain:
        return []
    found: list[str] = []
    reported: set[str] = set()
    for name in fsm.terminal_states():
        chain = [name]
        while True:
            state = fsm.states[chain[-1]]
            again = state.on_maintain or fsm.initial
            if again not in fsm.states or not fsm.states[again].terminal:
                break
            if again in chain:
                cycle = chain[chain.index(again) :]
                if again == name and not reported & set(cycle):
                    reported.update(cycle)
                    found.append(name)
                break
            chain.append(again)
    return found


@SMALL
@given(machines())
def test_reachability_unset_captures_and_restart_cycles_match_a_brute_force_reading(
    data: dict[str, object],
) -> None:
    fsm = FSMLoop.from_dict(data)
    graph = check_graph(fsm)
    assert not [p for p in graph if p.severity == "error"], [str(p) for p in graph]
    found = set()
    for p in graph:
        if "unreachable from the initial state" in p.message:
            found.add((str(p.path[1]), "unreachable"))
        elif "no path from here to a terminal state" in p.message:
            found.add((str(p.path[1]), "no path"))
    assert found == _expected_reachability(fsm)
    warnings = analyze(fsm)
    unset = {
        (str(p.path[1]), p.message.split("'")[1])
        for p in warnings
        if "before any state captures" in p.message
    }
    assert unset == _expected_unset(fsm)
    cycles = [str(p.path[1]) for p in warnings if "which is terminal" in p.message]
    assert cycles == _expected_restart_cycles(fsm)


def _ring(n: int, way_out: bool) -> str:
    """s0 -> ... -> s{n-1} -> s0 with `next:`; the last state may leave for `done`."""
    states = [f"  s{i}:\n    action: echo {i}\n    next: s{i + 1}\n" for i in range(n - 1)]
    if way_out:
        last = "    action: test -f stop\n    on_success: done\n    on_failure: s0\n"
    else:
        last = "    action: echo last\n    next: s0\n"
    states.append(f"  s{n - 1}:\n{last}")
    return "name: ring\ninitial: s0\nstates:\n" + "".join(states) + "  done:\n    terminal: true\n"


def test_a_20000_state_ring_validates_without_recursion(tmp_path: Path) -> None:
    path = tmp_path / "ring.yaml"
    path.write_text(_ring(20_000, way_out=True))
    report = check_file(path)
    assert (report.errors, report.warnings) == ([], [])
    assert report.fsm is not None
    assert len(report.fsm.states) == 20_001


def test_a_20000_state_ring_with_no_way_out_is_reported_state_by_state(tmp_path: Path) -> None:
    path = tmp_path / "ring.yaml"
    path.write_text(_ring(20_000, way_out=False))
    report = check_file(path)
    assert report.errors == []
    by_kind: dict[str, set[str]] = {}
    for warning in report.warnings:
        kind = "unreachable" if "unreachable" in warning.message else warning.message
        by_kind.setdefault(kind, set()).add(str(warning.path[1]))
    assert by_kind.pop("unreachable") == {"done"}
    assert [len(states) for states in by_kind.values()] == [20_000]
    assert "no path from here to a terminal state" in next(iter(by_kind))


def _nested(levels: int) -> str:
    """`a1: x`, each `aN` the one before four times, and a state that uses the last."""
    values = "".join(f'  a{k}: "{f"${{context.a{k - 1}}}" * 4}"\n' for k in range(2, levels + 1))
    return (
        f"name: nested\ninitial: s0\ncontext:\n  a1: x\n{values}states:\n"
        f"  s0:\n    action: echo ${{context.a{levels}}}\n    next: done\n"
        "  done:\n    terminal: true\n"
    )


def test_nested_context_within_the_limit_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "nested.yaml"
    path.write_text(_nested(11))  # the last value is 4**10 characters: exactly the limit
    assert MAX_CONTEXT_SIZE == 4**10
    assert check_file(path).errors == []


def test_nested_context_past_the_limit_is_one_line(loop_project: LoopProject) -> None:
    path = loop_project.write("nested", _nested(30))
    result = loop_project.run("validate", str(path))
    assert result.code == 2
    assert "Traceback" not in result.out + result.err
    assert result.out.splitlines() == [
        f"{path}:15: error: loop 'nested' > context > a12: ${{context.a12}}: filled in, "
        f"this context value is longer than {MAX_CONTEXT_SIZE:,} characters (the limit)"
    ]


def test_context_nested_too_deep_or_in_a_cycle_is_one_line_each(tmp_path: Path) -> None:
    # k0 -> k1 -> ... -> k37 (plain text): k4 is the first whose chain is too deep.
    deep = {f"k{i}": f"<${{context.k{i + 1}}}>" for i in range(MAX_CONTEXT_DEPTH + 5)}
    deep[f"k{MAX_CONTEXT_DEPTH + 5}"] = "end"
    deep["k0"] = "${context.k1} ${context.b}"
    data = {
        "name": "ctx",
        "initial": "s0",
        "context": {**deep, "a": "x ${context.b}", "b": "y ${context.a}"},
        "states": {
            "s0": {"action": "echo ${context.k0}", "next": "done"},
            "done": {"terminal": True},
        },
    }
    messages = [str(p) for p in check_graph(FSMLoop.from_dict(data)) if p.severity == "error"]
    assert messages == [
        f"loop 'ctx' > context > k4: ${{context.k4}}: context values refer to context values "
        f"more than {MAX_CONTEXT_DEPTH} deep (the limit)",
        # found from k0, which refers to b
        "loop 'ctx' > context > b: ${context.b}: context values refer to each other in a cycle "
        "(b → a → b)",
    ]


def test_many_unknown_targets_in_a_big_loop_get_few_suggestions() -> None:
    # each state's next is a typo of the next state: did-you-mean for the first 20 names
    # only (each compares with every state), and 2,000 states are not listed in a message
    states: dict[str, object] = {
        f"s{i}": {"action": "true", "next": f"s{i + 1}x"} for i in range(2_000)
    }
    states["done"] = {"terminal": True}
    fsm = FSMLoop.from_dict({"name": "typos", "initial": "s0", "states": states})
    errors = [p.message for p in check_graph(fsm) if p.severity == "error"]
    assert len(errors) == 2_000
    assert errors[0] == "'s1x' is not a state (did you mean s1?)"
    assert sum("did you mean" in m for m in errors) == 20
    assert errors[-1] == "'s2000x' is not a state"


class _Counting(dict[str, list[str]]):
    """A successor map that counts how often a state's successors are read."""

    reads = 0

    def __getitem__(self, key: str) -> list[str]:
        type(self).reads += 1
        return super().__getitem__(key)


@pytest.mark.parametrize("n", [2_000, 20_000])
def test_used_before_set_reads_each_state_a_few_times_not_once_per_pass(n: int) -> None:
    # A ring whose last state captures x, read by the one before it: that x is not set
    # there has to go all the way round from s0, which took up to n passes over n states.
    states: dict[str, object] = {f"s{i}": {"action": "true", "next": f"s{i + 1}"} for i in range(n)}
    states["s0"] = {"action": "true", "on_success": "s1", "on_failure": "done"}
    states[f"s{n - 2}"] = {"action": "echo ${captured.x.exit_code}", "next": f"s{n - 1}"}
    states[f"s{n - 1}"] = {"action": "true", "capture": "x", "next": "s0"}
    states["done"] = {"terminal": True}
    fsm = FSMLoop.from_dict({"name": "ring", "initial": "s0", "states": states})
    analyzer = _Analyzer(fsm)
    analyzer.graph = _Counting(analyzer.graph)
    _Counting.reads = 0
    warnings = [p.message for p in analyzer.run()]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "${captured.x.exit_code}: the loop can reach here (s0 → s1 → s2 → s3 → "
    )
    assert _Counting.reads <= 6 * (n + 1)


def test_validating_a_big_file_runs_no_cyclic_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading and checking a file makes objects that all live to the end and hold no
    # cycles; the collector walking them again and again as they grew was half the time of
    # a 20,000-state file. Counted through gc.callbacks (not timed).
    from little_loops.fsm.definition.reading.loop_files import FolderNames
    from little_loops.fsm.validate.project_files import check_project_file

    path = tmp_path / "captures.yaml"  # the file of the 2,000-captures bench
    graphs = bench_module(monkeypatch, "graphs")
    path.write_text(graphs.captures_loop(graphs.CAPTURES))
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    assert gc.isenabled()
    gc.callbacks.append(count)
    try:
        report = check_project_file(path, FolderNames())
    finally:
        gc.callbacks.remove(count)
    assert report.valid, report.problems()
    assert not report.warnings, report.problems()
    # The one collection allowed: once it is on again, at the first allocation after.
    assert len(started) <= 1, started
    assert gc.isenabled()  # and it is on again after


@pytest.mark.parametrize("where", ["loader", "loopfile"])
def test_an_interrupt_as_the_collector_is_turned_off_leaves_it_on(
    where: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A Ctrl-C delivered as gc.disable() returns (signals are handled between bytecodes)
    # came before the `try` and left the collector off for good in a library caller that
    # goes on after a KeyboardInterrupt.
    from little_loops.fsm.definition.reading import loader
    from little_loops.fsm.validate import loopfile

    disable = gc.disable

    def disable_then_interrupt() -> None:
        disable()
        raise KeyboardInterrupt

    path = tmp_path / "x.yaml"
    path.write_text("name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n")
    read = (lambda: loader.load_text(path.read_text())) if where == "loader" else None
    assert gc.isenabled()
    monkeypatch.setattr(gc, "disable", disable_then_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            read() if read is not None else loopfile.check_file(path)
        assert gc.isenabled()
    finally:
        gc.enable()
