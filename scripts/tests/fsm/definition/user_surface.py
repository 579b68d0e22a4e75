"""What users see of the loop-file keys, on every loop of the repository: the comparison
that holds the key-table rebuild (issue 40) to changing none of it.

For each loop file of the repository (`.loops/`, the shipped loops, the test data), each
YAML example of the docs and each loop a test module writes inline: `ll-loop validate`,
`validate --compat` (and `--json`), `migrate --diff`, `run --dry-run` and `graph`, their
output and exit code; and once, `ll-loop schema` and `fsm-loop-schema.json`, with the order of each
object's keys left out (the same schema accepts and refuses the same documents).

Run as a script to write the record (`--write`) or to compare with it:
`python scripts/tests/fsm/definition/user_surface.py [--write]`.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
RECORD = REPO / "scripts" / "tests" / "data" / "user_surface.json"
_SKIP = {".venv", "node_modules", ".git"}
_FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)


def loop_files() -> list[Path]:
    """Every YAML file of the repository that is a loop (has `states:` or `paradigm:`)."""
    out: list[Path] = []
    for path in sorted(REPO.rglob("*.y*ml")):
        rel = path.relative_to(REPO)
        if _SKIP & set(rel.parts) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if re.search(r"^(states|paradigm|initial):", text, re.M):
            out.append(path)
    return out


def doc_examples() -> Iterator[tuple[str, str]]:
    """Each YAML example of the docs that is a loop, named by its file and place."""
    for doc in sorted([*(REPO / "docs").rglob("*.md"), REPO / "README.md"]):
        text = doc.read_text(encoding="utf-8")
        for n, match in enumerate(_FENCE.finditer(text)):
            body = match.group(1)
            if re.search(r"^(states|paradigm):", body, re.M):
                yield f"{doc.relative_to(REPO)}#{n}".replace("/", "__"), body


def test_loops() -> Iterator[tuple[str, str]]:
    """Each loop the test modules write inline (a string constant with `states:` at the
    start of a line), once each, named by its module and the digest of its text."""
    seen: set[str] = set()
    for module in sorted((REPO / "scripts" / "tests").rglob("test_*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = node.value if isinstance(node, ast.Constant) else None
            if not isinstance(body, str) or not re.search(r"^states:", body, re.M):
                continue
            if body in seen:
                continue
            seen.add(body)
            name = str(module.relative_to(REPO / "scripts" / "tests")).replace("/", "__")
            yield f"{name}#{hashlib.sha256(body.encode()).hexdigest()[:10]}", body


def _run(argv: list[str], work: Path | None = None) -> dict[str, object]:
    from little_loops.cli import main_loop

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main_loop(argv)
        except SystemExit as exc:  # pragma: no cover - main_loop returns its code
            code = exc.code if isinstance(exc.code, int) else 2
    said = {"out": out.getvalue(), "err": err.getvalue()}
    for name, text in said.items():
        for place in {str(work), str(work.resolve())} if work else ():
            text = text.replace(place, "<work>")
        said[name] = text
    return {"code": code, **said}


def _canonical_sha(schema: str) -> str:
    """The schema's digest with the order of each object's keys left out: JSON Schema gives
    that order no meaning, so two equal digests accept and refuse the same documents."""
    canonical = json.dumps(json.loads(schema), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def surface() -> dict[str, object]:
    """What users see, by loop file (its path from the repository or the docs' place)."""
    schema_file = REPO / "scripts" / "little_loops" / "fsm" / "fsm-loop-schema.json"
    record: dict[str, object] = {
        "schema_file_sha256": _canonical_sha(schema_file.read_text(encoding="utf-8")),
        "schema_command": _canonical_sha(str(_run(["schema", "--content"])["out"])),
    }
    loops: dict[str, object] = {}
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / ".loops").mkdir()
        names: list[tuple[str, Path]] = []
        for path in loop_files():
            rel = str(path.relative_to(REPO))
            copy = work / rel
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(path.read_bytes())
            names.append((rel, copy))
        inline = [("docs-examples", doc_examples()), ("tests-inline", test_loops())]
        for folder, found in inline:
            for name, body in found:
                copy = work / folder / f"{name}.yaml"
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_text(body, encoding="utf-8")
                names.append((f"{folder}/{name}.yaml", copy))
        os.chdir(work)
        try:
            for rel, _copy in names:
                loops[rel] = {
                    "validate": _run(["validate", rel], work),
                    "validate_compat": _run(["validate", "--compat", rel], work),
                    "validate_json": _run(["validate", "--json", "--compat", rel], work),
                    "migrate": _run(["migrate", "--diff", rel], work),
                    "dry_run": _run(["run", rel, "--dry-run"], work),
                    "graph": _run(["graph", rel], work),
                }
        finally:
            os.chdir(here)
    record["loops"] = loops
    return record


def differences(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """Each place where *after* differs from *before*, one line each."""
    out: list[str] = []
    for key in ("schema_file_sha256", "schema_command"):
        if before.get(key) != after.get(key):
            out.append(f"{key} differs")
    old, new = before["loops"], after["loops"]
    assert isinstance(old, dict)
    assert isinstance(new, dict)
    for name in sorted(old.keys() | new.keys()):
        if name not in new or name not in old:
            continue  # a loop written or dropped since: nothing to compare it with
        for what in old[name]:
            if old[name][what] != new[name].get(what):
                out.append(f"{name}: {what} differs: {old[name][what]!r} != {new[name][what]!r}")
    return out


def main(argv: list[str]) -> int:
    now = surface()
    if "--write" in argv:
        RECORD.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {RECORD.relative_to(REPO)}: {len(now['loops'])} loops")  # type: ignore[arg-type]
        return 0
    found = differences(json.loads(RECORD.read_text(encoding="utf-8")), now)
    for line in found:
        print(line)
    both = now["loops"].keys() & json.loads(RECORD.read_text(encoding="utf-8"))["loops"].keys()  # type: ignore[attr-defined]
    print(f"{len(both)} loops compared, {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
