"""Load the user's settings from defaults, system locale, file, environment and flags.

Layers, lowest first: built-in defaults, the system locale (only for
``languages``), the TOML file, ``ANNOUNCER_*`` environment variables, then
command-line flags. Each layer is validated on its own against
``UserSettings`` (pydantic), so a problem is reported against the place it came
from: the file and line, the variable, or the flag. A bad value is dropped and
the next layer down is used for that field; a line that is not valid TOML is
skipped and the rest of the file still counts. Nothing here ever stops start-up.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import difflib
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from announcer.config.paths import config_path
from announcer.engine.settings import SavedProducer, UserSettings
from announcer.i18n.tags import normalize_tag
from announcer.i18n.translate import N_, catalog_language, translator

logger = logging.getLogger("announcer.config")

ENV_PREFIX = "ANNOUNCER_"
# Flag spellings that differ from the field names (argparse dests).
FLAG_ALIASES = {"language": "languages", "rate": "rate_wpm", "pace": "pace_wpm", "voice": "voices"}
# Flags whose option string is not their dest spelled with dashes.
FLAG_OPTIONS = {"backend": "--speech", "question_reminder_seconds": "--reminder-seconds"}
_NONE_WORDS = {"", "none", "null", "default", "unset"}
# What "Using ... instead" says for an optional setting left unset.
NO_VALUE = N_("the engine's default")
_MAX_TOML_REPAIRS = 50


@dataclass
class ConfigProblem:
    """One thing wrong with the user's settings, and where it is."""

    location: str  # "/home/ada/.config/announcer/config.toml, line 4", "ANNOUNCER_PITCH", "--pitch"
    field: str  # dotted setting name; "" when the problem is not about one setting
    message: str  # what is wrong, in the validator's words
    used: str | None = None  # what is used instead, filled in once all layers are merged
    explained: bool = False  # the message already says what happens to the value
    # The message as an English template and its values, so it can be said in any language.
    template: str | None = None
    # dataclasses.field by its full name: the ``field`` attribute above shadows it in this body.
    values: dict[str, str] = dataclasses.field(default_factory=dict)

    def problem_text(self, language: str = "en") -> str:
        """What is wrong, translated where our catalog has the words (validator text stays)."""
        if self.template is None:
            return self.message
        t = translator(language)
        values = dict(self.values)
        if "problem" in values and "problem_template" in values:
            values["problem"] = t.gettext(values.pop("problem_template")).format(**values)
        values.pop("problem_template", None)
        return t.gettext(self.template).format(**values)

    def describe(self, language: str = "en") -> str:
        """One sentence for the user, in their language where a catalog has it."""
        t = translator(language)
        problem = self.problem_text(language)
        if self.field and self.explained:
            return t.gettext("{location}: setting '{field}': {problem}.").format(
                location=self.location, field=self.field, problem=problem
            )
        if self.field and self.used is not None:
            used = t.gettext(NO_VALUE) if self.used == NO_VALUE else self.used
            return t.gettext(
                "{location}: setting '{field}': {problem}. Using {value} instead."
            ).format(location=self.location, field=self.field, problem=problem, value=used)
        if self.field:
            return t.gettext("{location}: setting '{field}': {problem}. It is ignored.").format(
                location=self.location, field=self.field, problem=problem
            )
        return t.gettext("{location}: {problem}.").format(location=self.location, problem=problem)

    def __str__(self) -> str:
        return self.describe("en")


def _problem(
    location: str, setting: str, template: str, *, explained: bool = False, **values: str
) -> ConfigProblem:
    """A problem whose message is one of our own templates (translated when described)."""
    return _problem_from(location, setting, template, values, explained=explained)


def _problem_from(
    location: str,
    setting: str,
    template: str,
    values: Mapping[str, str],
    *,
    explained: bool = False,
) -> ConfigProblem:
    """:func:`_problem` for values gathered in a mapping (a validator's, with any keys)."""
    return ConfigProblem(
        location, setting, template.format(**values), None, explained, template, dict(values)
    )


@dataclass
class LoadedConfig:
    """The settings in force, where each top-level field came from, and what was wrong."""

    settings: UserSettings
    path: Path
    problems: list[ConfigProblem] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def ui_language(self) -> str:
        """The catalog language for messages about these settings."""
        return catalog_language(self.settings.languages)


# --- the TOML file -----------------------------------------------------------------------------

_TABLE_LINE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY_PART = r"(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)"
_KEY_LINE = re.compile(rf"^\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")


def _split_key(text: str) -> tuple[str, ...]:
    parts = re.findall(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)", text)
    return tuple(a or b or c for a, b, c in parts)


