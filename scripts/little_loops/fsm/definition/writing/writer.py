"""Write an FSMLoop as readable YAML that the loader reads back to an equal FSMLoop."""

from __future__ import annotations

import re
from typing import Any

import yaml

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import FLOAT_RE, INT_RE

# Top-level keys come in reading order; any other key of FSMLoop.to_dict() follows.
_LEADING_KEYS = ("name", "parameters", "initial", "context", "states")

# Plain scalars that some YAML 1.1 reader would take for a boolean. PyYAML's resolver
# already quotes yes/no/on/off/true/false; y/n are 1.1 booleans it does not know about.
_YAML11_EXTRA_BOOLS = re.compile(r"^(?:y|Y|n|N)$")

# Line breaks other than \n (YAML 1.1 also breaks lines at NEL, LS and PS).
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")

# Long commands stay on one line instead of being folded at 80 columns.
_WIDTH = 4096


class _FSMDumper(yaml.SafeDumper):
    """Block style, two-space indent, lists indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _OTHER_BREAKS.search(value):
        # Double quotes escape these; left raw, a reader would fold them into spaces.
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if _YAML11_EXTRA_BOOLS.match(value) or INT_RE.match(value) or FLOAT_RE.match(value):
        # Also what ll-loop's YAML 1.2 reader takes for a number (`1e3`, `010`).
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_FSMDumper.add_representer(str, _represent_str)


def fsm_document(fsm: FSMLoop) -> dict[str, Any]:
    """The loop as plain data in file order: name, parameters, initial, context, states, then
    settings."""
    data = fsm.to_dict()
    ordered = {key: data[key] for key in _LEADING_KEYS if key in data}
    ordered.update((key, value) for key, value in data.items() if key not in ordered)
    return ordered


def dump_fsm_yaml(fsm: FSMLoop, *, header: str | None = None) -> str:
    """The loop as YAML text; each line of *header* becomes a leading `# ` comment."""
    body = yaml.dump(
        fsm_document(fsm),
        Dumper=_FSMDumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=_WIDTH,
        indent=2,
    )
    if header is None:
        return body
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + body
