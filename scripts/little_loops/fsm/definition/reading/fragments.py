"""`fragment:` on a state: the fragment's keys under the state's, `with:` values for `${param.X}`.

A fragment is a partial state. The state's own keys win at every level (`evaluate:` merges
key by key); the fragment's `description:` is about the fragment and stays out. A fragment
may declare `parameters:` (`type`, `required`, `default`); the state binds them with
`with:`, and each `${param.NAME}` in the state is replaced by its value when the loop is
read: the value itself where the text is just that reference (`target: ${param.max}` is
the number), else its text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from little_loops.fsm.definition.reading.located import Node, deep_merge
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import describe

FRAGMENT_KEY = "fragment"
BINDINGS_KEY = "with"
PARAMETERS_KEY = "parameters"
_NOT_MERGED = ("description", PARAMETERS_KEY)  # about the fragment, not part of the state
# Upstream's parameter types, checked on a value written in `with:` (not on a `${...}`).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "path": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "list": (list,),
}
_SETTINGS = ("type", "required", "default", "description", "values")
# `${param.NAME}` and its forms `${param.NAME?}` (empty when unbound) and
# `${param.NAME:default=TEXT}`; `$${` is a literal `${` and is left alone.
_PARAM = re.compile(r"\$?\$\{param\.([A-Za-z_][A-Za-z0-9_-]*)(\?|:default=[^}]*)?\}")
_UNBOUND = object()


def expand_state(name: str, state: Node, fragments: Mapping[str, Node]) -> Node:
    """The state *name* with its `fragment:` resolved from *fragments* (by name)."""
    ref = state.value[FRAGMENT_KEY]
    if not isinstance(ref.value, str) or ref.value not in fragments:
        raise ref.fail(_unknown(name, ref.value, fragments))
    fragment = fragments[ref.value]
    if not isinstance(fragment.value, dict):
        raise fragment.fail(f"fragment '{ref.value}' must be a mapping of state settings")
    body = Node(
        {k: v for k, v in fragment.value.items() if k not in _NOT_MERGED},
        fragment.file,
        fragment.line,
    )
    merged = deep_merge(body, state)
    keys = {k: v for k, v in merged.value.items() if k not in (FRAGMENT_KEY, BINDINGS_KEY)}
    merged = Node(keys, state.file, state.line)
    values = _bind(name, ref, fragment, merged_bindings(fragment, state))
    return _substitute(merged, values)


def merged_bindings(fragment: Node, state: Node) -> Node | None:
    """The `with:` of the state, over one the fragment itself may give."""
    own, given = fragment.get(BINDINGS_KEY), state.get(BINDINGS_KEY)
    if own is None or given is None:
        return given if given is not None else own
    return deep_merge(own, given)


def _unknown(state: str, ref: object, fragments: Mapping[str, Node]) -> str:
    where = f"states > {state} > fragment"
    if not isinstance(ref, str):
        return f"{where}: expected a fragment name, got {ref!r}"
    hint = did_you_mean(ref, list(fragments))
    known = ", ".join(sorted(fragments)) or "none: import a fragment library or add fragments:"
    return f"{where}: no fragment named '{ref}'{hint} (fragments: {known})"


def _bind(state: str, ref: Node, body: Node, bindings: Node | None) -> dict[str, object]:
    """The value of each parameter of the fragment *ref* names (*body*) for *state*: bound in
    `with:`, else its default; an optional one with neither is left out (an error only
    where it is used)."""
    where, fragment = f"states > {state} > with", str(ref.value)
    given: dict[str, Node] = {}
    if bindings is not None:
        if not isinstance(bindings.value, dict):
            raise bindings.fail(f"{where}: expected a mapping of parameter names to values")
        given = bindings.value
    declared = _declared(fragment, body.get(PARAMETERS_KEY))
    values: dict[str, object] = {}
    for key, node in given.items():
        if declared and key not in declared:
            names = ", ".join(sorted(declared))
            hint = did_you_mean(key, list(declared))
            raise node.fail(
                f"{where} > {key}: fragment '{fragment}' has no parameter '{key}'{hint}"
                f" (parameters: {names})"
            )
        if key in declared:
            _check_type(f"{where} > {key}", node, declared[key])
        values[key] = node.plain()
    for key, spec in declared.items():
        if key in values:
            continue
        default = spec.get("default")
        if default is not None:
            values[key] = default.plain()
        elif _required(spec):
            at = bindings if bindings is not None else ref
            raise at.fail(
                f"{where}: fragment '{fragment}' needs parameter '{key}' (bind it in with:)"
            )
    return values


def check_parameters(fragment: str, body: Node) -> None:
    """Raise LoopFileError when the `parameters:` of the fragment *body* (named *fragment*)
    cannot be read: a library is checked so before any loop uses the fragment."""
    if isinstance(body.value, dict):
        _declared(fragment, body.get(PARAMETERS_KEY))


def _declared(fragment: str, parameters: Node | None) -> dict[str, Node]:
    """The fragment's `parameters:`, each as a mapping Node of its settings."""
    if parameters is None:
        return {}
    if not isinstance(parameters.value, dict):
        raise parameters.fail(
            f"fragment '{fragment}' > parameters: expected a mapping of parameter names to a "
            f"type or to settings ({', '.join(_SETTINGS)}), got {describe(parameters.plain())}"
        )
    out: dict[str, Node] = {}
    for key, spec in parameters.value.items():
        if spec.value is None or isinstance(spec.value, str):
            spec = Node(
                {"type": Node(spec.value or "string", spec.file, spec.line)}, spec.file, spec.line
            )
        if not isinstance(spec.value, dict):
            raise spec.fail(
                f"fragment '{fragment}' > parameters > {key}: expected a type or a mapping"
            )
        for setting in spec.value:
            if setting not in _SETTINGS:
                hint = did_you_mean(setting, _SETTINGS)
                raise spec.value[setting].fail(
                    f"fragment '{fragment}' > parameters > {key}: unknown key '{setting}'{hint}"
                )
        kind = spec.get("type")
        if kind is not None and kind.value not in _TYPES and kind.value != "enum":
            raise kind.fail(
                f"fragment '{fragment}' > parameters > {key}: unknown type {kind.value!r}"
            )
        out[key] = spec
    return out