def locate_key(lines: list[str], path: tuple[str, ...]) -> int | None:
    """The 1-based line where the setting at ``path`` (or its nearest parent) is written."""
    for length in range(len(path), 0, -1):
        found = _locate_exact(lines, path[:length])
        if found is not None:
            return found
    return None


def _locate_exact(lines: list[str], path: tuple[str, ...]) -> int | None:
    table: tuple[str, ...] = ()
    best: int | None = None
    for number, line in enumerate(lines, start=1):
        header = _TABLE_LINE.match(line)
        if header:
            table = _split_key(header.group(1))
            if table == path[: len(table)] and len(table) == len(path):
                return number
            continue
        key = _KEY_LINE.match(line)
        if not key:
            continue
        full = table + _split_key(key.group(1))
        if full == path:
            return number
        if full == path[: len(full)] and best is None:
            best = number  # an inline table or array holding the setting
        if path == full[: len(path)] and best is None:
            best = number  # a dotted key inside the setting
    return best


def _key_on_line(lines: list[str], number: int) -> str:
    if 1 <= number <= len(lines):
        key = _KEY_LINE.match(lines[number - 1])
        if key:
            return ".".join(_split_key(key.group(1)))
    return ""


def _toml_message(error: Exception) -> str:
    return re.sub(r"\s+at line \d+ col \d+\s*$", "", str(error)).strip() or type(error).__name__


def read_file(path: Path, problems: list[ConfigProblem]) -> tuple[dict[str, Any], list[str]]:
    """The file's data as plain Python, skipping lines that are not TOML; its lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except UnicodeDecodeError:
        problems.append(_problem(str(path), "", N_("the file is not UTF-8 text; it is ignored")))
        return {}, []
    except OSError as exc:
        template = N_("it cannot be read ({reason}); it is ignored")
        problems.append(_problem(str(path), "", template, reason=str(exc.strerror)))
        return {}, []
    import tomlkit  # only when there is a file: a first run (or a test's none.toml) needs none
    import tomlkit.exceptions

    lines = text.splitlines()
    work = list(lines)
    for _ in range(_MAX_TOML_REPAIRS):
        try:
            data: dict[str, Any] = tomlkit.parse("\n".join(work)).unwrap()
            return data, lines
        except tomlkit.exceptions.ParseError as exc:
            number = exc.line
            if not 1 <= number <= len(work) or not work[number - 1].strip():
                break
            problems.append(
                _problem(
                    f"{path}, line {number}",
                    _key_on_line(work, number),
                    N_("not valid TOML ({error}); the line is skipped"),
                    explained=True,
                    error=_toml_message(exc),
                )
            )
            work[number - 1] = ""
        except tomlkit.exceptions.TOMLKitError as exc:
            template = N_("not valid TOML ({error}); the file is ignored")
            problems.append(_problem(str(path), "", template, error=_toml_message(exc)))
            return {}, lines
    problems.append(_problem(str(path), "", N_("not valid TOML; the file is ignored")))
    return {}, lines


# --- validation of one layer ---------------------------------------------------------------------


def _field_names(loc: tuple[str, ...]) -> list[str]:
    model: type[BaseModel] = UserSettings
    if len(loc) > 1 and loc[0] == "filters":
        model = UserSettings.model_fields["filters"].annotation  # type: ignore[assignment]
        return list(model.model_fields)
    if len(loc) > 2 and loc[0] == "producers":
        return ["source", "token_env"]
    return list(model.model_fields)


def _removal_path(data: Mapping[str, Any], loc: tuple[str, ...]) -> tuple[str, ...]:
    """The smallest piece of the layer to drop for an error at ``loc``."""
    top = loc[:1]
    if len(loc) >= 2 and isinstance(data.get(loc[0]), dict):
        return loc[:2]
    return top


def _drop(data: dict[str, Any], path: tuple[str, ...]) -> None:
    container: Any = data
    for part in path[:-1]:
        if not isinstance(container, dict) or part not in container:
            return
        container = container[part]
    if isinstance(container, dict):
        container.pop(path[-1], None)


def _error_message(error: Mapping[str, Any], loc: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """Our template for a validation error and its values; pydantic's own words stay English."""
    if error.get("type") == "extra_forbidden":
        suggestions = difflib.get_close_matches(loc[-1], _field_names(loc), n=1)
        if suggestions:
            return N_("unknown setting (did you mean '{suggestion}'?)"), {
                "suggestion": suggestions[0]
            }
        return N_("unknown setting"), {}
    message = str(error.get("msg", "invalid value"))
    value = error.get("input")
    if error.get("type") != "missing" and not isinstance(value, dict | list):
        return N_("{message} (got {value})"), {"message": message, "value": repr(value)}
    return "{message}", {"message": message}


