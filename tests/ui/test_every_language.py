"""Every screen in every language: no English left over, no label cut off at 80 columns.

Each screen and dialog is rendered by the real app (Pilot, 80 by 24) in each shipped
language. What is drawn and what is spoken is compared with the English msgids that
the language's catalog translates; producer text (the event's own strings, shown
literally) is removed first. An English msgid found in what the user sees or hears
means a string that bypassed the catalogs ("Riesgo medium", "Conexión: connected.").
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from rich.cells import cell_len
from textual.content import Content
from textual.errors import NoWidget
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Static
from textual.widgets._footer import FooterKey

from announcer.ui.tui.agent_input import AgentPrompt
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.modals import ClarifyScreen, ConfirmScreen
from announcer.ui.tui.prompt_view import prompt_title, reminder_marks, speakable_duration
from announcer.ui.tui.text import _, one_line, set_language
from tests.support.waiting import until_on_pilot
from tests.ui.conftest import Harness, load_event, schema_example

LOCALES = Path(__file__).resolve().parents[2] / "locales"
LANGUAGES = {"es": "es", "fr": "fr", "de": "de", "pt-BR": "pt_BR", "ar": "ar", "yo": "yo"}
WIDTH = 80
CHOICE_OR_NUMBER = 1  # the schema example with choices and a number


def _pattern(english: str) -> re.Pattern[str] | None:
    """The msgid as a regex; placeholders match one or more words. None if too short to judge."""
    parts = re.split(r"\{[a-z_]*\}", english)
    letters = sum(ch.isalpha() for part in parts for ch in part)
    if letters < 4:
        return None
    body = r".+?".join(re.escape(part) for part in parts)
    start = r"\b" if english[:1].isalpha() else ""
    end = r"\b" if english[-1:].isalpha() else ""
    return re.compile(start + body + end)


@cache
def english_left_over(folder: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """English msgids this catalog translates differently, as patterns."""
    with (LOCALES / folder / "LC_MESSAGES" / "announcer.po").open("rb") as file:
        catalog = read_po(file)
    found: list[tuple[str, re.Pattern[str]]] = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for english in ids:
            pattern = _pattern(english)
            if pattern is None or any(pattern.search(s) for s in strings):
                continue  # the translation itself reads like the English (a name, "normal")
            found.append((english, pattern))
    return tuple(found)


def producer_strings(event: dict[str, Any]) -> list[str]:
    """Every string the producer sent: shown literally, never translated."""
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(event)
    return sorted(out, key=len, reverse=True)


def shown_texts(screen: Screen[Any]) -> list[str]:
    """What the screen draws in words: labels, buttons, options, fields, footer keys."""
    texts: list[str] = []
    for widget in screen.query("*"):
        if not widget.display:
            continue
        if isinstance(widget, FooterKey):
            texts.append(widget.description)
        elif isinstance(widget, Button | Checkbox):
            texts.append(str(widget.label))
        elif isinstance(widget, OptionList):
            texts.extend(
                str(widget.get_option_at_index(i).prompt) for i in range(widget.option_count)
            )
        elif isinstance(widget, Input):
            texts.append(widget.placeholder)
        elif isinstance(widget, Static):
            texts.append(str(widget.render()))
    return [t for t in texts if t.strip()]


def cut_off(screen: Screen[Any]) -> list[str]:
    """One-line labels wider than the room they have, and footer keys past the edge."""
    problems: list[str] = []
    for widget in screen.query("*"):
        if not widget.display or widget.region.width == 0:
            continue
        if isinstance(widget, FooterKey):
            needed = cell_len(widget.key_display or widget.key) + 1 + cell_len(widget.description)
            if widget.region.right > WIDTH or needed > widget.region.width:
                problems.append(f"footer key {widget.description!r} cut off")
            continue
        if isinstance(widget, Label | Button) or widget.id == "status":
            text = str(widget.label) if isinstance(widget, Button) else str(widget.render())
            room = widget.content_region.width
            if widget.content_region.height <= 1 and cell_len(text) > room:
                problems.append(f"{text!r} needs {cell_len(text)} columns, has {room}")
    return problems


def feedback_problems(screen: Screen[Any]) -> list[str]:
    """The dialog's feedback line (the time left, a refused key): there, within the 80
    columns, and every line of it in view, not clipped by a full dialog."""
    found = screen.query("#feedback")
    if not found:
        return ["no feedback shown in the dialog"]
    problems: list[str] = []
    for widget in found:
        text = str(widget.render())
        try:
            geometry = screen.find_widget(widget)
        except NoWidget:
            problems.append(f"{text!r} is not laid out yet")
            continue
        region = geometry.region
        if region.right > WIDTH or region.x < 0:
            problems.append(f"{text!r} runs past the {WIDTH} columns: {region}")
        lines = len(Content(text).wrap(widget.content_region.width))
        if lines > widget.content_region.height:
            problems.append(f"{text!r} needs {lines} lines, has {widget.content_region.height}")
        visible = region.intersection(geometry.clip).intersection(screen.region)
        if visible != region:
            problems.append(f"{text!r} at {region} is in view only in {visible}")
    return problems


def untranslated(texts: list[str], folder: str, producer: list[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for literal in producer:
            if literal:
                text = text.replace(literal, " ")
        for english, pattern in english_left_over(folder):
            if pattern.search(text):
                found.append(f"{english!r} in {text!r}")
    return found


@pytest.mark.parametrize("language", sorted(LANGUAGES))
async def test_every_screen_is_in_the_users_language_and_fits_80_columns(
    harness: Harness, language: str
) -> None:
    folder = LANGUAGES[language]
    confirmation = load_event("agent.awaiting.confirmation.json")
    clarification = schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER)
    producer = producer_strings(confirmation) + producer_strings(clarification)
    harness.session.update_settings(
        harness.session.settings.model_copy(update={"languages": [language]})
    )
    harness.session.set_status(connection="connected", session_state="awaiting_input")
    app = AnnouncerApp(harness.session)
    problems: list[str] = []

    def on_top(kind: type[Screen[Any]]) -> bool:
        return isinstance(app.screen, kind)

    def shown() -> list[str]:
        return shown_texts(app.screen)

    async def check(name: str) -> None:
        await pilot.pause()
        spoken_since = harness.backend.texts[heard:]
        for problem in untranslated(shown_texts(app.screen), folder, producer):
            problems.append(f"{name} shows {problem}")
        for problem in untranslated(spoken_since, folder, producer):
            problems.append(f"{name} says {problem}")
        problems.extend(f"{name}: {p}" for p in cut_off(app.screen))

    try:
        async with app.run_test(size=(WIDTH, 24)) as pilot:
            heard = 0
            await pilot.press("w", "question_mark")
            await check("main screen")
            for key, name in (("h", "history"), ("o", "settings"), ("d", "diagnostics")):
                heard = len(harness.backend.texts)
                await pilot.press(key)
                await pilot.press("question_mark", "tab", "w")
                await check(name)
                await pilot.press("escape")
            heard = len(harness.backend.texts)
            harness.open(confirmation)
            await until_on_pilot(pilot, lambda: on_top(ConfirmScreen), "the confirmation")
            await pilot.press("f3")
            await check("confirmation")
            await pilot.press("r")
            heard = len(harness.backend.texts)
            question = harness.open(clarification)
            await until_on_pilot(pilot, lambda: on_top(ClarifyScreen), "the question")
            await pilot.press("down", "f3")
            await check("question")
            await pilot.press("escape")
            await until_on_pilot(pilot, lambda: not on_top(ClarifyScreen), "the question set aside")
            heard = len(harness.backend.texts)
            await pilot.press("p")
            await check("pending list")
            await pilot.press("enter")  # Enter opens the question again
            await until_on_pilot(pilot, lambda: on_top(ClarifyScreen), "the question again")
            heard = len(harness.backend.texts)
            # Past the first mark (half the time), so the time left is said and shown.
            left = max(reminder_marks(question.timeout_seconds)) - 10
            harness.clock.now = question.deadline - left
            reminder = _("{time} left to answer: {title}").format(
                time=speakable_duration(left, language), title=prompt_title(question)
            )
            await until_on_pilot(
                pilot,
                lambda: (
                    reminder in harness.backend.texts[heard:] and one_line(reminder) in shown()
                ),  # said, and shown in the dialog
                f"the reminder {reminder!r}",
            )
            await until_on_pilot(
                pilot,
                lambda: not feedback_problems(app.screen),  # the dialog scrolls to it
                f"the reminder in view (at first: {feedback_problems(app.screen)})",
            )
            await check("reminder")
            await pilot.press("escape")
            await until_on_pilot(pilot, lambda: not on_top(ClarifyScreen), "the question set aside")
            heard = len(harness.backend.texts)
            await pilot.press("h")
            await check("history after answers")
    finally:
        set_language("en")
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("language", ["en", "es"])
async def test_the_time_left_is_in_view_in_a_full_question_dialog(
    harness: Harness, language: str
) -> None:
    """At 80x24 a question with context, choices and a number field fills the dialog;
    the time left, shown for a user who reads rather than hears it, was drawn below the
    dialog's clipped bottom (all of it in Spanish). Every line must be in view."""
    harness.session.update_settings(
        harness.session.settings.model_copy(update={"languages": [language]})
    )
    app = AnnouncerApp(harness.session)
    try:
        async with app.run_test(size=(WIDTH, 24)) as pilot:
            question = harness.open(
                schema_example("agent.awaiting.clarification", CHOICE_OR_NUMBER)
            )
            await until_on_pilot(
                pilot, lambda: isinstance(app.screen, ClarifyScreen), "the question"
            )
            left = max(reminder_marks(question.timeout_seconds)) - 10
            harness.clock.now = question.deadline - left
            reminder = _("{time} left to answer: {title}").format(
                time=speakable_duration(left, language), title=prompt_title(question)
            )
            await until_on_pilot(
                pilot, lambda: one_line(reminder) in shown_texts(app.screen), "the reminder"
            )
            await until_on_pilot(
                pilot,
                lambda: not feedback_problems(app.screen),  # the dialog scrolls to it
                f"the reminder in view (at first: {feedback_problems(app.screen)})",
            )
    finally:
        set_language("en")


