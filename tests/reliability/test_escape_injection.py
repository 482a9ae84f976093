"""No producer text reaches the terminal raw (issue 13.3).

A producer that puts terminal escapes (window title, OSC 52 clipboard, cursor moves),
bidi overrides and invisible characters into its handshake and its events. What is
printed by the text fallback and the plain UI, and what is spoken, must hold none of
them; a handshake whose names are not strings must not crash the Textual UI.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from announcer.protocol.sanitise import clean_display, clean_speech, one_line, text_field
from announcer.speech.driver import SpeechDriver
from announcer.speech.text import TextBackend
from announcer.transports import TransportOptions
from announcer.ui.plain import PlainUi
from tests.reliability.hostile import (
    ACCEPTED,
    BOUND,
    WsProducer,
    event,
    frame,
    listener,
    running,
)
from tests.support.examples import examples

OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x1b\\"
CSI = "\x1b[2J\x1b[H\x1b[31m"
C1_OSC = "\x9d0;title\x9c"
RLO = "\u202e"
INVISIBLE = "\u200b\u2060\ufeff\U000e0041"
HOSTILE = f"{OSC_TITLE}{OSC_CLIPBOARD}{CSI}{C1_OSC}Ev{RLO}il{INVISIBLE}\x07\x00\x7f"
FORBIDDEN = ["\x1b", "\x07", "\x9d", "\x9c", "\x00", "\x7f", RLO, "\u200b", "\u2060", "\ufeff"]


def _clean(text: str) -> bool:
    return not any(ch in text for ch in FORBIDDEN) and "\U000e0041" not in text


# ---- the one sanitiser -----------------------------------------------------------------------


@pytest.mark.parametrize("clean", [clean_display, clean_speech, one_line])
def test_the_sanitiser_removes_every_control_and_keeps_the_letters(clean: Any) -> None:
    cleaned = clean(HOSTILE)
    assert _clean(cleaned), repr(cleaned)
    assert "Evil" in cleaned
    assert "pwned" not in cleaned and "cm0gLXJmIH4K" not in cleaned  # OSC payloads gone


def test_the_sanitiser_keeps_scripts_joiners_and_marks_for_display() -> None:
    family = "👩\u200d👩\u200d👧"  # an emoji ZWJ sequence
    persian = "می\u200cخواهم"  # a zero-width non-joiner Persian needs
    arabic = "مرحبا\u200f"
    for text in (family, persian, "नमस्ते", "สวัสดี"):
        assert clean_display(text) == text
    assert clean_display(arabic) == arabic
    assert clean_speech(arabic) == "مرحبا"  # a mark is not read aloud


def test_a_name_must_be_a_string() -> None:
    assert text_field({"x": 1}) is None
    assert text_field(12345) is None
    assert text_field(f"Bot{OSC_TITLE}\nname") == "Bot name"
    long = text_field("a" * 300 + "\u0301")
    assert long is not None and len(long) <= 200


# ---- a hostile producer end to end -------------------------------------------------------------


def _accepted(**producer: Any) -> dict[str, Any]:
    return {
        **ACCEPTED,
        "producer": {"agent_id": "hostile", **producer},
        "honored_capabilities": {
            "preferred_verbosity": "normal",
            "languages": [f"xx{OSC_CLIPBOARD}", "yy"],
            "supports_confirmation_reply": False,
        },
    }


def _serving(accepted: dict[str, Any], summary: str = f"Done{OSC_TITLE} now.") -> Any:
    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(frame(accepted))
        await ws.send(frame(event(summary)))
        await asyncio.sleep(BOUND)

    return serve


async def test_handshake_fields_and_events_reach_the_terminal_and_speech_clean() -> None:
    producer = await WsProducer(_serving(_accepted(agent_name=HOSTILE))).start()
    printed = io.StringIO()  # the text fallback prints here, as --speech auto would
    session, heard = listener([producer.url])
    plain_out = io.StringIO()
    ui = PlainUi(out=plain_out, inp=io.StringIO())
    text_session, _ = listener([producer.url])
    text_session.driver = SpeechDriver(TextBackend(printed))
    try:
        async with running(session), running(text_session):
            ui.attach(text_session)
            await heard.hears("Done now.")
            await heard.hears("agreed, but")

            async def printed_done() -> None:
                while "Done now." not in printed.getvalue():
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(printed_done(), BOUND)
    finally:
        await producer.close()
    spoken = heard.spoken
    assert "Connected to Evil." in spoken, spoken  # the producer's name, minus its escapes
    assert all(_clean(text) for text in spoken), spoken
    assert _clean(printed.getvalue()), repr(printed.getvalue())
    assert _clean(plain_out.getvalue()), repr(plain_out.getvalue())
    assert "xx" in " ".join(spoken)  # the honoured language is said, without its escape
    assert text_session.status.producers and _clean(text_session.status.producers[0])


async def test_a_rejection_reason_is_spoken_clean() -> None:
    async def reject(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(
            frame(
                {
                    "type": "subscription.rejected",
                    "aaep_version": "0.1.0",
                    "reason_code": "capabilities_incompatible",
                    "reason_message": f"No{OSC_CLIPBOARD} way{RLO}.",
                }
            )
        )
        await ws.close(4001)

    producer = await WsProducer(reject).start()
    session, heard = listener([producer.url])
    try:
        status = await asyncio.wait_for(session.run(), BOUND)
    finally:
        await producer.close()
    assert status == 1
    [sentence] = [t for t in heard.spoken if "refused the subscription" in t]
    assert "It said: No way." in sentence and _clean(sentence)
    assert producer.connections == 1  # no retry without retry_after_seconds


@pytest.mark.parametrize("name", [{"x": 1}, 12345, ["a"], None])
async def test_a_name_that_is_not_a_string_does_not_crash_the_textual_ui(name: Any) -> None:
    from announcer.ui.tui.app import AnnouncerApp

    producer = await WsProducer(_serving(_accepted(agent_name=name))).start()
    session, heard = listener([producer.url])
    app = AnnouncerApp(session)
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            try:
                await heard.hears("Done now.")
                await heard.hears("Connected to hostile")  # the agent_id stands in
                await pilot.pause(0.3)
                assert app.is_running
                assert app.return_code is None
            finally:
                session.stop()
                await asyncio.wait_for(runner, 30)
    finally:
        await producer.close()


async def test_handshake_messages_go_through_the_event_decoder() -> None:
    """A duplicate ``type`` key is not read as the last one (json.loads would), and a
    deeply nested answer is refused with a reason, not a RecursionError."""
    duplicate = (
        '{"type": "subscription.rejected", "aaep_version": "0.1.0", '
        '"reason_code": "unknown", "reason_message": "x", '
        + json.dumps(ACCEPTED)[1:-1]  # ... then every accepted field, "type" again
        + "}"
    )
    deep = '{"type": "subscription.accepted", "x": ' + "[" * 5000 + "]" * 5000 + "}"

    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(duplicate)
        await ws.send(deep)
        await ws.send(frame(event("Still here.")))
        await asyncio.sleep(BOUND)

    producer = await WsProducer(serve).start()
    session, heard = listener([producer.url], TransportOptions(), handshake_timeout=1.0)
    try:
        async with running(session):
            await heard.hears("Still here.")
    finally:
        await producer.close()
    state = session.states[0]
    assert state.subscription_id is None  # neither frame was taken as an acceptance
    assert state.producer_name is None
    assert not state.failed
    assert heard.count("refused") == 0


async def test_a_stdio_handshake_with_a_duplicate_type_key_is_not_an_acceptance(
    tmp_path: Path,
) -> None:
    import sys
    import textwrap

    fields = json.dumps(ACCEPTED)[1:-1]
    result = '{"type": "subscription.rejected", "reason_code": "unknown", ' + fields + "}"
    script = tmp_path / "producer.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys, time
            request = json.loads(sys.stdin.readline())
            line = '{{"jsonrpc": "2.0", "id": %d, "result": %s}}' % (request["id"], {result!r})
            print(line, flush=True)
            event = {json.dumps(event("Still here."))!r}
            print('{{"jsonrpc": "2.0", "method": "aaep.event", "params": %s}}' % event, flush=True)
            time.sleep({BOUND})
            """
        )
    )
    session, heard = listener([f"stdio:{sys.executable} {script}"], handshake_timeout=1.0)
    async with running(session):
        await heard.hears("Still here.")
    state = session.states[0]
    assert state.subscription_id is None
    assert session.options.dropped.get("stdio line is not valid JSON") == 1


