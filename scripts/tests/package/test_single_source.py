"""Each fact is written in one module (evaluator names, keys, verdicts); a key's name in three."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import little_loops
from little_loops.fsm.evaluators.llm_structured import DEFAULT_LLM_VERDICTS
from little_loops.fsm.evaluators.plateau import HISTORY_KEYS
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES, SPECS

PACKAGE = Path(little_loops.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def _string_collections(path: Path) -> Iterator[frozenset[str]]:
    """The set of strings of every tuple, list or set literal in *path* made only of strings."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) == len(node.elts) and all(isinstance(i, str) for i in items):
                yield frozenset(items)


COLLECTIONS = {path: list(_string_collections(path)) for path in MODULES}


def _modules_writing(words: frozenset[str]) -> list[str]:
    return [
        str(path.relative_to(PACKAGE))
        for path, found in COLLECTIONS.items()
        if any(words == c for c in found)
    ]


@pytest.mark.parametrize("name", [n for n in EVALUATOR_TYPES if len(SPECS[n].keys) > 1])
def test_an_evaluators_key_list_is_written_once(name: str) -> None:
    keys = SPECS[name].keys
    shared = keys == HISTORY_KEYS  # the two history evaluators read one list
    home = "plateau" if shared else name
    assert _modules_writing(frozenset(keys)) == [f"fsm/evaluators/{home}.py"]


@pytest.mark.parametrize("name", EVALUATOR_TYPES)
def test_an_evaluators_verdict_list_is_written_once(name: str) -> None:
    verdicts = frozenset(SPECS[name].verdicts)
    if not verdicts:  # classify: its verdicts are the tokens the action prints
        assert SPECS[name].config_verdicts is not None
        return
    home = "fsm/evaluators/spec.py" if verdicts == {"success", "failure"} else f"{name}.py"
    assert _modules_writing(verdicts) == [home if "/" in home else f"fsm/evaluators/{home}"]


def test_the_judges_default_verdicts_are_written_once() -> None:
    assert _modules_writing(frozenset(DEFAULT_LLM_VERDICTS)) == ["fsm/evaluators/llm_structured.py"]


def test_only_the_registry_lists_the_evaluator_names() -> None:
    # The registry lists them (to import an evaluator on first use); a copy would drift.
    names = set(EVALUATOR_TYPES)
    writers = [
        str(path.relative_to(PACKAGE))
        for path, found in COLLECTIONS.items()
        if any(len(c & names) >= 3 for c in found)
    ]
    assert writers == ["fsm/evaluators/registry.py"]


def test_every_evaluator_module_is_in_the_registry() -> None:
    folder = PACKAGE / "fsm" / "evaluators"
    with_spec = sorted(
        path.stem
        for path in folder.glob("*.py")
        if any(
            isinstance(node, ast.Assign | ast.AnnAssign)
            and "SPEC"
            in [
                t.id
                for t in getattr(node, "targets", [getattr(node, "target", None)])
                if isinstance(t, ast.Name)
            ]
            for node in ast.parse(path.read_text()).body
        )
    )
    assert with_spec == sorted(EVALUATOR_TYPES)


def _numbers_in(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, int | float) and n.value is not True
        for n in ast.walk(node)
    )


def price_tables(path: Path) -> list[str]:
    """Where *path* prices a model: a dict literal from a model name (one the price table
    knows) to numbers, or a function named for looking up prices."""
    from little_loops.fsm.facts.pricing import price_of

    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                named = isinstance(key, ast.Constant) and isinstance(key.value, str)
                if named and price_of(key.value) is not None and _numbers_in(value):
                    found.append((node.lineno, f"a price of {key.value!r}"))
                    break
        elif isinstance(node, ast.FunctionDef) and node.name in {"price_of", "priced", "cost_of"}:
            found.append((node.lineno, f"def {node.name}"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_model_prices_are_written_in_one_module() -> None:
    elsewhere = {
        str(path.relative_to(PACKAGE)): tables
        for path in MODULES
        if path.name != "pricing.py" and (tables := price_tables(path))
    }
    assert elsewhere == {}
    assert price_tables(PACKAGE / "fsm" / "facts" / "pricing.py")  # the scan finds one


def test_the_scan_finds_a_price_table_and_a_lookup(tmp_path: Path) -> None:
    module = tmp_path / "prices.py"
    module.write_text(
        'TABLE = {"gpt-5": (1.25, 10.0)}\nOK = {"gpt-5": "a name"}\ndef price_of(m): ...\n'
    )
    assert price_tables(module) == ["line 1: a price of 'gpt-5'", "line 3: def price_of"]


# Keys issue 40 found spread over many modules (`throttle` in 8, `pruning_profile` in 7,
# `tamper_guard` in 5): each is named in its row, the model's field and the rule that acts on
# it at most; every other reader goes through the row (`state.value(ROW)`, `ROW.name`).
ROW_KEYS = ("throttle", "pruning_profile", "tamper_guard")
MOST_MODULES_NAMING_A_KEY = 3


def modules_naming(word: str, modules: list[Path] = MODULES) -> list[str]:
    """The modules whose text has *word* as a whole word (code, docstrings and comments
    alike: `grep -lw`), by path in the package."""
    pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")
    return [
        str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else path.name
        for path in modules
        if pattern.search(path.read_text())
    ]


@pytest.mark.parametrize("key", ROW_KEYS)
def test_a_keys_name_is_written_in_at_most_three_modules(key: str) -> None:
    naming = modules_naming(key)
    assert naming  # the scan finds its row at least
    assert len(naming) <= MOST_MODULES_NAMING_A_KEY, naming


def test_the_scan_finds_a_key_as_a_whole_word_only(tmp_path: Path) -> None:
    files = {
        "row.py": 'KEY = Key("throttle")\n',
        "doc.py": '"""A state\'s throttle: its hard_max."""\n',
        "other.py": "on_throttle_hard = _throttle(throttled)\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert modules_naming("throttle", sorted(tmp_path.iterdir())) == ["doc.py", "row.py"]