def validate_layer(
    data: Mapping[str, Any],
    where: Callable[[tuple[str, ...]], str],
    problems: list[ConfigProblem],
) -> dict[str, Any]:
    """``data`` without the values ``UserSettings`` rejects; each rejection becomes a problem."""
    layer: dict[str, Any] = copy.deepcopy(dict(data))
    for _ in range(100):
        try:
            UserSettings.model_validate(layer)
        except ValidationError as exc:
            removed: set[tuple[str, ...]] = set()
            for error in exc.errors():
                loc = tuple(str(part) for part in error["loc"])
                if not loc:
                    continue
                path = _removal_path(layer, loc)
                if path in removed:
                    continue
                removed.add(path)
                template, values = _error_message(error, loc)
                setting = ".".join(loc)
                if len(path) > 1 and path != loc:
                    # The whole table goes: say so, around the validator's message.
                    values = {
                        **values,
                        "problem_template": template,
                        "problem": "",
                        "table": ".".join(path),
                    }
                    values["problem"] = template.format(**values)
                    problems.append(
                        _problem_from(
                            where(loc),
                            setting,
                            N_("{problem}; so [{table}] is ignored"),
                            values,
                            explained=True,
                        )
                    )
                else:
                    problems.append(_problem_from(where(loc), setting, template, values))
                _drop(layer, path)
            if not removed:
                break
            continue
        break
    languages = layer.get("languages")
    if isinstance(languages, list):
        kept: list[str] = []
        for index, tag in enumerate(languages):
            normal = normalize_tag(tag)
            if normal is None:
                loc = ("languages", str(index))
                problems.append(
                    _problem(
                        where(loc),
                        "languages",
                        N_("{tag} is not a BCP 47 language tag"),
                        tag=repr(tag),
                    )
                )
            elif normal not in kept:
                kept.append(normal)
        if kept:
            layer["languages"] = kept
        else:
            layer.pop("languages")
    return layer


# --- environment, flags and system locale --------------------------------------------------------


def _split_list(text: str) -> list[str]:
    return [item for item in re.split(r"[,\s]+", text.strip()) if item]


