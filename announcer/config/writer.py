"""Write settings back to the TOML file without losing the user's comments or layout.

tomlkit edits the parsed document in place, so comments, blank lines, key
order and quoting survive; a value is validated against ``UserSettings``
before anything is written, and the file is replaced atomically. A file that
is not valid TOML is never overwritten: the user's text matters more than the
setting, so the write is refused with a sentence saying how to fix it.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from pydantic import BaseModel, ValidationError
from tomlkit.container import Container
from tomlkit.items import InlineTable, Table

from announcer.config.loader import load_config
from announcer.config.paths import config_path
from announcer.config.template import TEMPLATE
from announcer.engine.settings import UserSettings
from announcer.i18n.tags import normalize_tag

__all__ = ["ConfigError", "ensure_file", "reset_file", "save_setting", "save_settings"]


class ConfigError(ValueError):
    """A setting could not be saved; the message says which and why."""


def _plain(value: Any) -> Any:
    """Pydantic models and tuples as TOML-ready dicts and lists; None stays None (= remove)."""
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(exclude_none=True))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# Why a write failed, in words (the rest say the system's own sentence).
_WHY_NOT_WRITTEN = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "your disk quota is used up",
    errno.EROFS: "the disk is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


def _cannot_write(path: Path, exc: OSError) -> ConfigError:
    why = _WHY_NOT_WRITTEN.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    return ConfigError(f"could not write {path}: {why}; the file was not changed")


def _atomic_write(path: Path, text: str | bytes) -> None:
    """Write a new file beside ``path`` and swap it in only once it is safely on disk.

    Until then the old file stays as it was; whatever fails (a full disk, a read-only
    folder), no temporary file is left behind and ConfigError says why in words.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())  # a full disk may only say so here
        if path.exists():
            shutil.copymode(path, temporary)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise _cannot_write(path, exc) from None
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable, where the platform allows it."""
    with contextlib.suppress(OSError, AttributeError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _open_document(path: Path) -> tomlkit.TOMLDocument:
    if not path.exists():
        return tomlkit.parse(TEMPLATE)
    text = path.read_text(encoding="utf-8")
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(
            f"{path} is not valid TOML ({exc}); nothing was written. Fix it with "
            "'announcer config edit' or start again with 'announcer config reset'."
        ) from exc


def _check(name: str, value: Any) -> Any:
    """The value as it will be stored, or ConfigError naming the setting and the rule."""
    parts = name.split(".")
    top = parts[0]
    if top not in UserSettings.model_fields:
        close = difflib.get_close_matches(top, list(UserSettings.model_fields), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"'{name}' is not a setting{hint}")
    plain = _plain(value)
    if top == "languages" and isinstance(plain, list):
        normalised = [normalize_tag(tag) if isinstance(tag, str) else None for tag in plain]
        bad = [tag for tag, norm in zip(plain, normalised, strict=True) if norm is None]
        if bad:
            raise ConfigError(f"setting 'languages': {bad[0]!r} is not a BCP 47 language tag")
        plain = normalised
    if plain is None:
        return None  # removing a key brings back its default
    candidate: Any = plain
    for part in reversed(parts[1:]):
        candidate = {part: candidate}
    try:
        UserSettings.model_validate({top: candidate})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"setting '{where or name}': {error['msg']} (got {plain!r})") from exc
    return plain


def _assign(container: Container | Table | InlineTable, key: str, value: Any) -> None:
    """Set ``key``; tables are updated key by key so comments inside them survive."""
    if value is None:
        if key in container:
            del container[key]
        return
    existing = container.get(key)
    if isinstance(value, dict) and isinstance(existing, Table | InlineTable):
        for old in [k for k in existing if k not in value]:
            del existing[old]
        for sub_key, sub_value in value.items():
            _assign(existing, sub_key, sub_value)
        return
    container[key] = value


def _apply(document: tomlkit.TOMLDocument, name: str, value: Any) -> None:
    parts = name.split(".")
    container: Any = document
    for part in parts[:-1]:
        if part not in container:
            if value is None:
                return
            container[part] = tomlkit.table()
        container = container[part]
    _assign(container, parts[-1], value)


def _place_after_commented_default(text: str, names: list[str]) -> str:
    """Move new top-level keys next to their commented-out template line, where the docs are."""
    lines = text.splitlines()
    for name in names:
        real = [i for i, line in enumerate(lines) if re.match(rf"^{re.escape(name)}\s*=", line)]
        hint = [i for i, line in enumerate(lines) if re.match(rf"^#\s*{re.escape(name)}\s*=", line)]
        if len(real) != 1 or not hint:
            continue
        first_table = next(
            (i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines)
        )
        if hint[0] > first_table or real[0] == hint[0] + 1:
            continue
        line = lines.pop(real[0])
        target = hint[0] + 1 if hint[0] < real[0] else hint[0]
        lines.insert(target, line)
    return "\n".join(lines) + "\n"


def _write(path: Path, changes: Mapping[str, Any]) -> None:
    document = _open_document(path)
    had = set(document)
    checked = {name: _check(name, value) for name, value in changes.items()}
    for name, value in checked.items():
        _apply(document, name, value)
    text = document.as_string()
    new_top = [n for n in checked if "." not in n and n not in had and checked[n] is not None]
    text = _place_after_commented_default(text, new_top)
    try:
        tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError:
        text = document.as_string()
    _atomic_write(path, text)


def save_setting(name: str, value: Any, path: Path | None = None) -> Path:
    """Write one setting (``verbosity``, ``voices.yo``, ``producers.bot``) to the file.

    ``None`` removes the key so the default applies again. Raises ConfigError
    for an unknown setting, an invalid value, or a file that is not valid TOML.
    """
    target = path if path is not None else config_path()
    _write(target, {name: value})
    return target


def save_settings(
    settings: UserSettings, path: Path | None = None, *, base: UserSettings | None = None
) -> list[str]:
    """Write the top-level fields where ``settings`` differs from ``base``; returns their names.

    ``base`` is what the settings screen started from; by default the file
    and defaults alone, so values that came from flags or the environment
    are not made permanent unless the user changed them.
    """
    target = path if path is not None else config_path()
    if base is None:
        # The file, defaults and system locale: not this run's ANNOUNCER_* variables.
        quiet = {k: v for k, v in os.environ.items() if not k.startswith("ANNOUNCER_")}
        base = load_config(target, env=quiet).settings
    changed = {
        name: getattr(settings, name)
        for name in UserSettings.model_fields
        if _plain(getattr(settings, name)) != _plain(getattr(base, name))
    }
    if changed:
        _write(target, changed)
    return list(changed)


def ensure_file(path: Path | None = None) -> Path:
    """Create the documented settings file if there is none; return its path."""
    target = path if path is not None else config_path()
    if not target.exists():
        _atomic_write(target, TEMPLATE)
    return target


def reset_file(path: Path | None = None) -> Path | None:
    """Replace the file with the documented template; the old one is kept as ``.bak``.

    The copy is written first and the file is replaced only after that, atomically: on a
    full disk the user's file stays exactly as it was (ConfigError says why).
    Returns the backup's path, or None when there was no file.
    """
    target = path if path is not None else config_path()
    backup: Path | None = None
    if target.exists():
        backup = target.with_name(target.name + ".bak")
        try:
            old = target.read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"could not read {target}: {exc.strerror or exc}; nothing was changed"
            ) from None
        _atomic_write(backup, old)
    _atomic_write(target, TEMPLATE)
    return backup
