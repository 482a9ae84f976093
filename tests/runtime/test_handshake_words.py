"""Handshake answers over a real WebSocket, heard in the listener's language (issue 24 item 3):
a German listener no longer hears "it gave no reason", and the status says where each
source stands as a LinkState, not as an English sentence."""

from __future__ import annotations

import asyncio
from typing import Any

from announcer.engine.announcement import Announcement
from announcer.engine.prompts import PendingPrompt
from announcer.engine.settings import UserSettings
from announcer.engine.subscription import CLOSE_REASONS, REJECTION_REASONS, LinkState
from announcer.i18n.translate import translator
from announcer.runtime.contract import Connection, SessionStatus
from tests.reliability.hostile import ACCEPTED, BOUND, WsProducer, event, frame, listener, running


class Statuses:
    """A listener that keeps every status the session published."""

    def __init__(self) -> None:
        self.seen: list[SessionStatus] = []

    def announcement_made(self, announcement: Announcement) -> None:
        return None

    def prompt_opened(self, prompt: PendingPrompt) -> None:
        return None

    def prompt_voided(self, reply_token: str, reason: str) -> None:
        return None

    def status_changed(self, status: SessionStatus) -> None:
        self.seen.append(status)


async def test_a_refusal_is_heard_in_german_and_the_source_is_given_up() -> None:
    async def reject(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(
            frame(
                {
                    "type": "subscription.rejected",
                    "reason_code": "authentication_required",
                    "reason_message": "Token bitte.",
                }
            )
        )
        await ws.close(4002)

    producer = await WsProducer(reject).start()
    session, heard = listener([producer.url], settings=UserSettings(languages=["de"]))
    try:
        code = await asyncio.wait_for(session.run(), BOUND)
    finally:
        await producer.close()
    assert code == 1
    german = translator("de").gettext(REJECTION_REASONS["authentication_required"])
    [sentence] = [text for text in heard.spoken if german in text]
    assert REJECTION_REASONS["authentication_required"] not in sentence
    assert "Token bitte." in sentence  # the producer's own words, quoted as written
    assert session.status.links == (LinkState.GIVEN_UP,)
    assert session.status.connection is Connection.NOT_CONNECTED
    assert producer.connections == 1  # no retry without retry_after_seconds


async def test_a_close_is_heard_in_french_and_the_status_says_closed_by_the_producer() -> None:
    async def serve(ws: Any, producer: WsProducer) -> None:
        await producer.take(ws)
        await ws.send(frame(ACCEPTED))
        if producer.connections == 1:
            await ws.send(frame(event("Bonjour.")))
            await asyncio.sleep(0.2)
            await ws.send(
                frame(
                    {
                        "type": "subscription.close",
                        "subscription_id": ACCEPTED["subscription_id"],
                        "reason_code": "producer_shutdown",
                    }
                )
            )
        await asyncio.sleep(BOUND)

    producer = await WsProducer(serve).start()
    session, heard = listener([producer.url], settings=UserSettings(languages=["fr"]))
    statuses = Statuses()
    session.subscribe(statuses)
    french = translator("fr").gettext(CLOSE_REASONS["producer_shutdown"])
    try:
        async with running(session):
            await heard.hears(french)
            await heard.until(lambda: producer.connections >= 2)
            await heard.until(lambda: session.status.connection is Connection.CONNECTED)
    finally:
        await producer.close()
    connections = [status.connection for status in statuses.seen]
    assert Connection.CLOSED_BY_PRODUCER in connections
    closed = connections.index(Connection.CLOSED_BY_PRODUCER)
    assert (
        Connection.CONNECTED in connections[:closed]
        and Connection.CONNECTED in connections[closed:]
    )
    closed_links = next(
        s.links for s in statuses.seen if s.connection is Connection.CLOSED_BY_PRODUCER
    )
    assert closed_links == (LinkState.CLOSED_BY_PRODUCER,)
    assert not any(CLOSE_REASONS["producer_shutdown"] in text for text in heard.spoken)
