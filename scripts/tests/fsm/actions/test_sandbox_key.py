"""The `sandbox:` key: its values checked in one line each, read into a Sandbox, chosen."""

from __future__ import annotations

import pytest

from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, Sandbox, chosen, read


@pytest.mark.parametrize(
    "value",
    [
        "bwrap",
        "none",
        True,
        False,
        {},
        {"backend": "bwrap", "network": "off", "allow": ["~/.ssh"]},
        {"network": False, "writable": ["~/cache"], "readable": ["/opt/data"]},
        {"command": ["podman", "run", "--rm", "img"], "network": "on"},
    ],
)
def test_a_sandbox_value_that_is_fine(value: object) -> None:
    assert SANDBOX_CHECK(value) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("bwarp", "expected bwrap, none or a mapping of sandbox settings, got 'bwarp'"),
        (3, "expected bwrap, none or a mapping of sandbox settings, got 3"),
        (["bwrap"], "expected bwrap, none or a mapping of sandbox settings, got a list"),
        ({"network": "maybe"}, "network: expected on or off, got 'maybe'"),
        ({"network": 0}, "network: expected on or off, got 0"),
        ({"writable": "~/x"}, "writable: expected a list of paths, got '~/x'"),
        ({"readable": [""]}, "readable: expected a list of paths, got '' in it"),
        ({"allow": [3]}, "allow: expected a list of paths, got 3 in it"),
        ({"allow": ["~/.ssh\0"]}, "allow: a path cannot hold a NUL byte"),
        (
            {"comand": ["x"]},
            "unknown key 'comand' in sandbox: (keys: backend, command, network, allow, "
            "writable, readable)",
        ),
        ({"backend": "docker"}, "backend: expected bwrap, got 'docker'"),
        ({"command": []}, "command: expected the wrapper's command line, got an empty list"),
        ({"command": "podman run"}, "command: expected a list of words of a command line, got"),
        ({"command": ["podman", 1]}, "command: expected a list of words of a command line, got 1"),
        ({"command": ["podman"], "backend": "bwrap"}, "give either backend: or command:, not both"),
    ],
)
def test_a_wrong_sandbox_value_is_one_line_naming_it(value: object, message: str) -> None:
    problem = SANDBOX_CHECK(value)
    assert problem is not None
    assert problem.startswith(message)
    assert "\n" not in problem


@pytest.mark.parametrize("value", [None, False, "none"])
def test_none_false_and_null_are_no_sandbox(value: object) -> None:
    assert read(value) is None


def test_what_a_sandbox_value_reads_as() -> None:
    assert read("bwrap") == read(True) == read({}) == Sandbox()
    assert Sandbox().network is True
    assert read({"network": "off", "allow": ["~/.ssh"], "writable": ["~/c"]}) == Sandbox(
        network=False, allow=("~/.ssh",), writable=("~/c",)
    )
    assert read({"network": False}) == Sandbox(network=False)
    assert read({"network": "on"}) == Sandbox(network=True)
    wrapped = read({"command": ["/usr/bin/podman", "run", "--rm"], "readable": ["/data"]})
    assert wrapped == Sandbox(command=("/usr/bin/podman", "run", "--rm"), readable=("/data",))


def test_the_first_sandbox_given_applies() -> None:
    assert chosen(None, "none", "bwrap") == "none"  # a state's `none` beats the loop's
    assert chosen(None, None, {"network": "off"}) == {"network": "off"}
    assert chosen(False, "bwrap") is False
    assert chosen(None, None, None) is None
    assert chosen() is None
