"""ACP's wire shapes read as plain values: content blocks, diffs, options, modes, settings.

Pure functions over the JSON objects an ACP agent sends (camelCase, as on the wire), used
by every room of the mapping (:mod:`announcer.formats.acp`); nothing here keeps state.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from announcer.formats.base import JsonObject, get_str
from announcer.formats.speakable import clip
from announcer.i18n.translate import translator

_ALLOW_ONCE, _ALLOW_ALWAYS, _REJECT_ONCE, _REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One of the agent's session settings (ACP ``configOptions``): model, mode, effort..."""

    id: str
    name: str
    category: str
    current: str
    choices: tuple[tuple[str, str], ...] = ()  # (value, name) of a select

    def said_value(self, value: str | None = None) -> str:
        value = self.current if value is None else value
        return next((name for v, name in self.choices if v == value), value)

    def find(self, wanted: str) -> str | None:
        """The value the user means by ``wanted``: a value or a name, any case."""
        folded = " ".join(wanted.split()).casefold()
        for value, name in self.choices:
            if folded in (value.casefold(), name.casefold()):
                return value
        if self.choices == (("true", "on"), ("false", "off")):
            return {"on": "true", "off": "false", "yes": "true", "no": "false"}.get(folded)
        return None


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if text and text[-1] not in ".!?…:":
        text += "."
    return text[:1].upper() + text[1:]


def _content_text(content: object) -> str | None:
    """The text of one ContentBlock; None for blocks that are not text."""
    if isinstance(content, dict) and content.get("type") == "text":
        text = content.get("text")
        return text if isinstance(text, str) else ""
    return None


def _content_text_all(content: object) -> str:
    """Text of a tool call's content list (``{"type": "content", "content": block}``)."""
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "content":
            text = _content_text(item.get("content"))
            if text:
                parts.append(" ".join(text.split()))
    return " ".join(parts)


def _content_text_all_lines(content: object) -> list[str]:
    """The lines of a tool call's text content, as written."""
    lines: list[str] = []
    if isinstance(content, list):
        for item in content[:20]:
            if isinstance(item, dict) and item.get("type") == "content":
                text = _content_text(item.get("content"))
                if text:
                    lines += text.splitlines()[:50]
    return lines


def _review_fields(lines: list[str]) -> dict[str, str]:
    """``Status: Approved`` / ``Action: ...`` / ``Rationale: ...`` lines of a review."""
    found: dict[str, str] = {}
    for line in lines:
        key, colon, value = line.partition(":")
        if colon and key.strip().casefold() in ("status", "action", "rationale"):
            found.setdefault(key.strip().casefold(), " ".join(value.split()))
    return found


def _same_words(one: str, other: str) -> bool:
    return (
        " ".join(one.split()).rstrip(".").casefold()
        == " ".join(other.split()).rstrip(".").casefold()
    )


def _permission_reason(params: JsonObject, call: JsonObject, title: str) -> str:
    """Why the agent asks: its description (v2), ``_meta`` justification, or its text."""
    candidates: list[object] = [params.get("description")]
    for meta in (params.get("_meta"), call.get("_meta")):
        if isinstance(meta, dict):
            prompt = meta.get("permission_prompt")
            if isinstance(prompt, dict):
                candidates.append(prompt.get("description"))
            candidates += [meta.get("justification"), meta.get("reason")]
    candidates.append(_content_text_all(call.get("content")))
    for candidate in candidates:
        if isinstance(candidate, str):
            text = " ".join(candidate.split())
            text = text.removeprefix("Reason:").strip()
            if text and text != title and not text.startswith("```"):
                return text
    return ""


def _is_deletion(item: dict[str, Any]) -> bool:
    """A diff that deletes its file: marked so (codex-acp ``_meta.kind``), or all text gone."""
    meta = item.get("_meta")
    if isinstance(meta, dict) and meta.get("kind") == "delete":
        return True
    old, new = item.get("oldText"), item.get("newText")
    return (
        isinstance(old, str)
        and bool(old)
        and new == ""
        and (not isinstance(meta, dict) or meta.get("kind") in (None, "delete"))
    )