def _required(spec: Node) -> bool:
    flag = spec.get("required")
    return flag is not None and flag.value is True


def _check_type(where: str, node: Node, spec: Node) -> None:
    value = node.value
    if isinstance(value, str) and "${" in value:
        return  # a reference: its value is only known when the state runs
    kind_node = spec.get("type")
    kind = kind_node.value if kind_node is not None else "string"
    choices = spec.get("values")
    if kind == "enum":
        allowed = choices.plain() if choices is not None else None
        if isinstance(allowed, list) and value not in allowed:
            raise node.fail(
                f"{where}: expected one of {', '.join(map(str, allowed))}, got {value!r}"
            )
        return
    plain = node.plain()
    types = _TYPES[kind]
    if not isinstance(plain, types) or (isinstance(plain, bool) and bool not in types):
        raise node.fail(f"{where}: expected {kind}, got {plain!r}")


def _substitute(node: Node, values: Mapping[str, object]) -> Node:
    """*node* with every `${param.NAME}` in its texts replaced by the value of NAME."""
    if isinstance(node.value, dict):
        items = {k: _substitute(v, values) for k, v in node.value.items()}
        return Node(items, node.file, node.line)
    if isinstance(node.value, list):
        return Node([_substitute(v, values) for v in node.value], node.file, node.line)
    if not isinstance(node.value, str) or "${param." not in node.value:
        return node
    whole = _PARAM.fullmatch(node.value)
    if whole is not None and not node.value.startswith("$$"):
        value = _value(node, whole, values)
        return Node(value, node.file, node.line)
    text = _PARAM.sub(
        lambda m: m.group(0) if m.group(0).startswith("$$") else _text(_value(node, m, values)),
        node.value,
    )
    return Node(text, node.file, node.line)


def _value(node: Node, match: re.Match[str], values: Mapping[str, object]) -> object:
    name, form = match.group(1), match.group(2)
    value = values.get(name, _UNBOUND)
    if value is not _UNBOUND:
        return value
    if form == "?":
        return ""
    if form is not None:
        return form[len(":default=") :]
    raise node.fail(f"${{param.{name}}} has no value: bind '{name}' in with: or give it a default")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
