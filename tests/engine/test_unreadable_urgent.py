"""Issue 29 item 9: an unreadable critical frame is never rate-limited (§9.3.2(7))."""

from __future__ import annotations

from announcer.engine.announcement import Urgency
from tests.engine.test_question_rules import Clocked

NOTICE = "An agent sent an urgent message that could not be read. See the diagnostics."


def test_every_unreadable_critical_frame_is_said_even_seconds_apart() -> None:
    c = Clocked()
    c.send("agent.session.started", 0, summary_normal="Hi.")
    for seq, second in ((1, 1.0), (2, 3.0), (3, 4.5)):
        c.now = second
        # A core type this version reads, made invalid by a field it does not allow.
        c.send(
            "agent.tool.invoked",
            seq,
            urgency="critical",
            tool="wire_money",
            summary_normal=f"Wiring money, attempt {seq}.",
            not_a_field=True,
        )
    notices = [
        entry
        for entry in c.engine.transcript()
        if entry.announcement.text == NOTICE and entry.announcement.urgency is Urgency.CRITICAL
    ]
    assert len(notices) == 3, [e.announcement.text for e in c.engine.transcript()]
    assert c.said.count(NOTICE) >= 3, c.said
