from __future__ import annotations

import os
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.definition.reading import loader
from little_loops.fsm.definition.reading.loader import load_file, load_text, read_file
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError


def load(text: str) -> object:
    return load_text(textwrap.dedent(text), "f.yaml").data


def test_data_and_lines() -> None:
    doc = load_text(
        textwrap.dedent(
            """\
            name: demo
            states:
              check:
                action: pytest
                route:
                  success: done
              done:
                terminal: true
            scope:
              - src/
            """
        ),
        "f.yaml",
    )
    assert doc.data["states"]["check"]["route"] == {"success": "done"}
    assert doc.line_of(("name",)) == 1
    assert doc.line_of(("states", "check", "route", "success")) == 6
    assert doc.line_of(("states", "done", "terminal")) == 8
    assert doc.line_of(("scope", 0)) == 10
    # A key that is not in the file: the line of its nearest ancestor that is.
    assert doc.line_of(("states", "check", "evaluate", "type")) == 3
    assert doc.line_of(("nowhere",)) is None
    assert doc.line_of(()) is None


def test_only_true_and_false_are_booleans() -> None:
    data = load(
        """\
        on: yes
        off: no
        y: n
        states:
          yes: {terminal: true}
          no: {terminal: True}
        flags: [true, false, TRUE, False, On, Off]
        """
    )
    assert data == {
        "on": "yes",
        "off": "no",
        "y": "n",
        "states": {"yes": {"terminal": True}, "no": {"terminal": True}},
        "flags": [True, False, True, False, "On", "Off"],
    }


def test_numbers_are_read_as_yaml_1_2_writes_them() -> None:
    data = load(
        """\
        timeout: 1e3
        small: 1.5e-3
        half: .5
        ten: 010
        octal: 0o17
        hex: 0x1F
        plus: +7
        minus: -3.5
        clock: 1:30
        time: 12:30:00
        grouped: 1_000
        binary: 0b11
        quoted: "1e3"
        tagged: !!int "42"
        far: -.inf
        12: twelve
        """
    )
    assert data == {
        "timeout": 1000.0,
        "small": 0.0015,
        "half": 0.5,
        "ten": 10,  # YAML 1.1 would say 8
        "octal": 15,
        "hex": 31,
        "plus": 7,
        "minus": -3.5,
        "clock": "1:30",  # YAML 1.1 would say 90
        "time": "12:30:00",
        "grouped": "1_000",
        "binary": "0b11",
        "quoted": "1e3",
        "tagged": 42,
        "far": float("-inf"),
        "12": "twelve",  # a key is its text
    }
    assert [type(data[k]) for k in ("timeout", "ten", "plus")] == [float, int, int]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!int abc\n", "f.yaml:1:4: 'abc' is not an integer"),
        ("a: !!float 1.2.3\n", "f.yaml:1:4: '1.2.3' is not a number"),
        ("a: !!int 1_000\n", "f.yaml:1:4: '1_000' is not an integer"),
        ("a: " + "9" * 5000 + "\n", "f.yaml:1:4: '" + "9" * 40 + "…' has too many digits"),
        ("a: 0x" + "f" * 4000 + "\n", "f.yaml:1:4: '0x" + "f" * 38 + "…' has too many digits"),
        ("", "f.yaml: the file is empty; a loop needs at least 'name', 'initial' and 'states'"),
        (
            "# only a comment\n",
            "f.yaml: the file is empty; a loop needs at least 'name', 'initial' and 'states'",
        ),
        ("- a\n- b\n", "f.yaml: the top level must be a mapping of loop settings, got a list"),
        ("just words\n", "f.yaml: the top level must be a mapping of loop settings, got a string"),
        ("42\n", "f.yaml: the top level must be a mapping of loop settings, got a number"),
        ("a: 1\nb: 2\na: 3\n", "f.yaml:3:1: duplicate key 'a' in the top level"),
        ("s:\n  x:\n    k: 1\n    k: 2\n", "f.yaml:4:5: duplicate key 'k' in s > x"),
        ("? [a, b]\n: 1\n", "f.yaml:1:3: a mapping key must be a plain value, not a list or map"),
        ("a: &x [*x]\n", "f.yaml:1:4: recursive YAML alias"),
        (
            "a: !!python/object/apply:os.system [echo]\n",
            "f.yaml:1:4: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("a: !!set {x}\n", "f.yaml:1:4: unsupported YAML tag 'tag:yaml.org,2002:set'"),
    ],
)
def test_errors_are_one_line_with_position(text: str, message: str) -> None:
    with pytest.raises(LoopFileError) as info:
        load_text(text, "f.yaml")
    assert str(info.value) == message
    assert isinstance(info.value, LoopDefinitionError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("name: x\nstates: [\n", "f.yaml:3:1: YAML syntax error: "),
        ("a: 1\n b: 2\n", "f.yaml:2:3: YAML syntax error: "),
        ("a: 1\n---\nb: 2\n", "f.yaml:2:1: YAML syntax error: "),
        ("a: 'open\n", "f.yaml:1:4: YAML syntax error: the string that opens with ' here"),
        ("a: !!python/name:os.system ''\n", "f.yaml:1:4: YAML syntax error: "),
    ],
)
def test_yaml_syntax_errors_report_line_and_column(text: str, where: str) -> None:
    with pytest.raises(LoopFileError) as info:
        load_text(text, "f.yaml")
    assert str(info.value).startswith(where)
    assert "\n" not in str(info.value)
    error = info.value
    assert (error.source, f"{error.line}:{error.column}") == ("f.yaml", where.split(":", 1)[1][:3])