def test_the_check_finds_english_words_the_issue_reported() -> None:
    """The detector itself: Spanish screens once showed these."""
    found = untranslated(["Riesgo medium", "Conexión: connected.", "Riesgo media"], "es", [])
    assert [f.split(" in ")[1] for f in found] == ["'Riesgo medium'", "'Conexión: connected.'"]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
async def test_the_agent_message_box_and_its_always_keys_in_every_language(
    harness: Harness, language: str
) -> None:
    """``announcer agent``: the message box, its help, and an ACP question with "always"."""
    from announcer.formats.acp import AcpAdapter

    folder = LANGUAGES[language]
    adapter = AcpAdapter("Claude Code")
    adapter.set_language(language)
    adapter.session_opened("s1", "/home/ada/project", 0.0)
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "npm test", "kind": "execute"},
        "options": [
            {"optionId": "a", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "o", "name": "Allow", "kind": "allow_once"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"},
            {"optionId": "n", "name": "Always reject", "kind": "reject_always"},
        ],
    }
    question = adapter.permission_requested("k", params, 0.0).events[-1]
    harness.session.update_settings(
        harness.session.settings.model_copy(update={"languages": [language]})
    )
    harness.session.set_status(connection="connected", session_state="idle")
    harness.session.takes_prompts = True  # type: ignore[attr-defined]
    app = AnnouncerApp(harness.session)
    problems: list[str] = []
    producer = ["Claude Code", "npm test", *producer_strings(question)]

    def help_said(since: int) -> bool:
        """What ``?`` says where the focus is was said after ``since``."""
        focused = app.focused
        keys = focused.help_text() if isinstance(focused, AgentPrompt) else app.help_text()
        return keys in harness.backend.texts[since:]

    try:
        async with app.run_test(size=(WIDTH, 24)) as pilot:
            heard = len(harness.backend.texts)
            await pilot.press("question_mark")  # on the empty box: its keys
            await until_on_pilot(pilot, lambda: help_said(heard), "the message box's keys")
            texts = harness.backend.texts
            for problem in untranslated(shown_texts(app.screen), folder, producer):
                problems.append(f"message box shows {problem}")
            for problem in untranslated(texts, folder, producer):
                problems.append(f"message box says {problem}")
            problems.extend(f"message box: {p}" for p in cut_off(app.screen))
            heard = len(texts)
            harness.open(question)
            await until_on_pilot(
                pilot, lambda: isinstance(app.screen, ConfirmScreen), "the ACP confirmation"
            )
            await pilot.press("question_mark")
            await until_on_pilot(pilot, lambda: help_said(heard), "the confirmation's keys")
            for problem in untranslated(shown_texts(app.screen), folder, producer):
                problems.append(f"ACP confirmation shows {problem}")
            # read again: ``texts`` is a copy taken before the question came
            for problem in untranslated(harness.backend.texts[heard:], folder, producer):
                problems.append(f"ACP confirmation says {problem}")
            problems.extend(f"ACP confirmation: {p}" for p in cut_off(app.screen))
    finally:
        set_language("en")
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)
