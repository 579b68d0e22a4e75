"""Resolve a loop's reuse keys into one plain loop: `from:`, then `flow:`, then the fragments.

* `from: NAME` (a base loop: NAME.yaml in the loop's folder, then in the project's `.loops/`)
  lays the child over its base: mappings merge key by key at every level (`context:`,
  `states:`, a state's `evaluate:`), anything else the child gives replaces the base's.
* `flow:` / `state_defs:` become `states:` (see `flow`).
* `import:` lists fragment libraries (files with a top-level `fragments:` mapping, found
  from the importing file's folder, then the project's `.loops/`; a library may import
  others); a later library's fragment replaces an earlier one's of the same name, and the
  loop's own `fragments:` replace both. Then each state's `fragment:` is resolved (see
  `fragments`).

Every value keeps the file and line it came from, for the messages about it.
"""

from __future__ import annotations

from pathlib import Path

from little_loops.fsm.definition.reading.flow import FLOW_KEY, expand_flow
from little_loops.fsm.definition.reading.fragments import (
    FRAGMENT_KEY,
    check_parameters,
    expand_state,
)
from little_loops.fsm.definition.reading.loader import LoadedDocument, load_file
from little_loops.fsm.definition.reading.located import Node, deep_merge, unwrap, wrap
from little_loops.fsm.definition.reading.loop_files import LOOPS_FOLDER, SOURCE_SUFFIXES
from little_loops.fsm.facts.errors import LoopDefinitionError

BASE_KEY = "from"
IMPORT_KEY = "import"
FRAGMENTS_KEY = "fragments"
# How many files deep a `from:` chain or a chain of imports may go (deeper is a mistake, and
# would exhaust Python's stack).
MAX_DEPTH = 64


def resolve(doc: LoadedDocument) -> LoadedDocument:
    """The loop *doc* with `from:`, `flow:`, `import:`, `fragments:` and every state's
    `fragment:` resolved; LoopFileError (naming the file and line) when one cannot be."""
    reader = _Reader(Path(doc.source))
    root = reader.inherit(wrap(doc), (_key(doc.source),))
    if FLOW_KEY in root.value:
        states = root.get("states")
        root = expand_flow(root, states is not None and states.file == root.value[FLOW_KEY].file)
    fragments = reader.fragments_of(root, (_key(doc.source),))
    states = root.get("states")
    if states is not None and isinstance(states.value, dict):
        expanded = {
            name: expand_state(name, state, fragments)
            if isinstance(state.value, dict) and FRAGMENT_KEY in state.value
            else state
            for name, state in states.value.items()
        }
        root.value["states"] = Node(expanded, states.file, states.line)
    for key in (IMPORT_KEY, FRAGMENTS_KEY):
        root.value.pop(key, None)
    return unwrap(root, doc.source)


def library_fragments(path: Path) -> dict[str, Node]:
    """The fragments the fragment library at *path* gives, its imports resolved as a loop's
    are; LoopFileError naming the file and line when one cannot be."""
    library = wrap(load_file(path))
    return _Reader(path).fragments_of(library, (_key(path),))


def _key(file: str | Path) -> Path:
    return Path(file).resolve()


def project_loops_folder(loop_file: Path) -> Path:
    """The project's `.loops/` of *loop_file*: the nearest folder of that name it is in,
    else the one of the current folder's project."""
    for folder in (*loop_file.parents, *loop_file.absolute().parents):
        if folder.name == LOOPS_FOLDER:
            return folder  # as the loop file is named (relative stays relative)
    from little_loops.fsm.facts.layout import default_loops_dir

    return default_loops_dir()


