"""Progress lines of stall breakers, approval gates and checkpoints (cli/gatelines.py)."""

from __future__ import annotations

from little_loops.cli.gatelines import GateLines


class _Lines(GateLines):
    """GateLines with the display's parts it calls written down."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.loop_name = "demo"
        self._header_printed = True
        self.out: list[str] = []

    def _write(self, text: str) -> None:
        self.out.append(text)

    def _paint(self, text: str, code: str) -> str:
        return text

    def _header(self, what: str) -> None:
        self.out.append(f"[{what}]\n")


def test_a_stall_names_its_breaker_and_where_it_goes() -> None:
    lines = _Lines()
    lines._on_stall({"detector": "max_visits", "to": "done"})
    lines._on_stall({"detector": "same_result"})
    assert lines.out == ["       ⊘ stall: max_visits → done\n", "       ⊘ stall: same_result\n"]
    quiet = _Lines(quiet=True)
    quiet._on_stall({"detector": "max_visits"})
    assert quiet.out == []


def test_an_approval_question_is_shown_even_when_quiet() -> None:
    lines = _Lines(quiet=True)
    lines._on_approval_wait(
        {"question": "Ship?\nReally?", "answer_with": "ll-loop approve demo / ll-loop reject demo"}
    )
    assert lines.out == [
        "       ? awaiting approval\n"
        "         │ Ship?\n"
        "         │ Really?\n"
        "         answer: ll-loop approve demo\n"
        "         or:     ll-loop reject demo\n"
    ]


def test_the_answer_and_a_failed_checkpoint() -> None:
    lines = _Lines()
    lines._on_approval({"verdict": "failure", "note": "not now"})
    lines._on_approval({"verdict": "timeout"})
    assert lines.out == [
        "       • rejected (failure): not now\n",
        "       • no answer in time (timeout)\n",
    ]
    quiet = _Lines(quiet=True)
    quiet._on_checkpoint({"event": "checkpoint", "sha": "abc1234"})
    assert quiet.out == []
    quiet._on_checkpoint({"event": "checkpoint", "error": "nothing to commit"})
    assert len(quiet.out) == 1
    assert quiet.out[0].startswith("       ✗ ")
