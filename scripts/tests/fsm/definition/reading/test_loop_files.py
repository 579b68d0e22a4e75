"""The `name:` of a loop file as the folder check reads it: from the YAML event stream, the
same answer as loading the whole file, without building it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from little_loops.fsm.definition.reading.loop_files import declared_name, name_in_file

DOCUMENTS = [
    "name: a\nx: 1\n",
    "x: {name: b}\nname: c\n",
    "states: [name, x]\nname: d\n",
    "{name: e, y: 2}",
    "- name: f\n",
    "name: 12\n",
    "name: '12'\n",
    "name:\n",
    "name: !!str 5\n",
    "a: &x\n  name: q\nb: *x\nname: g\n",
    "name: [1]\n",
    "!!map {name: i}\n",
    '"name": j\n',
    "name: null\n",
    "name: true\n",
    "k: |\n  name: no\nname: l\n",
    "states:\n  s:\n    name: inner\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_name_read_from_the_events_is_the_loaded_one(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    assert name_in_file(path) == declared_name(yaml.safe_load(text))


@pytest.mark.parametrize(
    "text", ["name: [unclosed\n", "\tname: x\n", "name: x\n---\nname: y\n", "name: x\n: :\n"]
)
def test_a_file_yaml_cannot_read_has_no_name_and_no_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    name = name_in_file(path)
    assert name in (None, "x")  # a name before the broken part may be read; nothing raises


def test_bytes_that_are_not_utf8_or_a_folder_have_no_name(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"name: \xff\n")
    (tmp_path / "dir.yaml").mkdir()
    assert name_in_file(tmp_path / "bad.yaml") is None
    assert name_in_file(tmp_path / "dir.yaml") is None
