"""References in a loop's fields, followed through `${context.X}`, and which are untrusted."""

from __future__ import annotations

from little_loops.fsm.definition.uses import Use, expand, injection_message, untrusted


def test_references_are_followed_through_context() -> None:
    context = {"cmd": "echo ${captured.out.output}", "deep": "${context.cmd}"}
    found = list(expand(("states", "a", "action"), "run ${context.deep}", context))
    assert [(u.text, u.via) for u in found] == [
        ("${context.deep}", None),
        ("${context.cmd}", "${context.deep}"),
        ("${captured.out.output}", "${context.deep}"),
    ]


def test_numbers_and_names_the_loop_chose_are_trusted() -> None:
    path = ("states", "a", "action")
    assert untrusted(Use(path, "captured", "out.output"), False)
    assert not untrusted(Use(path, "captured", "out.exit_code"), False)
    assert not untrusted(Use(path, "prev", "verdict"), False)
    assert untrusted(Use(path, "prev", "verdict"), True)
    assert not untrusted(Use(path, "context", "x"), False)
    assert "tee FILE" in injection_message(Use(path, "captured", "out.output"))
    assert "no safe way" in injection_message(Use(path, "result", "details"))