def _split_pairs(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in re.split(r"\s*,\s*", text.strip()):
        if not item:
            continue
        key, sep, value = item.partition("=")
        pairs[key.strip()] = value.strip() if sep else ""
    return pairs


def _is_optional(annotation: Any) -> bool:
    return type(None) in get_args(annotation)


def env_variable(name: str, sub: str | None = None) -> str:
    """``verbosity`` -> ``ANNOUNCER_VERBOSITY``, ``filters.exclude`` -> ``..._FILTERS_EXCLUDE``."""
    return ENV_PREFIX + (name if sub is None else f"{name}_{sub}").upper()


def _env_value(annotation: Any, raw: str) -> Any:
    origin = get_origin(annotation)
    if origin is list:
        return _split_list(raw)
    if origin is dict:
        return _split_pairs(raw)
    if _is_optional(annotation) and raw.strip().lower() in _NONE_WORDS:
        return None
    return raw.strip()


def env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """Settings from ``ANNOUNCER_*`` variables and the variable behind each."""
    data: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    for name, info in UserSettings.model_fields.items():
        if name == "producers":
            continue  # saved producers are tables; they only live in the file
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for sub, sub_info in annotation.model_fields.items():
                variable = env_variable(name, sub)
                if variable in env:
                    data.setdefault(name, {})[sub] = _env_value(sub_info.annotation, env[variable])
                    names[(name, sub)] = variable
            continue
        variable = env_variable(name)
        if variable not in env and name == "languages" and ENV_PREFIX + "LANGUAGE" in env:
            variable = ENV_PREFIX + "LANGUAGE"
        if variable in env:
            data[name] = _env_value(annotation, env[variable])
            names[(name,)] = variable
    return data, names


def flag_layer(
    flags: Mapping[str, Any] | argparse.Namespace | None,
) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """Settings from parsed command-line flags; None means "not given"."""
    if flags is None:
        return {}, {}
    given = vars(flags) if isinstance(flags, argparse.Namespace) else dict(flags)
    data: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    fields = UserSettings.model_fields
    for key, value in given.items():
        name = FLAG_ALIASES.get(key, key)
        if value is None or name not in fields or name == "producers":
            continue
        annotation = fields[name].annotation
        if isinstance(value, str) and get_origin(annotation) in (list, dict):
            value = _env_value(annotation, value)
        elif isinstance(value, list | tuple) and get_origin(annotation) is dict:
            merged: dict[str, str] = {}
            for item in value:
                merged.update(_split_pairs(str(item)))
            value = merged
        elif isinstance(value, list | tuple) and name == "languages":
            value = [tag for item in value for tag in _split_list(str(item))]
        data[name] = value
        names[(name,)] = FLAG_OPTIONS.get(key, "--" + key.replace("_", "-"))
    return data, names


def system_languages(env: Mapping[str, str]) -> list[str]:
    """The user's languages from ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` (POSIX)."""
    primary = ""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(variable):
            primary = env[variable]
            break
    candidates: list[str] = []
    if primary.split(".")[0] not in ("C", "POSIX") and env.get("LANGUAGE"):
        candidates.extend(env["LANGUAGE"].split(":"))  # GNU gettext ignores LANGUAGE under C
    candidates.append(primary)
    found: list[str] = []
    for raw in candidates:
        base = raw.split(".")[0].split("@")[0]
        if not base or base in ("C", "POSIX"):
            continue
        tag = normalize_tag(base)
        if tag is not None and tag not in found:
            found.append(tag)
    return found


# --- merging -------------------------------------------------------------------------------------


def _merge(into: dict[str, Any], layer: Mapping[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def _shown(value: Any) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, BaseModel):
        return repr(value.model_dump())
    return repr(value)


def _line_of(problem: ConfigProblem) -> int:
    found = re.search(r", line (\d+)$", problem.location)
    return int(found.group(1)) if found else 0


def load_config(
    path: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | argparse.Namespace | None = None,
) -> LoadedConfig:
    """All layers merged, with every problem found and the source of each field."""
    environ = os.environ if env is None else env
    file_path = path if path is not None else config_path(environ)
    problems: list[ConfigProblem] = []
    sources: dict[str, str] = {}
    merged: dict[str, Any] = {}

    system = system_languages(environ)
    if system:
        merged["languages"] = system
        sources["languages"] = "system locale"

    file_problems: list[ConfigProblem] = []
    file_data, lines = read_file(file_path, file_problems)

    def in_file(loc: tuple[str, ...]) -> str:
        number = locate_key(lines, loc)
        return f"{file_path}, line {number}" if number else str(file_path)

    file_layer = validate_layer(file_data, in_file, file_problems)
    problems.extend(sorted(file_problems, key=_line_of))
    _merge(merged, file_layer)
    for key in file_layer:
        number = locate_key(lines, (key,))
        sources[key] = f"{file_path.name} line {number}" if number else file_path.name

    env_data, env_names = env_layer(environ)

    def in_env(loc: tuple[str, ...]) -> str:
        return env_names.get(loc[:2], env_names.get(loc[:1], "environment"))

    env_valid = validate_layer(env_data, in_env, problems)
    _merge(merged, env_valid)
    for key in env_valid:
        sources[key] = ", ".join(v for k, v in env_names.items() if k[0] == key)

    flag_data, flag_names = flag_layer(flags)

    def in_flags(loc: tuple[str, ...]) -> str:
        return flag_names.get(loc[:1], "command line")

    flag_valid = validate_layer(flag_data, in_flags, problems)
    _merge(merged, flag_valid)
    for key in flag_valid:
        sources[key] = flag_names.get((key,), "command line")

    final = validate_layer(merged, lambda loc: "combined settings", problems)
    settings = UserSettings.model_validate(final)
    for problem in problems:
        if problem.field:
            top = problem.field.split(".")[0]
            if top in UserSettings.model_fields and "." not in problem.field:
                problem.used = _shown(getattr(settings, top))
    return LoadedConfig(settings=settings, path=file_path, problems=problems, sources=sources)


def _stderr_report(message: str) -> None:
    print(f"announcer: {message}", file=sys.stderr)


def load_settings(
    path: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | argparse.Namespace | None = None,
    report: Callable[[str], None] | None = _stderr_report,
) -> UserSettings:
    """The settings in force. Problems are logged and passed to ``report`` (stderr by default).

    Never raises for anything in the file, the environment or the flags.
    """
    loaded = load_config(path, env=env, flags=flags)
    language = loaded.ui_language
    for problem in loaded.problems:
        message = problem.describe(language)
        logger.warning("%s", problem.describe("en"))
        if report is not None:
            report(message)
    return loaded.settings


def find_producer(settings: UserSettings, name: str) -> SavedProducer | None:
    """The saved producer called ``name`` (case-insensitive), or None."""
    if name in settings.producers:
        return settings.producers[name]
    folded = {key.casefold(): value for key, value in settings.producers.items()}
    return folded.get(name.casefold())


def resolve_source(source: str, settings: UserSettings) -> tuple[str, str | None]:
    """``announcer listen NAME``: a saved producer's (source, token_env); anything else as given.

    A name wins only when no file of that name exists, so ``listen session.jsonl``
    still replays that file even if a producer is called ``session.jsonl``.
    """
    saved = find_producer(settings, source)
    if saved is None or Path(source).exists():
        return source, None
    return saved.source, saved.token_env


def producer_names(settings: UserSettings) -> Iterable[str]:
    """Saved producer names, sorted, for help text and completion."""
    return sorted(settings.producers)