def _deleted_files(content: object, cwd: str) -> list[str]:
    found: list[str] = []
    if isinstance(content, list):
        for item in content[:100]:
            if isinstance(item, dict) and item.get("type") == "diff" and _is_deletion(item):
                path = get_str(item, "path")
                if path:
                    found.append(_relative(path, cwd))
    return found


def _relative_text(text: str, cwd: str) -> str:
    """A title with the working folder's absolute paths made relative ("Read src/a.py")."""
    if not cwd or not posixpath.isabs(cwd) or cwd == "/":
        return text
    base = cwd.rstrip("/")
    return text.replace(base + "/", "").replace(f" {base} ", " . ")


def _exit_code(raw: object) -> int | None:
    """The exit code a command's raw output names (``exitCode``, ``exit_code``), if any."""
    if not isinstance(raw, dict):
        return None
    for key in ("exitCode", "exit_code", "code"):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return value
    return None


def _first_error_line(raw: object, reason: str) -> str:
    """The first line that says what went wrong: stderr first, then the reported text."""
    texts = []
    if isinstance(raw, dict):
        texts += [raw.get(k) for k in ("stderr", "formatted_output", "aggregated_output", "output")]
    texts.append(reason)
    for text in texts:
        if isinstance(text, str):
            for line in text.splitlines():
                if line.strip() and not line.strip().startswith("```"):
                    return clip(line.strip(), 200)
    return "?"


def _relative(path: str, cwd: str) -> str:
    if cwd and posixpath.isabs(path) and posixpath.isabs(cwd):
        relative = posixpath.relpath(path, cwd)
        if not relative.startswith(".."):
            return relative
    return path


def _locations(value: object, cwd: str) -> list[str]:
    if not isinstance(value, list):
        return []
    found: list[str] = []
    for item in value:
        path = get_str(item, "path")
        if path:
            name = _relative(path, cwd)
            if name not in found:
                found.append(name)
    return found


def _diffs(content: object, cwd: str, limit: int | None = None) -> Iterator[tuple[str, JsonObject]]:
    """Each ``{"type": "diff"}`` item with a path, with that path relative to ``cwd``
    (among the first ``limit`` items of ``content``, when given)."""
    if not isinstance(content, list):
        return
    for item in content[:limit]:
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        path = get_str(item, "path")
        if path is not None:
            yield _relative(path, cwd), item


def _whole_file_change(item: JsonObject, name: str, ngettext: Any, gettext: Any) -> str | None:
    """A diff that deletes or creates its whole file, said so ("deletes {file}", "creates
    {file} (4 lines)"); None for a change inside a file (it has ``oldText``)."""
    if _is_deletion(item):  # a delete is said as a delete (issue 21, item 7)
        return str(gettext("deletes {file}").format(file=name))
    if isinstance(item.get("oldText"), str):
        return None
    new = item.get("newText") if isinstance(item.get("newText"), str) else ""
    lines = len(str(new).splitlines())
    created = ngettext("creates {file} ({lines} line)", "creates {file} ({lines} lines)", lines)
    return str(created.format(file=name, lines=lines))


def _changed_lines(item: JsonObject) -> Iterator[str]:
    """The ``+`` and ``-`` lines of a diff inside a file (its ``oldText`` to ``newText``)."""
    new = item.get("newText") if isinstance(item.get("newText"), str) else ""
    old = str(item.get("oldText"))
    for line in difflib.unified_diff(old.splitlines(), str(new).splitlines(), lineterm="", n=0):
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            yield line


def _diff_sentences(
    content: object, cwd: str, ngettext: Any, gettext: Any = lambda text: text
) -> list[str]:
    """``{"type": "diff", "path", "oldText", "newText"}`` as "changes 3 lines in app.py"."""
    said: list[str] = []
    for name, item in _diffs(content, cwd):
        whole = _whole_file_change(item, name, ngettext, gettext)
        if whole is not None:
            said.append(whole)
            continue
        changed = sum(1 for _ in _changed_lines(item))
        changes = ngettext(
            "changes {lines} line in {file}", "changes {lines} lines in {file}", changed
        )
        said.append(changes.format(lines=changed, file=name))
    return said


