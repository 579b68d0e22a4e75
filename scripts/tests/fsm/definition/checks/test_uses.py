"""References in a loop's fields, followed through `${context.X}`, and which are untrusted."""

from __future__ import annotations

from little_loops.fsm.definition.checks.uses import Use, expand, injection_message, untrusted


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
    assert untrusted(Use(path, "env", "HOME"), False)  # the environment is not the loop's
    raw = Use(path, "captured", "out.output", raw=True)
    assert raw.written == "${raw:captured.out.output}"
    assert injection_message(raw).endswith("write ${captured.out.output} to have it quoted")


def test_raw_is_inherited_through_a_raw_context_reference() -> None:
    context = {"msg": "got ${captured.out}"}
    found = list(expand(("states", "a", "action"), "${raw:context.msg} ${context.msg}", context))
    assert [(u.text, u.via, u.raw) for u in found] == [
        ("${context.msg}", None, True),
        ("${context.msg}", None, False),
        ("${captured.out}", "${raw:context.msg}", True),
        ("${captured.out}", "${context.msg}", False),
    ]


def test_each_context_value_is_read_once_however_often_it_is_repeated() -> None:
    # a1 .. a30, each the one before four times: filled in, 4**29 copies of `${captured.x}`
    context = {"a1": "${captured.x}"}
    for k in range(2, 31):
        context[f"a{k}"] = f"${{context.a{k - 1}}}" * 4
    reached: dict[str, list[tuple[str, str]]] = {}
    found = list(expand(("states", "a", "action"), "echo ${context.a30}", context, reached))
    # the one written, then the four references in each of a30 .. a2, then a1's
    assert len(found) == 1 + 4 * 29 + 1
    assert found[-1] == Use(("states", "a", "action"), "captured", "x", "${context.a30}")
    assert list(reached) == ["${context.a30}"]  # kept for the next field


def test_a_context_cycle_ends() -> None:
    context = {"a": "${context.b} ${captured.x}", "b": "${context.a}"}
    found = list(expand(("states", "s", "action"), "${context.a}", context))
    assert [u.text for u in found] == [
        "${context.a}",
        "${context.b}",
        "${captured.x}",
        "${context.a}",
    ]
