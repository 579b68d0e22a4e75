"""The likely cause of a YAML syntax error (a tab, bad indentation, an unclosed quote)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (loader.py imports PyYAML: see _yaml_without_its_reader_pattern there)
    import yaml


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _tab_column(line: str) -> int | None:
    """The 1-based column of a tab in the indentation of *line*, if there is one."""
    lead = line[: len(line) - len(line.lstrip(" \t"))]
    return lead.index("\t") + 1 if "\t" in lead and line.strip() else None


def _levels(lines: list[str], index: int) -> list[int]:
    """The indentation of the lines a line at *index* could line up with: the line before
    it and each line above with less indentation (its parents)."""
    levels: list[int] = []
    for line in reversed(lines[:index]):
        if _content(line) and (not levels or _indent(line) < min(levels)):
            levels.append(_indent(line))
            if levels[-1] == 0:
                break
    return sorted(levels)


def _previous(lines: list[str], index: int) -> int | None:
    for before in range(index - 1, -1, -1):
        if _content(lines[before]):
            return before
    return None


def _bad_indent(lines: list[str], index: int, problem: str) -> str | None:
    if index >= len(lines) or not _content(lines[index]):
        return None
    here = _indent(lines[index])
    if problem == "did not find expected key":
        levels = _levels(lines, index)
        if levels and here not in levels:
            shown = ", ".join(str(n) for n in levels[:-1])
            shown = f"{shown} or {levels[-1]}" if shown else str(levels[-1])
            return (
                f"bad indentation: line {index + 1} is indented {here} spaces, "
                f"like no line above it ({shown})"
            )
    if problem.startswith("mapping values are not allowed"):
        before = _previous(lines, index)
        if before is None or _indent(lines[before]) >= here:
            return None
        key, colon, value = lines[before].strip().partition(": ")
        if colon and value.strip() and value.strip()[0] not in "|>&*!":
            return (
                f"bad indentation: line {index + 1} is indented more than line {before + 1}, "
                f"so it reads as more of the value of '{key}'; indent it like line "
                f"{before + 1} ({_indent(lines[before])} spaces)"
            )
    return None


def explain(text: str, exc: yaml.MarkedYAMLError) -> tuple[str, int, int] | None:
    """A plain-words cause of *exc* and its 1-based line and column, when it is a common
    one; an unclosed quote is placed where it opens (PyYAML reports the end of the file)."""
    problem = exc.problem or ""
    mark = exc.problem_mark
    lines = text.splitlines()
    if mark is not None and mark.line < len(lines):
        column = _tab_column(lines[mark.line])
        if column is not None:
            return "tabs are not allowed for indentation; use spaces", mark.line + 1, column
    opened = exc.context_mark
    if opened is not None and "quoted scalar" in (exc.context or "") and "end of stream" in problem:
        line = lines[opened.line] if opened.line < len(lines) else ""
        quote = '"' if line[opened.column : opened.column + 1] == '"' else "'"
        return (
            f"the string that opens with {quote} here is never closed (add the closing {quote})",
            opened.line + 1,
            opened.column + 1,
        )
    if mark is not None:
        hint = _bad_indent(lines, mark.line, problem)
        if hint is not None:
            return hint, mark.line + 1, mark.column + 1
    return None
