"""``announcer config path|show|edit|reset``: find, read, edit or start over with the settings."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from typing import Any

import tomlkit

from announcer.config import (
    LoadedConfig,
    add_settings_flags,
    config_path,
    ensure_file,
    load_config,
    reset_file,
)
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language, translator


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "config",
        help="show or change where and how announcer keeps your settings",
        description="Your settings live in a TOML file; "
        "flags and ANNOUNCER_* variables override it.",
    )
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION")
    path = actions.add_parser("path", help="print where the settings file is")
    path.set_defaults(func=_path)
    show = actions.add_parser("show", help="print the settings in force and where each came from")
    add_settings_flags(show)
    show.set_defaults(func=_show)
    edit = actions.add_parser("edit", help="open the settings file in your editor, then check it")
    edit.add_argument("--editor", default=None, help="editor command (default: $VISUAL, $EDITOR)")
    edit.set_defaults(func=_edit)
    reset = actions.add_parser("reset", help="start again from the documented default file")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(func=_reset)
    parser.set_defaults(func=_show_help(parser))


def _show_help(parser: argparse.ArgumentParser) -> Any:
    def run(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return run


def _language(loaded: LoadedConfig | None = None) -> str:
    if loaded is not None:
        return loaded.ui_language
    return catalog_language(load_config().settings.languages)


def _report(loaded: LoadedConfig) -> None:
    for problem in loaded.problems:
        print(f"announcer: {problem.describe(loaded.ui_language)}", file=sys.stderr)


def _path(args: argparse.Namespace) -> int:
    path = config_path()
    print(path)
    if not path.exists():
        t = translator(_language())
        print(t.gettext("(No settings file yet: the defaults are in use.)"), file=sys.stderr)
    return 0


def _toml_value(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {k: _toml_value(v) for k, v in value.items()}
    return value


def render_settings(loaded: LoadedConfig) -> str:
    """The settings in force as TOML, each field commented with where its value came from."""
    t = translator(loaded.ui_language)
    document = tomlkit.document()
    document.add(
        tomlkit.comment(t.gettext("Settings in force; file: {path}").format(path=loaded.path))
    )
    tables: list[tuple[str, Any]] = []
    for name in UserSettings.model_fields:
        value = _toml_value(getattr(loaded.settings, name))
        source = loaded.sources.get(name, t.gettext("default"))
        if isinstance(value, dict):
            tables.append((name, value))
            continue
        if value is None:
            document.add(
                tomlkit.comment(
                    t.gettext("{name} is not set ({source})").format(name=name, source=source)
                )
            )
            continue
        item = tomlkit.item(value)
        item.comment(source)
        document.add(name, item)
    for name, value in tables:
        table = tomlkit.table(is_super_table=name == "producers")
        for key, item in value.items():
            table[key] = item
        document.add(tomlkit.nl())
        document.add(tomlkit.comment(loaded.sources.get(name, t.gettext("default"))))
        document.add(name, table)
    text = document.as_string()
    return text if text.endswith("\n") else text + "\n"


def _show(args: argparse.Namespace) -> int:
    loaded = load_config(getattr(args, "config", None), flags=args)
    sys.stdout.write(render_settings(loaded))
    _report(loaded)
    return 0


def _editor_command(explicit: str | None) -> list[str] | None:
    for candidate in (explicit, os.environ.get("VISUAL"), os.environ.get("EDITOR")):
        if candidate:
            return shlex.split(candidate)
    for fallback in ("sensible-editor", "editor", "nano", "vi", "notepad"):
        found = shutil.which(fallback)
        if found:
            return [found]
    return None


def _edit(args: argparse.Namespace) -> int:
    path = ensure_file()
    t = translator(_language())
    command = _editor_command(args.editor)
    if command is None:
        print(
            t.gettext("No editor found. Set EDITOR, or edit this file: {path}").format(path=path),
            file=sys.stderr,
        )
        return 1
    status = subprocess.call([*command, str(path)])
    if status != 0:
        print(
            t.gettext("The editor exited with status {status}.").format(status=status),
            file=sys.stderr,
        )
    loaded = load_config(path)
    _report(loaded)
    if loaded.problems:
        t = translator(loaded.ui_language)
        print(
            t.gettext(
                "Run 'announcer config edit' again to fix the problems above; "
                "until then the defaults are used for those settings."
            ),
            file=sys.stderr,
        )
        return 1
    print(t.gettext("Settings file is valid: {path}").format(path=path))
    return 0


def _reset(args: argparse.Namespace) -> int:
    path = config_path()
    t = translator(_language())
    if path.exists() and not args.yes:
        if not sys.stdin.isatty():
            print(
                t.gettext(
                    "Not resetting without confirmation: run 'announcer config reset "
                    "--yes' to replace {path}."
                ).format(path=path),
                file=sys.stderr,
            )
            return 1
        answer = input(
            t.gettext(
                "Replace {path} with the default settings? A copy is kept. Type yes to confirm: "
            ).format(path=path)
        )
        if answer.strip().casefold() not in {"yes", "y", t.gettext("yes").casefold()}:
            print(t.gettext("Nothing changed."))
            return 1
    try:
        backup = reset_file(path)
    except ValueError as exc:  # ConfigError: the disk is full, the folder is read-only ...
        print(f"announcer config reset: {exc}", file=sys.stderr)
        return 1
    if backup is not None:
        print(
            t.gettext("Settings reset to defaults; your old file is at {backup}").format(
                backup=backup
            )
        )
    else:
        print(t.gettext("Created the default settings file: {path}").format(path=path))
    return 0