def _named_options(value: object) -> list[tuple[str, str, str]]:
    """Every option of a permission request: (optionId, name, kind), bounded."""
    found: list[tuple[str, str, str]] = []
    if isinstance(value, list):
        for option in value[:20]:
            kind, option_id = get_str(option, "kind"), get_str(option, "optionId")
            if kind and option_id:
                name = " ".join((get_str(option, "name") or option_id).split())
                found.append((option_id, clip(name, 200), kind))
    return found


def _plan_steps(plan: str) -> list[str]:
    """A markdown plan as its steps: list items, else non-empty lines, marks dropped."""
    lines = [line.strip() for line in plan.splitlines() if line.strip()]
    items = [
        re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        for line in lines
        if re.match(r"^(?:[-*+]|\d+[.)])\s+", line)
    ]
    chosen = items or [line.lstrip("# ") for line in lines]
    return [clip(step, 300) for step in chosen]


def _raw_command(call: JsonObject) -> str | None:
    """``rawInput.command`` as one command line (Codex sends a list of words)."""
    raw = call.get("rawInput")
    value = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(value, list) and value and all(isinstance(word, str) for word in value):
        return shlex.join(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _change_summaries(content: object, cwd: str, language: str) -> list[str]:
    """A tool call's diffs as a question says them: "adds 3 lines and removes 1 line in
    src/app.py", "creates notes.txt (4 lines)"; kept even when they come before the
    permission request (issue 21)."""
    tr = translator(language)
    said: list[str] = []
    for name, item in _diffs(content, cwd, limit=20):
        whole = _whole_file_change(item, name, tr.ngettext, tr.gettext)
        if whole is not None:
            said.append(whole)
            continue
        added = removed = 0
        for line in _changed_lines(item):
            added += line.startswith("+")
            removed += line.startswith("-")
        adds = tr.ngettext("adds {count} line", "adds {count} lines", added).format(count=added)
        removes = tr.ngettext("removes {count} line", "removes {count} lines", removed).format(
            count=removed
        )
        if added and removed:
            said.append(
                tr.gettext("{adds} and {removes} in {file}").format(
                    adds=adds, removes=removes, file=name
                )
            )
        else:
            change = adds if added else removes
            said.append(tr.gettext("{change} in {file}").format(change=change, file=name))
    return said


def _options(value: object) -> dict[str, str]:
    found: dict[str, str] = {}
    if isinstance(value, list):
        for option in value:
            kind, option_id = get_str(option, "kind"), get_str(option, "optionId")
            if kind and option_id and kind not in found:
                found[kind] = option_id
    return found


def _mode_list(value: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for mode in value[:50]:
            mode_id = get_str(mode, "id")
            if mode_id:
                found.append((mode_id, clip(get_str(mode, "name") or mode_id, 120)))
    return found


def _config_options(value: object) -> dict[str, ConfigOption]:
    """ACP ``configOptions``: selects (flat or grouped) and booleans, bounded."""
    found: dict[str, ConfigOption] = {}
    if not isinstance(value, list):
        return found
    for option in value[:50]:
        option_id = get_str(option, "id")
        if not option_id or not isinstance(option, dict):
            continue
        name = clip(get_str(option, "name") or option_id, 120)
        category = get_str(option, "category") or ""
        current = option.get("currentValue")
        if isinstance(current, bool) or option.get("type") == "boolean":
            found[option_id] = ConfigOption(
                option_id, name, category, "true" if current else "false",
                (("true", "on"), ("false", "off")),
            )  # fmt: skip
            continue
        choices: list[tuple[str, str]] = []
        for entry in option.get("options") or []:
            inner = entry.get("options") if isinstance(entry, dict) else None
            for item in inner if isinstance(inner, list) else [entry]:
                item_value = get_str(item, "value")
                if item_value:
                    choices.append((item_value, clip(get_str(item, "name") or item_value, 120)))
        found[option_id] = ConfigOption(
            option_id, name, category, str(current or ""), tuple(choices[:100])
        )
    return found


def _commands(value: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(value, list):
        for command in value:
            name = get_str(command, "name")
            if name:
                found.append((name, " ".join((get_str(command, "description") or "").split())))
    return found[:200]
