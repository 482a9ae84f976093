"""ACP ``elicitation/create`` (form and URL mode) as a run of AAEP clarifications.

An agent's own question (Claude's AskUserQuestion, Codex's request_user_input, an MCP
server's elicitation) arrives as one form: a flat JSON Schema object whose properties are
choices, several choices, booleans, numbers with bounds, or free text. AAEP asks one
question at a time, so the form is asked field by field; a form of more than one field,
or with a typed answer, ends with a review ("Send to Claude: ...?") where the user can
send, answer again, decline or cancel (ACP elicitation: "Clients MUST let users review
and modify responses before sending them"). Every choice question also offers
"Decline" and "Cancel", so the user's own refusal reaches the agent as ``decline`` or
``cancel``, never as an answer announcer made up.

A URL-mode elicitation is read out with its address and host; announcer never opens it
(ACP elicitation, URL security: no prefetch, no opening without consent). Accept means
"I will open it myself".

This module is pure: it parses the schema, words the questions and checks the answers.
:class:`announcer.formats.acp.AcpAdapter` turns what it returns into AAEP events.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from announcer.formats.speakable import clip
from announcer.protocol.extensions import CANCEL_CHOICE, DECLINE_CHOICE

#: The most fields one form may hold; more are said as left out (a hostile agent must not
#: make the user answer for ever).
MAX_FIELDS = 20
#: The most options one choice question offers at once (AAEP allows 32 choices; three are
#: ours: leave empty, decline, cancel). A field with more is asked in pages.
MAX_OPTIONS = 29
#: The options of one page when a field has more than :data:`MAX_OPTIONS` (two more are
#: "Earlier choices" and "More choices").
PAGE_OPTIONS = MAX_OPTIONS - 2
#: The most options one field keeps (a hostile agent must not make a list without end);
#: more are counted and said as left out, never dropped in silence.
MAX_ALL_OPTIONS = 500

# Our own choice values: never an agent's ``const`` (those are numbered ``opt-N``).
DECLINE = DECLINE_CHOICE  # not numbered in speech (engine.prompts.set_aside_choice)
CANCEL = CANCEL_CHOICE
SKIP = "x-announcer:skip"
SEND = "x-announcer:send"
AGAIN = "x-announcer:again"
MORE = "x-announcer:more"
EARLIER = "x-announcer:earlier"
YES = "x-announcer:yes"
NO = "x-announcer:no"

FieldKind = Literal["choice", "multi", "boolean", "number", "integer", "text"]
Translate = Callable[[str], str]


def N_(message: str) -> str:
    """Mark a phrase for the catalogs; it is translated where it is said."""
    return message


@dataclass(slots=True)
class FormField:
    """One property of the requested schema."""

    key: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    options: list[tuple[str, str]] = field(default_factory=list)  # (const, spoken label)
    options_left_out: int = 0  # options past MAX_ALL_OPTIONS: counted and said
    page: int = 0  # the page of options asked now (more than MAX_OPTIONS)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    secret: bool = False  # marked secret (Codex's isSecret): never read back


@dataclass(slots=True)
class Form:
    """One open elicitation: its fields, the answers so far and where the user is."""

    request_key: str
    session_id: str
    message: str
    fields: list[FormField]
    tool_call_id: str | None = None
    url: str | None = None
    left_out: int = 0
    index: int = 0
    reviewing: bool = False
    answers: dict[str, Any] = field(default_factory=dict)
    problem: str = ""  # why the last answer was not taken, said before the question again
    asked: int = 0  # questions asked so far: each gets its own reply token
    permission: Any = None  # the permission this form picks an "always" option for

    @property
    def needs_review(self) -> bool:
        """A review when more than one field was answered, or a typed answer (numbers,
        text: what was understood is read back before it goes); one picked choice is read
        back as it is sent ("Sent: …"), a second round would repeat it (issue 30 item 3)."""
        answered = [f for f in self.fields if self.answers.get(f.key) is not None]
        return len(answered) > 1 or any(f.kind not in ("choice", "boolean") for f in answered)

    @property
    def one_key(self) -> FormField | None:
        """The one choice (or yes/no) of a form whose other fields are all optional
        (Claude's AskUserQuestion: a choice and an optional "Other" note; Codex's
        request_user_input): one key sends it, the optional fields left empty
        (issue 30 item 3). None for any other form, asked field by field."""
        if not self.fields or self.url is not None:
            return None
        main = self.fields[0]
        if main.kind not in ("choice", "boolean"):
            return None
        rest = self.fields[1:]
        if any(item.required or item.kind in ("choice", "boolean") for item in rest):
            return None
        return main

    @property
    def typed_field(self) -> FormField | None:
        """In a one-key form, the one optional text field a typed answer fills ("Other")."""
        texts = [item for item in self.fields[1:] if item.kind == "text" and not item.secret]
        return texts[0] if self.one_key is not None and len(texts) == 1 else None


def parse_form(request_key: str, params: dict[str, Any]) -> Form:
    """The elicitation's params (wire form, camelCase) as a :class:`Form`.

    Anything unreadable becomes a free-text field or is counted as left out: the
    question is still asked (a malformed question never vanishes in silence).
    """
    message = _text(params.get("message"), 2000)
    session_id = str(params.get("sessionId")) if isinstance(params.get("sessionId"), str) else ""
    tool_call_id = params.get("toolCallId") if isinstance(params.get("toolCallId"), str) else None
    if params.get("mode") == "url":
        url = str(params.get("url")) if isinstance(params.get("url"), str) else ""
        return Form(request_key, session_id, message, [], tool_call_id, url=url[:2000])
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required_raw = schema.get("required") if isinstance(schema, dict) else None
    required: set[str] = set()
    if isinstance(required_raw, list):
        required = {r for r in required_raw if isinstance(r, str)}
    fields: list[FormField] = []
    left_out = 0
    if isinstance(properties, dict):
        for key, spec in properties.items():
            if len(fields) >= MAX_FIELDS:
                left_out += 1
                continue
            spec = spec if isinstance(spec, dict) else {}
            fields.append(_parse_field(str(key)[:200], spec, key in required))
    return Form(request_key, session_id, message, fields, tool_call_id, left_out=left_out)


def _parse_field(key: str, spec: dict[str, Any], required: bool) -> FormField:
    title = _text(spec.get("title"), 300) or key.replace("_", " ")
    description = _text(spec.get("description"), 600)
    kind = spec.get("type")
    made = FormField(key, "text", title, description, required)
    meta = spec.get("_meta")
    codex = meta.get("codex") if isinstance(meta, dict) else None
    made.secret = isinstance(codex, dict) and codex.get("isSecret") is True
    if kind == "boolean":
        made.kind = "boolean"
    elif kind in ("number", "integer"):
        made.kind = "integer" if kind == "integer" else "number"
        made.minimum = _number(spec.get("minimum"))
        made.maximum = _number(spec.get("maximum"))
    elif kind == "array":
        items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
        assert isinstance(items, dict)
        made.options, made.options_left_out = _options(items.get("anyOf"), items.get("enum"))
        made.kind = "multi" if made.options else "text"
    elif kind == "string" or kind is None:
        made.options, made.options_left_out = _options(spec.get("oneOf"), spec.get("enum"))
        if made.options:
            made.kind = "choice"
        else:
            made.min_length = _length(spec.get("minLength"))
            made.max_length = _length(spec.get("maxLength"))
    return made


def _options(titled: object, plain: object) -> tuple[list[tuple[str, str]], int]:
    """The options (value, label as the agent wrote it), and how many past the bound are
    left out."""
    found: list[tuple[str, str]] = []
    if isinstance(titled, list):
        for option in titled:
            if isinstance(option, dict) and isinstance(option.get("const"), str):
                label = _text(option.get("title"), 300) or _text(option["const"], 300)
                description = _text(option.get("description"), 600)
                found.append((option["const"], f"{label}: {description}" if description else label))
    elif isinstance(plain, list):
        found = [(v, _text(v, 300) or v) for v in plain if isinstance(v, str)]
    unique = list(dict.fromkeys((const, label) for const, label in found if const))
    kept = unique[:MAX_ALL_OPTIONS]
    return kept, len(unique) - len(kept)


def _same_reading(label: str) -> str:
    folded = unicodedata.normalize("NFKC", label).casefold()
    return " ".join("".join(ch for ch in folded if unicodedata.category(ch) != "Cf").split())


def spoken_options(item: FormField, t: Translate) -> list[tuple[str, str]]:
    """The options (value, label) as the user hears them.

    Options that read the same (same title and description, whatever the case, spacing,
    compatibility form or invisible characters) are told apart by their place among them
    and the value each sends: "Keep" and a "Keep" that sends ``delete-all`` must never
    sound alike (the user must know which one they pick)."""
    options = item.options
    readings = [_same_reading(label) for _, label in options]
    totals: dict[str, int] = {}
    for reading in readings:
        totals[reading] = totals.get(reading, 0) + 1
    seen: dict[str, int] = {}
    told: list[tuple[str, str]] = []
    for (const, label), reading in zip(options, readings, strict=True):
        if totals[reading] < 2:
            told.append((const, label))
            continue
        seen[reading] = seen.get(reading, 0) + 1
        # the marks go to the title, before any description (the review says the title)
        title, colon, description = label.partition(": ")
        marked = t(N_("{label} ({number} of {count} with this name, it sends {value})")).format(
            label=title, number=seen[reading], count=totals[reading], value=_text(const, 80)
        )
        told.append((const, f"{marked}{colon}{description}"))
    return told


def _text(value: object, limit: int) -> str:
    return clip(value, limit) if isinstance(value, str) else ""


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _length(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def spoken_number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


# -- questions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    """One AAEP clarification to ask: its words, choices and the kinds of answer it takes."""

    text: str
    terse: str
    choices: list[tuple[str, str]]
    kinds: list[str]
    secret: bool = False  # the answer is not read back ("Sent: ...")


def next_question(form: Form, agent: str, t: Translate) -> Question:
    """The question the user answers next: a field, the review, or the URL consent."""
    if form.url is not None:
        return _url_question(form, agent, t)
    if form.reviewing:
        return _review_question(form, agent, t)
    return _field_question(form, form.fields[form.index], agent, t)


def _lead(form: Form, agent: str, t: Translate) -> str:
    parts = [t(N_("{agent} asks: {message}")).format(agent=agent, message=form.message or "…")]
    if form.left_out:
        parts.append(
            t(N_("It asked for {count} more answers, which are left empty.")).format(
                count=form.left_out
            )
        )
    return " ".join(_sentence(p) for p in parts)


def _field_question(form: Form, item: FormField, agent: str, t: Translate) -> Question:
    parts: list[str] = []
    if form.problem:
        parts.append(form.problem)
    if form.index == 0 and not form.problem and item.page == 0:
        parts.append(_lead(form, agent, t))
    one_key = form.one_key is item
    if len(form.fields) > 1 and not one_key:
        parts.append(
            t(N_("Question {number} of {total}: {title}")).format(
                number=form.index + 1, total=len(form.fields), title=item.title
            )
        )
    elif item.title.lower() not in form.message.lower():
        parts.append(item.title)
    if item.description:
        parts.append(item.description)
    refusals = [(DECLINE, t(N_("Decline to answer"))), (CANCEL, t(N_("Cancel the question")))]
    # The one choice of a one-key form is what it asks: picking nothing is Decline.
    skip = [] if item.required or one_key else [(SKIP, t(N_("Leave it empty")))]
    choices: list[tuple[str, str]] = []
    kinds = ["multiple_choice"]
    if item.options_left_out:
        parts.append(
            t(N_("It offered {count} more choices, which are left out.")).format(
                count=item.options_left_out
            )
        )
    if item.kind == "choice":
        choices, paging = _page_of_choices(item, t)
        parts.extend(paging)
    elif item.kind == "boolean":
        choices = [(YES, t(N_("Yes"))), (NO, t(N_("No")))]
    elif item.kind == "multi":
        listed = "; ".join(
            f"{i}: {label}" for i, (_, label) in enumerate(spoken_options(item, t), 1)
        )
        parts.append(
            t(N_("Choose one or more by number, separated by spaces: {choices}.")).format(
                choices=listed
            )
        )
        kinds, refusals, skip = ["freetext"], [], []
    elif item.kind in ("number", "integer"):
        parts.append(range_hint(item, t))
        kinds, refusals, skip = ["numeric"], [], []
    else:
        kinds = ["freetext", "multiple_choice"]
    if one_key and form.typed_field is not None:
        kinds = ["multiple_choice", "freetext"]  # typed words are the "Other" answer
    if not item.required and item.kind in ("multi", "number", "integer"):
        parts.append(t(N_("Optional: the review lets you leave it empty.")))
    text = " ".join(_sentence(p) for p in parts if p)
    return Question(
        text, _sentence(item.title), choices + skip + refusals, kinds, secret=item.secret
    )


def _page_of_choices(item: FormField, t: Translate) -> tuple[list[tuple[str, str]], list[str]]:
    """The choices asked now, and what the question says about them.

    Up to :data:`MAX_OPTIONS` options are offered at once; a field with more is asked in
    pages, each with "More choices" and "Earlier choices", and the count is said, so every
    option stays reachable by its key."""
    labelled = [(f"opt-{i}", label) for i, (_, label) in enumerate(spoken_options(item, t))]
    if len(labelled) <= MAX_OPTIONS:
        return labelled, []
    pages = math.ceil(len(labelled) / PAGE_OPTIONS)
    page = min(item.page, pages - 1)
    first = page * PAGE_OPTIONS
    shown = labelled[first : first + PAGE_OPTIONS]
    pages_said = N_("{count} choices, in {pages} pages; page {page}: choices {first} to {last}")
    said = t(pages_said).format(
        count=len(labelled), pages=pages, page=page + 1, first=first + 1, last=first + len(shown)
    )
    if page + 1 < pages:
        shown.append((MORE, t(N_("More choices (page {page})")).format(page=page + 2)))
    if page > 0:
        shown.append((EARLIER, t(N_("Earlier choices (page {page})")).format(page=page)))
    return shown, [said]


def range_hint(item: FormField, t: Translate) -> str:
    low, high = item.minimum, item.maximum
    if low is not None and high is not None:
        said = t(N_("A number from {low} to {high}.")).format(
            low=spoken_number(low), high=spoken_number(high)
        )
    elif low is not None:
        said = t(N_("A number of at least {low}.")).format(low=spoken_number(low))
    elif high is not None:
        said = t(N_("A number of at most {high}.")).format(high=spoken_number(high))
    else:
        said = t(N_("Type a number."))
    if item.kind == "integer":
        said += " " + t(N_("Whole numbers only."))
    return said


def _review_question(form: Form, agent: str, t: Translate) -> Question:
    said = []
    for item in form.fields:
        value = form.answers.get(item.key)
        said.append(f"{item.title}: {spoken_value(item, value, t)}")
    text = t(N_("Send to {agent}: {answers}?")).format(agent=agent, answers="; ".join(said))
    again = [(AGAIN, t(N_("Answer again")))]
    if not form.fields:  # the agent asked for nothing to be filled in: its words, then send
        text, again = _lead(form, agent, t), []
    choices = [
        (SEND, t(N_("Send these answers"))),
        *again,
        (DECLINE, t(N_("Decline to answer"))),
        (CANCEL, t(N_("Cancel the question"))),
    ]
    return Question(text, t(N_("Send these answers?")), choices, ["multiple_choice"])


def spoken_value(item: FormField, value: object, t: Translate) -> str:
    if value is None:
        return t(N_("left empty"))
    if item.secret:
        return t(N_("given, not read back"))
    labels = dict(spoken_options(item, t))
    if isinstance(value, bool):
        return t(N_("Yes")) if value else t(N_("No"))
    if isinstance(value, list):
        return ", ".join(labels.get(str(v), str(v)).split(": ")[0] for v in value)
    if isinstance(value, float | int):
        return spoken_number(float(value))
    if item.kind == "choice":
        return labels.get(str(value), str(value)).split(": ")[0]
    return clip(str(value), 300)


def _url_question(form: Form, agent: str, t: Translate) -> Question:
    url = form.url or ""
    host = urlsplit(url).hostname or "?"
    parts = [
        t(N_("{agent} asks you to open an address in your own browser: {url}")).format(
            agent=agent, url=url or "?"
        ),
        t(N_("The address is on {host}. announcer does not open it.")).format(host=host),
    ]
    if _suspicious_host(host):
        parts.append(t(N_("Careful: the host name uses unusual characters.")))
    if form.message:
        parts.append(form.message)
    choices = [
        ("x-announcer:open", t(N_("I will open it myself"))),
        (DECLINE, t(N_("Decline to answer"))),
        (CANCEL, t(N_("Cancel the question"))),
    ]
    text = " ".join(_sentence(p) for p in parts)
    return Question(text, _sentence(host), choices, ["multiple_choice"])


def _suspicious_host(host: str) -> bool:
    labels = host.split(".")
    return any(label.startswith("xn--") for label in labels) or any(
        ord(ch) > 127 or unicodedata.category(ch).startswith("C") for ch in host
    )


# -- answers ---------------------------------------------------------------------------


def take_answer(form: Form, response: object, t: Translate) -> dict[str, Any] | None:
    """Apply the user's reply; the ACP response once the form is done, else None.

    None means: ask :func:`next_question` again (the next field, the review, or the
    same field with ``form.problem`` saying why the answer was not taken).
    """
    form.problem = ""
    if response == DECLINE:
        return {"action": "decline"}
    if response == CANCEL:
        return {"action": "cancel"}
    if form.url is not None:
        return {"action": "accept"} if response == "x-announcer:open" else None
    if form.reviewing:
        if response == SEND:
            content = {k: v for k, v in form.answers.items() if v is not None}
            return {"action": "accept", "content": content}
        if response == AGAIN:
            form.reviewing, form.index = False, 0
            for item in form.fields:
                item.page = 0
        return None
    item = form.fields[form.index]
    if item.kind == "choice" and response in (MORE, EARLIER):
        last_page = max(0, math.ceil(len(item.options) / PAGE_OPTIONS) - 1)
        item.page = min(last_page, max(0, item.page + (1 if response == MORE else -1)))
        return None  # the same field, its next (or earlier) page of choices
    typed = form.typed_field if form.one_key is item else None
    if typed is not None and _is_typed(response):
        # Issue 30 item 3: words typed instead of a choice fill the optional text field.
        value, problem = _value(typed, response, t)
        if problem:
            form.problem = problem
            return None
        form.answers[typed.key] = value
        return {"action": "accept", "content": {typed.key: value}}
    value, problem = _value(item, response, t)
    if problem:
        form.problem = problem
        return None
    form.answers[item.key] = value
    form.index += 1
    if form.one_key is item:
        return {"action": "accept", "content": {item.key: value}}  # one key sends it
    if form.index < len(form.fields):
        return None
    if form.needs_review:
        form.reviewing = True
        return None
    content = {k: v for k, v in form.answers.items() if v is not None}
    return {"action": "accept", "content": content}


def _value(item: FormField, response: object, t: Translate) -> tuple[Any, str]:
    if response == SKIP and not item.required:
        return None, ""
    if item.kind == "choice":
        index = _option_index(response, len(item.options))
        if index is None:
            return None, t(N_("Please pick one of the choices."))
        return item.options[index][0], ""
    if item.kind == "boolean":
        if response in (YES, NO, True, False):
            return response in (YES, True), ""
        return None, t(N_("Please pick one of the choices."))
    if item.kind == "multi":
        picked: list[str] = []
        for word in str(response).replace(",", " ").split():
            if not word.isdigit() or not 1 <= int(word) <= len(item.options):
                return None, t(N_("Please type the numbers of your choices, like 1 3."))
            const = item.options[int(word) - 1][0]
            if const not in picked:
                picked.append(const)
        if not picked:
            return None, t(N_("Please type the numbers of your choices, like 1 3."))
        return picked, ""
    if item.kind in ("number", "integer"):
        return _number_value(item, response, t)
    text = str(response) if isinstance(response, str) else ""
    if not text.strip():
        return None, t(N_("The answer is empty."))
    if item.max_length is not None and len(text) > item.max_length:
        return None, t(N_("The answer may have at most {count} characters.")).format(
            count=item.max_length
        )
    if item.min_length is not None and len(text) < item.min_length:
        return None, t(N_("The answer needs at least {count} characters.")).format(
            count=item.min_length
        )
    return text, ""


def _is_typed(response: object) -> bool:
    """Words the user typed, not one of the question's choices (those are ours or opt-N)."""
    if not isinstance(response, str) or response.startswith("x-announcer:"):
        return False
    return not (response.startswith("opt-") and response[4:].isdigit())


def _option_index(response: object, count: int) -> int | None:
    if isinstance(response, str) and response.startswith("opt-"):
        number = response[4:]
        if number.isdigit() and int(number) < count:
            return int(number)
    return None


def _number_value(item: FormField, response: object, t: Translate) -> tuple[Any, str]:
    if isinstance(response, bool) or not isinstance(response, int | float):
        return None, range_hint(item, t)
    number = float(response)
    if not math.isfinite(number):
        return None, range_hint(item, t)
    if item.kind == "integer" and not number.is_integer():
        return None, range_hint(item, t)
    if (item.minimum is not None and number < item.minimum) or (
        item.maximum is not None and number > item.maximum
    ):
        return None, t(N_("{number} is out of range.")).format(
            number=spoken_number(number)
        ) + " " + range_hint(item, t)
    return (int(number) if item.kind == "integer" else response), ""


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if text and text[-1] not in ".!?…:":
        text += "."
    return text[:1].upper() + text[1:]


__all__ = [
    "CANCEL",
    "DECLINE",
    "Form",
    "FormField",
    "Question",
    "next_question",
    "parse_form",
    "take_answer",
]