def test_merge_keys_may_be_overridden() -> None:
    data = load(
        """\
        base: &base
          action: pytest
          next: fix
        states:
          check:
            <<: *base
            next: done
        """
    )
    assert data["states"]["check"] == {"action": "pytest", "next": "done"}


def test_alias_bombs_fail_fast() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(
        LoopFileError, match=r"document too large \(over 200000 nodes after aliases\)"
    ):
        load_text("\n".join(lines) + "\n", "bomb.yaml")


def test_load_file(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("name: demo\n")
    doc = load_file(path)
    assert (doc.data, doc.source) == ({"name": "demo"}, str(path))


def test_load_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(LoopFileError) as info:
        load_file(tmp_path / "missing.yaml")
    assert str(info.value) == f"{tmp_path}/missing.yaml: no such file"
    with pytest.raises(LoopFileError, match=r": is a directory, not a loop file$"):
        load_file(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(
        LoopFileError, match=r"binary\.yaml: not UTF-8 text \(bad byte at offset 6\)$"
    ):
        load_file(binary)


def _read_in_time(path: Path) -> str:
    """The error read_file gives for *path*, which must come without waiting: a read that
    blocks is ended (a writer opens the FIFO and closes it) and fails the test."""
    said: list[str] = []

    def read() -> None:
        try:
            read_file(path)
        except LoopFileError as exc:
            said.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(scaled(5))
    if reader.is_alive():
        os.close(os.open(path, os.O_WRONLY))  # the reader sees an empty file and ends
        reader.join()
        raise AssertionError(f"read_file({path.name}) waited for a writer")
    assert len(said) == 1
    return said[0]


def test_a_pipe_with_no_temporary_file_to_copy_it_to_is_not_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "values.yaml"
    os.mkfifo(fifo)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with pytest.raises(LoopFileError) as info:
        read_file(fifo, pipe_ok=True)
    assert str(info.value) == (
        f"{fifo}: no temporary file could hold a copy of it (No such file or directory;"
        " TMPDIR sets where)"
    )


def test_a_file_that_is_not_a_regular_one_is_refused_unread(tmp_path: Path) -> None:
    # Loop files, their libraries, agents.yaml and --context-file are all read here: a FIFO
    # nobody writes to must not hang the command, nor a device be read.
    fifo = tmp_path / "loop.yaml"
    os.mkfifo(fifo)
    assert _read_in_time(fifo) == f"{fifo}: is a FIFO, not a loop file"
    with pytest.raises(LoopFileError) as info:
        read_file("/dev/zero")
    assert str(info.value) == "/dev/zero: is a character device, not a loop file"
    link = tmp_path / "link.yaml"
    link.symlink_to(fifo)
    assert _read_in_time(link) == f"{link}: is a FIFO, not a loop file"
    (tmp_path / "real.yaml").write_text("name: a\n")
    (tmp_path / "to-real.yaml").symlink_to(tmp_path / "real.yaml")
    assert read_file(tmp_path / "to-real.yaml") == "name: a\n"  # a link to a file is fine
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as out:
        out.truncate(loader.MAX_FILE_BYTES + 1)
    with pytest.raises(LoopFileError, match=r"huge\.yaml: larger than 32 MiB$"):
        read_file(huge)


def test_a_fifo_put_in_a_file_s_place_after_it_was_looked_at_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What is opened is checked too: the path may change between the look and the open.
    fifo = tmp_path / "loop.yaml"
    os.mkfifo(fifo)
    regular = os.stat(__file__)

    class LookedAtBeforeTheSwap:  # the loader's `os`, whose stat saw a regular file
        def __getattr__(self, name: str) -> object:
            return (lambda path: regular) if name == "stat" else getattr(os, name)

    monkeypatch.setattr(loader, "os", LookedAtBeforeTheSwap())
    assert _read_in_time(fifo) == f"{fifo}: is a FIFO, not a loop file"


def test_keys_are_their_text() -> None:
    # As in the JSON state file and in ${context.NAME}: a key never turns into a number.
    data = load(
        """\
        context:
          1e3: a
          010: b
          true: c
          1:30: d
          "q": e
        """
    )
    assert data == {"context": {"1e3": "a", "010": "b", "true": "c", "1:30": "d", "q": "e"}}


# --- moved from test_qa_regressions.py ---


def test_dates_in_yaml_stay_strings() -> None:
    doc = load_text("name: x\ncontext: {d: 2001-12-14}\n")
    assert doc.data["context"] == {"d": "2001-12-14"}


def test_tagged_non_json_values_are_refused_with_their_place() -> None:
    with pytest.raises(LoopDefinitionError) as info:
        load_text("name: x\ncontext: {b: !!binary aGVsbG8=}\n", "x.yaml")
    assert str(info.value) == (
        "x.yaml:2:14: a value tagged !!binary is not supported here; write it as a string"
    )


def test_compose_text_gives_the_nodes_with_where_each_key_is() -> None:
    from little_loops.fsm.definition.reading.loader import compose_text

    node = compose_text("name: x\nstates:\n  a: {terminal: true}\n")
    assert node is not None
    (name_key, _), (states_key, states) = node.value
    assert (name_key.value, name_key.start_mark.line, name_key.start_mark.column) == ("name", 0, 0)
    (a_key, _) = states.value[0]
    assert (a_key.value, a_key.start_mark.line, a_key.start_mark.column) == ("a", 2, 2)


def test_the_loader_s_resolver_tags_every_scalar_as_pyyaml_s_would() -> None:
    # The loader answers the composer's `resolve` from a table joined once per first
    # character and skips the steps down and up (it has no path resolvers): the tag of every
    # node must stay what PyYAML's own BaseResolver gives with the same implicit resolvers.
    import yaml
    from yaml.resolver import BaseResolver

    from little_loops.fsm.definition.reading.loader import _LoopYamlLoader

    assert not _LoopYamlLoader.yaml_path_resolvers
    loader = _LoopYamlLoader("")
    try:
        texts = [
            *("", "true", "True", "FALSE", "yes", "on", "n", "null", "~", "Null", "NULL"),
            *("12", "-1", "+7", "010", "0x1f", "0o7", "0b11", "1_000", "1:30", "1.5", ".5"),
            *("1e3", "-.inf", ".NaN", "2001-12-14", "<<", "=", "!x", "echo 1", "s0", "é"),
        ]
        for text in texts:
            for implicit in ((True, False), (False, True), (False, False), (True, True)):
                ours = loader.resolve(yaml.ScalarNode, text, implicit)
                assert ours == BaseResolver.resolve(loader, yaml.ScalarNode, text, implicit), (
                    text,
                    implicit,
                )
        for kind in (yaml.SequenceNode, yaml.MappingNode):
            for implicit in (True, False):
                ours = loader.resolve(kind, None, implicit)
                assert ours == BaseResolver.resolve(loader, kind, None, implicit), kind
    finally:
        loader.dispose()


_READER_PATTERN_PROBE = """\
import re
compile_before = re.compile
from little_loops.fsm.definition.reading import loader
import yaml
deferred = type(yaml.reader.Reader.NON_PRINTABLE) is loader._CompiledWhenUsed
try:
    yaml.load("a: \\x01", Loader=yaml.SafeLoader)  # the pure-Python reader: it checks
    refused = False
except yaml.reader.ReaderError:
    refused = True
ours = loader.load_text("a: 1\\nb: yes\\nc: ~", "f").data
bool_11 = yaml.resolver.Resolver.yaml_implicit_resolvers["y"][0][1]
unused = bool_11._compiled is None  # PyYAML's YAML 1.1 bool: the loader reads its own
theirs = yaml.load("b: yes", Loader=yaml.SafeLoader)  # compiled as it is used
import copy
copied = bool(copy.deepcopy(yaml.reader.Reader.NON_PRINTABLE).search("\\x01"))
print(deferred, refused, re.compile is compile_before, ours, unused, theirs, copied)
"""


def test_pyyaml_is_imported_without_compiling_its_patterns_which_still_work() -> None:
    import subprocess
    import sys

    # In a fresh Python (here PyYAML is imported already): the patterns PyYAML compiles at
    # import are compiled when used; its pure-Python reader still refuses a control
    # character, `re.compile` is itself again, the YAML 1.1 bool pattern this loader does
    # not use stays uncompiled, PyYAML's own loader still reads `yes` as true with it, and
    # a copy of a deferred pattern works.
    proc = subprocess.run(
        [sys.executable, "-c", _READER_PATTERN_PROBE],
        capture_output=True,
        text=True,
        timeout=scaled(30),
        check=True,
    )
    expected = "True True True {'a': 1, 'b': 'yes', 'c': None} True {'b': True} True"
    assert proc.stdout.split("\n")[0] == expected
