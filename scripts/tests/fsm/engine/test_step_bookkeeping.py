"""A plain shell step pays only for what it uses (issue 42, a lean step): the judge's
settings are made once per agent, not at every step, and the `--compat` hold of an
unrouted verdict makes no interpolation context when nothing is held. Counted over real
runs of bash: 10 more steps add no settings and exactly the contexts the step reads."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from support.loops import run_loop

from little_loops.fsm.definition.model.typed import FSMLoop, RouteConfig, StateConfig
from little_loops.fsm.engine.run import Run
from little_loops.fsm.evaluators.config import LLMConfig


def spin(steps: int) -> FSMLoop:
    return FSMLoop(
        name="spin",
        initial="work",
        states={
            "work": StateConfig(
                action="true", route=RouteConfig.from_dict({"success": "$current"})
            ),
            "done": StateConfig(terminal=True),
        },
        max_iterations=steps,
    )


def counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, steps: int) -> Counter[str]:
    calls: Counter[str] = Counter()
    context, for_agent = Run.context, LLMConfig.for_agent

    def counted_context(self: Run) -> object:
        calls["context"] += 1
        return context(self)

    def counted_for_agent(self: LLMConfig, agent: str | None) -> LLMConfig:
        calls["for_agent"] += 1
        return for_agent(self, agent)

    with monkeypatch.context() as patch:
        patch.setattr(Run, "context", counted_context)
        patch.setattr(LLMConfig, "for_agent", counted_for_agent)
        result, _ = run_loop(spin(steps), tmp_path)
    assert result.terminated_by == "max_iterations"
    assert result.iterations == steps
    return calls


def test_a_shell_step_makes_the_judges_settings_and_contexts_only_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    few = counted(monkeypatch, tmp_path, 3)
    many = counted(monkeypatch, tmp_path, 13)
    assert few["for_agent"] >= 1  # the counters see the calls
    assert many["for_agent"] == few["for_agent"]
    # Per step: the action's text and the route read the context; nothing else makes one.
    assert (many["context"] - few["context"]) / 10 == 2


def test_the_judges_settings_follow_the_loops_changed_in_place(tmp_path: Path) -> None:
    """A library caller that changes the loop's `llm:` settings in place between steps has
    the judge use the new ones (the settings made once per agent are made again)."""
    from little_loops.fsm.engine.step import StateWork

    fsm = spin(1)
    work = StateWork(fsm, runner=None, emit=lambda *a: None)  # type: ignore[arg-type]
    assert work._judge_settings("codex").model == fsm.llm.model
    fsm.llm.model = "another-model"
    fsm.llm.max_tokens = 7
    again = work._judge_settings("codex")
    assert (again.model, again.max_tokens, again.agent) == ("another-model", 7, "codex")
    fsm.llm = LLMConfig(model="third")
    assert work._judge_settings("codex").model == "third"
