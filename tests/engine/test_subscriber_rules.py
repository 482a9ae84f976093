"""Subscriber rules the audit found only partly proved (docs/protocol.md's rule table).

§3.4: optional envelope fields may be absent; §4.2.1: an unrecognised state string is
not rejected but announced generically; §11.3.2: text in any Unicode normalisation form
is accepted. Each with real frames through the whole engine.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest

from announcer.engine.pipeline import Engine
from announcer.engine.settings import UserSettings
from tests.engine.test_engine import Listener

CONTEXT = "https://aaep-protocol.org/context/v1"
PRODUCER = {"agent_id": "minimal-agent"}  # agent_name is optional too

# Each core type with only what its schema requires (§3.4: no urgency, verbosity,
# sequence_number, localization_hints, correlation_id, extensions or summaries beyond
# the required ones). Urgency is sent only where §4 requires "critical".
MINIMAL: list[tuple[str, dict[str, Any], str]] = [
    ("agent.state.changed", {"from_state": "idle", "to_state": "calling_tool"}, "alling"),
    ("agent.progress.updated", {"progress": {"percent": 40}}, "40"),
    ("agent.tool.invoked", {"tool": "read_file", "summary_normal": "Reading a file."}, "Reading"),
    ("agent.tool.completed", {"tool": "read_file", "status": "success"}, "ead file"),
    ("agent.output.streaming", {"chunk": "All done here.", "position": 0, "complete": True}, "All"),
    (
        "agent.awaiting.confirmation",
        {
            "urgency": "critical",
            "action": "Delete the draft",
            "consequence": "The draft is gone.",
            "reply_token": "rpl_minimal1",
            "timeout_seconds": 60,
            "default_decision": "reject",
            "risk_level": "low",
            "irreversible": False,
        },
        "Delete the draft",
    ),
    (
        "agent.awaiting.clarification",
        {
            "urgency": "critical",
            "question": "Which account?",
            "reply_token": "rpl_minimal2",
            "timeout_seconds": 60,
        },
        "Which account?",
    ),
    (
        "agent.handoff.requested",
        {"urgency": "critical", "reason": "A person must sign.", "target_kind": "human"},
        "sign",
    ),
    ("agent.session.completed", {"summary_normal": "All finished."}, "All finished."),
]


def minimal(short_type: str, serial: int, **payload: Any) -> str:
    event: dict[str, Any] = {
        "@context": CONTEXT,
        "type": f"aaep:{short_type}",
        "event_id": f"evt_min{serial}",
        "session_id": "sess_min",
        "timestamp": "2026-05-24T14:22:11Z",
        "producer": PRODUCER,
    }
    event.update(payload)
    return json.dumps(event)


@pytest.mark.parametrize(("short_type", "payload", "heard"), MINIMAL, ids=[m[0] for m in MINIMAL])
def test_every_core_type_with_only_its_required_fields_is_read_and_announced(
    short_type: str, payload: dict[str, Any], heard: str
) -> None:
    """§3.4: subscribers MUST handle the absence of every optional field."""
    listener = Listener(Engine(UserSettings()))
    listener.feed(minimal("agent.session.started", 1, summary_normal="Minimal session."))
    said = listener.feed(minimal(short_type, 2, **payload))
    errors = [
        code
        for code, count in listener.engine.diagnostics.counts().items()
        if count and not code.startswith(("stream.", "sequence"))
    ]
    assert listener.engine.events == 2, errors
    assert any(heard in text for text in said), (said, errors)


def test_an_unrecognised_state_is_not_rejected_and_is_announced_generically() -> None:
    """§4.2.1: producers may use other state strings; never rejected, said generically."""
    listener = Listener(Engine(UserSettings()))
    listener.feed(minimal("agent.session.started", 1, summary_normal="Session."))
    said = listener.feed(
        minimal("agent.state.changed", 2, from_state="idle", to_state="compacting_memory")
    )
    assert listener.engine.events == 2
    assert any("compacting memory" in text.lower() for text in said), said


@pytest.mark.parametrize("form", ["NFD", "NFKC", "NFKD"])
def test_text_in_any_normalisation_form_is_accepted_and_spoken(form: str) -> None:
    """§11.3.2: subscribers MUST NOT reject events because their text is NFD, NFKC or NFKD."""
    text = unicodedata.normalize(form, "Café ﬁles for Ọ̀jọ́ are ready.")
    listener = Listener(Engine(UserSettings()))
    said = listener.feed(minimal("agent.session.started", 1, summary_normal=text))
    assert listener.engine.events == 1
    spoken = [unicodedata.normalize("NFKC", s) for s in said]
    assert any(unicodedata.normalize("NFKC", "Café files for Ọ̀jọ́") in s for s in spoken), said


def test_an_event_in_no_language_of_the_chain_is_still_said_in_its_own() -> None:
    """§11.1.3 (no match): said in the form it came, labelled with its own language."""
    from tests.engine.test_wording_languages import Heard

    heard = Heard("fr", "es")
    event = json.loads(minimal("agent.session.started", 1, summary_normal="Die Sitzung läuft."))
    event["localization_hints"] = {"primary_language": "de"}
    said = heard.feed(json.dumps(event))
    assert [(a.language, a.text) for a in said if "Sitzung" in a.text] == [
        ("de", "Die Sitzung läuft.")
    ], [(a.language, a.text) for a in said]


def test_a_lost_connection_closes_its_questions_and_an_answer_sends_nothing() -> None:
    """§8.2.5: on disconnection the producer applies its default; nothing more is sent."""
    from announcer.engine.prompts import UserAnswer
    from announcer.engine.replies import Refusal

    listener = Listener(Engine(UserSettings()))
    listener.engine.set_subscription("conn1", "sub_lost1")
    listener.feed(minimal("agent.session.started", 1, summary_normal="Session."))
    listener.feed(minimal("agent.awaiting.confirmation", 2, **MINIMAL[5][1]))
    [prompt] = listener.engine.pending_prompts()
    listener.run(listener.engine.source_closed("conn1", 1.0), 1.0)
    assert listener.engine.pending_prompts() == []
    assert any("Connection lost" in text for text in listener.said), listener.said
    refused = listener.engine.answer(UserAnswer(prompt.reply_token, decision="reject"), 2.0)
    assert isinstance(refused, Refusal)


def test_a_confirmation_without_a_reply_token_is_said_but_never_given_one_of_ours() -> None:
    """§6.2.3: subscribers MUST NOT generate reply tokens: with none to echo, no answer."""
    payload = dict(MINIMAL[5][1])
    del payload["reply_token"]
    listener = Listener(Engine(UserSettings()))
    listener.engine.set_subscription("conn1", "sub_notoken1")
    listener.feed(minimal("agent.session.started", 1, summary_normal="Session."))
    said = listener.feed(minimal("agent.awaiting.confirmation", 2, **payload))
    assert listener.engine.pending_prompts() == []
    assert any("Delete the draft" in text for text in said), said
