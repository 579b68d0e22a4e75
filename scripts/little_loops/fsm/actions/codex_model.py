"""Which model a Codex session runs on: as its options and config name it, and as it recorded.

Before a session, the model is the first of: the `model` option (`--model`), a `-m`/`--model`
in `extra_args`, `config: {model: ...}`, the profile's config (`profile`, else config.toml's
`profile =`: `$CODEX_HOME/NAME.config.toml`, then `[profiles.NAME]`), and config.toml's
`model =`. With none, Codex picks its built-in default, which no file names. After a
session, its rollout file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-THREAD.jsonl`) holds
the model each turn ran on (`turn_context`): that record wins.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CONFIG_FILE = "config.toml"
MODEL_KEY = "model"
PROFILE_KEY = "profile"
_MODEL_FLAGS = ("--model", "-m")


def codex_home(env: Mapping[str, str]) -> Path:
    """`$CODEX_HOME`, else `~/.codex` of *env*'s HOME."""
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or "~") / ".codex")
    return Path(home).expanduser()


def _toml(path: Path) -> dict[str, Any]:
    """The TOML file at *path* as data; {} when it is missing or cannot be read (a FIFO
    there is not opened: the read would wait for a writer)."""
    import tomllib

    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _flag_value(args: Sequence[object]) -> str | None:
    """The model `--model X`, `--model=X` or `-m X` among codex's *args*, the last one."""
    found = None
    for index, arg in enumerate(args):
        word = str(arg)
        if word in _MODEL_FLAGS and index + 1 < len(args):
            found = _text(str(args[index + 1])) or found
        elif word.startswith("--model="):
            found = _text(word.removeprefix("--model=")) or found
    return found


def configured_model(options: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The model a Codex session with *options* runs on, as they and its config files name
    it (see the module's docstring); None when Codex would take its built-in default."""
    extra = options.get("extra_args")
    config = options.get("config")
    for given in (
        _text(options.get(MODEL_KEY)),
        _flag_value(extra) if isinstance(extra, list) else None,
        _text(config.get(MODEL_KEY)) if isinstance(config, Mapping) else None,
    ):
        if given is not None:
            return given
    home = codex_home(env)
    main = _toml(home / CONFIG_FILE)
    profile = _text(options.get(PROFILE_KEY)) or _text(main.get(PROFILE_KEY))
    if profile is not None:
        tables = main.get("profiles")
        table = tables.get(profile) if isinstance(tables, dict) else None
        for layer in (_toml(home / f"{profile}.{CONFIG_FILE}"), table):
            model = _text(layer.get(MODEL_KEY)) if isinstance(layer, dict) else None
            if model is not None:
                return model
    return _text(main.get(MODEL_KEY))


def rollout_file(thread: str, env: Mapping[str, str]) -> Path | None:
    """The rollout file Codex keeps of the session *thread*, or None."""
    files = sorted(codex_home(env).glob(f"sessions/*/*/*/rollout-*-{thread}.jsonl"))
    return files[-1] if files else None


def recorded_model(thread: str, env: Mapping[str, str]) -> str | None:
    """The model the last turn of session *thread* ran on, as its rollout file says."""
    path = rollout_file(thread, env)
    if path is None or not path.is_file():
        return None
    model = None
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if '"turn_context"' not in line:
                    continue
                try:
                    data = json.loads(line)
                except ValueError:
                    continue
                payload = data.get("payload") if isinstance(data, dict) else None
                if isinstance(payload, dict) and data.get("type") == "turn_context":
                    model = _text(payload.get(MODEL_KEY)) or model
    except OSError:
        return None
    return model


def session_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment a session ran in: this process's, with the request's *env* over it."""
    return {**os.environ, **(env or {})}