async def test_the_textual_ui_shows_hostile_text_clean() -> None:
    from announcer.ui.tui.app import AnnouncerApp

    serve = _serving(_accepted(agent_name=HOSTILE), summary=f"Done{OSC_CLIPBOARD}{RLO} now.")
    producer = await WsProducer(serve).start()
    session, heard = listener([producer.url])
    app = AnnouncerApp(session)
    try:
        async with app.run_test() as pilot:
            runner = asyncio.ensure_future(session.run())
            try:
                await heard.hears("Done now.")
                await heard.hears("Connected to Evil")
                await pilot.pause(0.3)
                entries = app.main_screen.transcript.entries
                status = str(app.main_screen.status_widget.render())
            finally:
                session.stop()
                await asyncio.wait_for(runner, 30)
    finally:
        await producer.close()
    assert any("Done now." in entry for entry in entries), entries
    assert all(_clean(entry) for entry in entries), entries
    assert "Evil" in status and _clean(status), repr(status)


_UNSAFE_CHARS = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))]
_UNSAFE_CHARS += list("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2060\ufeff")


@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from([*_UNSAFE_CHARS, "[", "]", ";", "\\", "P", "0", "5", "\n", "\t"]),
            st.characters(),
        ),
        max_size=200,
    )
)
@settings(max_examples=examples(400), deadline=None)
def test_no_text_gets_a_control_through_and_cleaning_twice_changes_nothing(text: str) -> None:
    for clean in (clean_display, clean_speech, one_line):
        cleaned = clean(text)
        assert not any(ch in cleaned for ch in _UNSAFE_CHARS if ch != "\n"), repr(cleaned)
        assert not any(0xE0000 <= ord(ch) <= 0xE007F for ch in cleaned)
        assert clean(cleaned) == cleaned