class _Reader:
    """Finds and reads the files a loop reuses, each once."""

    def __init__(self, loop_file: Path) -> None:
        self.project = project_loops_folder(loop_file)
        self.libraries: dict[Path, dict[str, Node]] = {}

    def find(self, ref: Node, what: str, names: tuple[str, ...]) -> Path:
        """The file *ref* (a text) names, tried as each of *names* (relative paths) in the
        folder of the file *ref* is written in, then in the project's `.loops/`."""
        folders = [Path(ref.file).parent]
        if _key(self.project) != _key(folders[0]):
            folders.append(self.project)
        for folder in folders:
            for name in names:
                if (folder / name).is_file():
                    return folder / name
        tried = " and ".join(str(f / names[0]) for f in folders)
        raise ref.fail(f"{what}: no file '{ref.value}' (looked for {tried})")

    def inherit(self, root: Node, chain: tuple[Path, ...]) -> Node:
        """*root* laid over the base loop its `from:` names (itself resolved first)."""
        base_ref = root.get(BASE_KEY)
        if base_ref is None:
            return root
        if not isinstance(base_ref.value, str) or not base_ref.value:
            raise base_ref.fail("from: names a base loop (its file name without .yaml)")
        path = self._base_path(base_ref)
        if _key(path) in chain:
            names = " -> ".join(p.name for p in (*chain, _key(path)))
            raise base_ref.fail(f"from: '{base_ref.value}' inherits from itself ({names})")
        if len(chain) > MAX_DEPTH:
            raise base_ref.fail(f"from: chain of base loops deeper than {MAX_DEPTH} files")
        base = self.inherit(wrap(load_file(path)), (*chain, _key(path)))
        if not isinstance(base.value, dict):
            raise base_ref.fail(f"from: '{base_ref.value}' is not a loop")
        child = Node({k: v for k, v in root.value.items() if k != BASE_KEY}, root.file, root.line)
        return deep_merge(base, child)

    def _base_path(self, ref: Node) -> Path:
        from little_loops.loops import LIBRARY_PREFIX, library_loop_path

        name = str(ref.value)
        if name.startswith(LIBRARY_PREFIX):
            try:
                return library_loop_path(name[len(LIBRARY_PREFIX) :])
            except LoopDefinitionError as exc:
                raise ref.fail(f"from: {exc}") from None
        names = (
            (name,) if name.endswith(SOURCE_SUFFIXES) else tuple(name + s for s in SOURCE_SUFFIXES)
        )
        return self.find(ref, "from", names)

    def fragments_of(self, root: Node, chain: tuple[Path, ...]) -> dict[str, Node]:
        """The fragments *root* (a loop or a library) can use: those of its imports, in
        order, then its own `fragments:`."""
        found: dict[str, Node] = {}
        imports = root.get(IMPORT_KEY)
        if imports is not None:
            entries = imports.value if isinstance(imports.value, list) else [imports]
            for entry in entries:
                found.update(self._library(entry, chain))
        own = root.get(FRAGMENTS_KEY)
        if own is not None:
            if not isinstance(own.value, dict):
                raise own.fail("fragments: is a mapping of fragment names to state settings")
            for name, body in own.value.items():
                check_parameters(name, body)  # here, used by a state or not
            found.update(own.value)
        return found

    def _library(self, ref: Node, chain: tuple[Path, ...]) -> dict[str, Node]:
        if not isinstance(ref.value, str) or not ref.value:
            raise ref.fail("import: lists fragment library files (lib/common.yaml)")
        found = self.find(ref, "import", (ref.value,))
        path = _key(found)
        if path in chain:
            names = " -> ".join(p.name for p in (*chain, path))
            raise ref.fail(f"import: '{ref.value}' imports itself ({names})")
        if len(chain) > MAX_DEPTH:
            raise ref.fail(f"import: chain of libraries deeper than {MAX_DEPTH} files")
        if path not in self.libraries:
            library = wrap(load_file(found))
            if library.get(FRAGMENTS_KEY) is None and library.get(IMPORT_KEY) is None:
                raise ref.fail(f"import: '{ref.value}' is no fragment library (no fragments:)")
            self.libraries[path] = self.fragments_of(library, (*chain, path))
        return self.libraries[path]
