"""The typed session status (issue 24 item 4): counts and each source's LinkState, worded by
each UI in the user's language; nothing parses an English sentence back."""

from __future__ import annotations

import io

import pytest

from announcer.engine.settings import UserSettings
from announcer.engine.subscription import LinkState
from announcer.i18n.translate import translator
from announcer.runtime.contract import Connection, SessionStatus, UiSession
from announcer.ui.plain import PlainUi
from announcer.ui.status import connection_words, session_state_words

OPEN, LOST, CLOSED = LinkState.OPEN, LinkState.LOST, LinkState.CLOSED_BY_PRODUCER


@pytest.mark.parametrize(
    ("links", "connection"),
    [
        ((), Connection.NOT_CONNECTED),
        ((LinkState.CONNECTING,), Connection.NOT_CONNECTED),
        ((OPEN, OPEN), Connection.CONNECTED),
        ((OPEN, LOST), Connection.PARTLY),
        ((LOST, CLOSED), Connection.CLOSED_BY_PRODUCER),
        ((OPEN, CLOSED), Connection.PARTLY),
        ((LinkState.FINISHED, LinkState.GIVEN_UP), Connection.NOT_CONNECTED),
    ],
)
def test_the_connection_follows_the_links(
    links: tuple[LinkState, ...], connection: Connection
) -> None:
    assert SessionStatus(links=links).connection is connection


def test_partly_connected_is_said_with_its_counts_in_every_language() -> None:
    status = SessionStatus(links=(OPEN, LOST, OPEN))
    assert connection_words(status, translator("en").gettext) == "connected to 2 of 3"
    german = connection_words(status, translator("de").gettext)
    assert german == translator("de").gettext("connected to {count} of {total}").format(
        count=2, total=3
    )
    assert german != "connected to 2 of 3"


def test_session_states_are_translated_and_a_producers_own_state_is_said_as_written() -> None:
    gettext = translator("fr").gettext
    assert session_state_words("awaiting_input", gettext) == gettext("waiting for your answer")
    assert session_state_words("awaiting_input", gettext) != "waiting for your answer"
    assert session_state_words("tuning_up", gettext) == "tuning up"


class StatusSession(UiSession):
    """Only what ``:status`` needs; every other capability keeps the contract's default."""

    def __init__(self, language: str, status: SessionStatus) -> None:
        self.settings = UserSettings(languages=[language])
        self._status = status

    @property
    def status(self) -> SessionStatus:
        return self._status

    def subscribe(self, listener: object) -> None:
        return None

    def update_settings(self, settings: UserSettings) -> None:
        self.settings = settings


async def test_the_plain_status_command_is_in_the_users_language() -> None:
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    status = SessionStatus(
        producers=("Banking assistant", "Build"), links=(OPEN, LOST), pending_prompts=2
    )
    ui.attach(StatusSession("de", status))
    ui._on_line(":status")
    t = translator("de")
    expected = t.ngettext(
        "{connection}; {producers}; {count} question waiting",
        "{connection}; {producers}; {count} questions waiting",
        2,
    ).format(
        connection=t.gettext("connected to {count} of {total}").format(count=1, total=2),
        producers=", ".join(
            t.gettext("{name}: {state}").format(name=name, state=t.gettext(state))
            for name, state in (
                ("Banking assistant", "connected"),
                ("Build", "connection lost, reconnecting"),
            )
        ),
        count=2,
    )
    assert out.getvalue().strip().splitlines()[-1] == expected
    assert "waiting" not in expected and "connected" not in expected


async def test_the_plain_status_command_in_english() -> None:
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    ui.attach(StatusSession("en", SessionStatus(producers=("Bank",), links=(OPEN,))))
    ui._on_line(":status")
    assert out.getvalue().strip().splitlines()[-1] == "connected; Bank; 0 questions waiting"


async def test_the_plain_settings_commands_answer_in_the_users_language() -> None:
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    session = StatusSession("de", SessionStatus())
    ui.attach(session)
    t = translator("de")
    ui._on_line(":verbosity terse")
    assert session.settings.verbosity == "terse"
    said = out.getvalue().strip().splitlines()[-1]
    assert said == t.gettext("Verbosity is now {level}.").format(level=t.gettext("terse"))
    assert "is now" not in said
    ui._on_line(":load sideways")
    assert session.settings.cognitive_load != "sideways"
    said = out.getvalue().strip().splitlines()[-1]
    assert said.startswith(t.gettext("Unknown load {value}.").format(value="'sideways'"))


async def test_the_plain_status_names_where_each_source_stands_when_there_are_several() -> None:
    out = io.StringIO()
    ui = PlainUi(out=out, inp=io.StringIO())
    status = SessionStatus(producers=("Bank", "Build"), links=(OPEN, LinkState.FINISHED))
    ui.attach(StatusSession("en", status))
    ui._on_line(":status")
    assert out.getvalue().strip().splitlines()[-1] == (
        "connected to 1 of 2; Bank: connected, Build: finished; 0 questions waiting"
    )
