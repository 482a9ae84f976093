"""How the engine words what users hear, with real AAEP events in several languages.

* Our phrases and the producer's text in another language are separate utterances,
  each tagged with its own language (§11.5), kept together by the scheduler.
* Durations and counts go through babel and the catalogs' plural rules.
* "Already says it" is checked with the words of the text's own language.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from announcer.cli.commands.demo import demo_lines
from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.engine.scheduler import SpeechScheduler, _Queued
from announcer.engine.settings import UserSettings
from announcer.engine.speech_commands import Cancel, Speak, SpeechCommand
from tests.engine.aaep import clarification, confirmation, frame


def localized(raw: str, language: str) -> str:
    """The frame as a producer writing in ``language`` sends it (§11.1)."""
    event = json.loads(raw)
    event["localization_hints"] = {"primary_language": language}
    return json.dumps(event)


class Heard:
    """Runs the engine's commands like an instant backend; keeps what was spoken."""

    def __init__(self, *languages: str) -> None:
        self.engine = Engine(UserSettings(languages=list(languages)))
        self.spoken: list[Announcement] = []

    def run(self, commands: list[SpeechCommand], now: float) -> None:
        pending = list(commands)
        while pending:
            command = pending.pop(0)
            if isinstance(command, Speak):
                self.spoken.append(command.announcement)
                pending += self.engine.on_speech_done(command.utterance_id, now)

    def feed(self, *frames: str, now: float = 0.0) -> list[Announcement]:
        before = len(self.spoken)
        for raw in frames:
            self.run(self.engine.receive(raw, "conn1", now), now)
        return self.spoken[before:]


def parts(announcements: list[Announcement]) -> list[tuple[str, str, bool]]:
    return [(a.language, a.text, a.continues) for a in announcements]


# -- separate utterances per language --------------------------------------------------


def test_a_spanish_listener_hears_our_phrases_in_spanish_and_english_text_in_english() -> None:
    heard = Heard("es")
    said = heard.feed(localized(confirmation(timeout_seconds=60), "en"))
    assert parts(said) == [
        ("es", "Se necesita confirmación.", False),
        ("en", "Transfer $500.00 from checking to savings. The money moves at once.", True),
        (
            "es",
            "Riesgo alto. Esto no se puede deshacer. Si no responde en 1 minuto, se rechazará. "
            "Aceptar A Intro, rechazar R.",
            True,
        ),
    ]
    # One message: same urgency and ids; only the first part carries the earcon.
    assert {(a.urgency, a.event_id, a.session_id, a.kind) for a in said} == {
        (Urgency.CRITICAL, said[0].event_id, "sess_test1", "agent.awaiting.confirmation")
    }
    assert [a.earcon for a in said] == ["needs_you", None, None]


def test_an_english_listener_hears_a_spanish_question_and_its_choices_in_spanish() -> None:
    heard = Heard("en")
    question = clarification(
        question="¿Qué cuenta?",
        choices=[{"value": "sav", "label": "Ahorros"}, {"value": "chk", "label": "Corriente"}],
    )
    said = heard.feed(localized(question, "es"))
    assert parts(said) == [
        ("en", "Question.", False),
        ("es", "¿Qué cuenta?", True),
        ("en", "Choices.", True),
        ("es", "1: Ahorros; 2: Corriente.", True),
        (
            "en",
            "Answer within 2 minutes. Choose with the arrows or digits 1 to 9, then press Enter.",
            True,
        ),
    ]


def test_phrases_and_text_in_one_language_stay_one_utterance() -> None:
    heard = Heard("es-MX")
    question = clarification(question="¿Qué cuenta?", choices=None, accepted_response_kinds=None)
    said = heard.feed(localized(question, "es-MX"))
    assert parts(said) == [
        (
            "es-MX",
            "Pregunta. ¿Qué cuenta? Responda en 2 minutos. Escriba su respuesta y pulse Intro.",
            False,
        )
    ]


def test_a_yoruba_listener_hears_a_yoruba_lead_before_an_english_summary() -> None:
    heard = Heard("yo")
    said = heard.feed(
        localized(frame("agent.session.completed", summary_normal="Plan ready to review."), "en")
    )
    assert parts(said) == [("yo", "Ó ti parí.", False), ("en", "Plan ready to review.", True)]


def test_the_demo_error_in_yoruba_keeps_the_english_hint_in_an_english_voice() -> None:
    heard = Heard("yo")
    for line in demo_lines():
        heard.feed(line)
    errored = [a for a in heard.spoken if a.event_id == "evt_demo0014bank"]
    assert parts(errored) == [
        ("yo", "Àṣìṣe. Gbígbé ìwé-ìṣirò jáde kùnà nítorí iṣẹ́ ìwé kò dáhùn.", False),
        ("en", "Try the export again in a few minutes.", True),
    ]


def test_repeat_and_scheduler_never_separate_parts() -> None:
    """Parts are dropped whole or kept whole: stale, surplus, full queue, interruption."""
    first = Announcement("Pregunta.", "es", continues=False, event_id="e1")
    second = Announcement("Which account?", "en", continues=True, event_id="e1")
    scheduler = SpeechScheduler(UserSettings(after_interrupt="drop"), stale_after_seconds=10)
    assert [c.announcement.text for c in scheduler.submit(first, 0.0) if isinstance(c, Speak)] == [
        "Pregunta."
    ]
    scheduler.submit(second, 0.0)
    # The first part took long; the rest is not skipped as stale once the message began.
    current = scheduler.speaking_id
    assert current is not None
    [speak] = scheduler.on_done(current, 30.0)
    assert isinstance(speak, Speak) and speak.announcement is second

    # Stale: a whole waiting message goes, counted as one skipped update.
    scheduler = SpeechScheduler(stale_after_seconds=10)
    scheduler.submit(Announcement("busy"), 0.0)
    scheduler.submit(first, 0.0)
    scheduler.submit(second, 0.0)
    busy = scheduler.speaking_id
    assert busy is not None
    [summary] = scheduler.on_done(busy, 30.0)
    assert isinstance(summary, Speak) and summary.announcement.text == "1 more: 1 update."
    assert scheduler.drops == {"stale": 2}

    # A full queue drops the oldest whole message.
    scheduler = SpeechScheduler(max_queue=2)
    scheduler.submit(Announcement("busy"), 0.0)
    scheduler.submit(first, 0.0)
    scheduler.submit(second, 0.0)
    scheduler.submit(Announcement("news"), 0.1)
    assert [a.text for a in scheduler.queued_announcements()] == ["news"]

    # Folded by its source's newer status (issue 20): a message is let go whole or not at all.
    long_text = " ".join(["word"] * 60)
    tool = "agent.tool.invoked"
    scheduler = SpeechScheduler()
    scheduler.submit(Announcement("busy"), 0.0)
    scheduler.submit(
        Announcement("Herramienta.", "es", event_id="e2", session_id="s", kind=tool), 0
    )
    scheduler.submit(
        Announcement(long_text, "en", event_id="e2", continues=True, session_id="s", kind=tool), 0
    )
    scheduler.submit(Announcement("last", event_id="e3", session_id="s", kind=tool), 0.0)
    assert scheduler.drops == {"superseded by newer news": 2}
    busy = scheduler.speaking_id
    assert busy is not None
    scheduler.on_done(busy, 1.0)
    left = {a.event_id for a in scheduler.queued_announcements()}
    spoken = scheduler.speaking
    assert spoken is not None
    assert spoken.text == "1 more: 1 tool call." and left == {"e3"}

    # Interrupted with "drop": the rest of the interrupted message goes with it.
    scheduler = SpeechScheduler(UserSettings(after_interrupt="drop"))
    scheduler.submit(Announcement("Terminado.", "es", event_id="e4"), 0.0)
    scheduler.submit(Announcement("Plan ready.", "en", event_id="e4", continues=True), 0.0)
    scheduler.submit(Announcement("Queued other", "en", urgency=Urgency.CRITICAL), 0.1)
    boundary = scheduler.next_wakeup()  # at the end of the word being said (issue 30)
    assert boundary is not None and boundary <= 0.55
    scheduler.tick(boundary)
    critical = scheduler.speaking_id
    assert critical is not None
    assert scheduler.on_done(critical, 1.0) == []
    assert scheduler.drops == {"interrupted": 2}


def test_a_normal_interruption_drops_the_rest_of_the_interrupted_message() -> None:
    scheduler = SpeechScheduler(UserSettings(after_interrupt="drop"))
    scheduler.submit(Announcement("Terminado.", "es", event_id="e4"), 0.0)
    scheduler.submit(Announcement("Plan ready.", "en", event_id="e4", continues=True), 0.0)
    commands = scheduler.submit(Announcement("Now this", "en", interrupt=True), 0.1)
    assert isinstance(commands[0], Cancel)
    now_speaking = scheduler.speaking_id
    assert now_speaking is not None
    assert scheduler.on_done(now_speaking, 1.0) == []
    assert scheduler.drops == {"interrupted": 2}


# -- durations and counts ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "seconds", "expected"),
    [
        ("en", 60, "If you do not answer within 1 minute, it will be rejected."),
        ("en", 1, "If you do not answer within 1 second, it will be rejected."),
        ("en", 150, "If you do not answer within 2 minutes and 30 seconds, it will be rejected."),
        ("es", 60, "Si no responde en 1 minuto, se rechazará."),
        ("es", 3600, "Si no responde en 1 hora, se rechazará."),
        ("fr", 120, "Si vous ne répondez pas dans un délai de 2 minutes, ce sera refusé."),
        ("de", 60, "Wenn Sie nicht innerhalb von 1 Minute antworten, wird die Anfrage abgelehnt."),
        ("de", 120, "Wenn Sie nicht innerhalb von 2 Minuten antworten"),
        ("ar", 120, "إن لم تُجب في مدة أقصاها دقيقتان، فسيُرفض الطلب."),
        ("ar", 60, "في مدة أقصاها دقيقة،"),
        ("yo", 120, "ìṣẹ́jú 2"),
    ],
)
def test_confirmation_timeouts_use_the_languages_plural_rules(
    language: str, seconds: int, expected: str
) -> None:
    heard = Heard(language)
    said = heard.feed(localized(confirmation(timeout_seconds=seconds), language))
    assert len(said) == 1
    assert expected in said[0].text


def test_no_timeout_is_ever_said_with_the_wrong_plural_in_english() -> None:
    texts = [
        Heard("en")
        .feed(confirmation(f"rpl_t{seconds}", session=f"sess_{seconds}", timeout_seconds=seconds))[
            0
        ]
        .text
        for seconds in (*range(1, 200), 3600, 3660, 7200, 86_400)
    ]
    assert not any(" 1 minutes" in t or " 1 seconds" in t or " 1 hours" in t for t in texts)
    assert sum("within 1 minute," in t for t in texts) == 1
    assert any("within 1 minute and 1 second," in t for t in texts)


def test_skipped_updates_are_counted_with_plural_rules_in_spanish() -> None:
    for count, expected in (
        (1, "1 más: 1 actualización."),
        (3, "3 más: 3 actualizaciones."),
    ):
        scheduler = SpeechScheduler(UserSettings(languages=["es"]), stale_after_seconds=10)
        scheduler.submit(Announcement("busy"), 0.0)
        for index in range(count):
            scheduler.submit(Announcement(f"old {index}"), 0.0)
        busy = scheduler.speaking_id
        assert busy is not None
        [summary] = scheduler.on_done(busy, 30.0)
        assert isinstance(summary, Speak)
        assert summary.announcement.text == expected
        assert summary.announcement.language == "es"


# -- "already says it", per language -------------------------------------------------------

LEADS = {
    "en": "Finished.",
    "es": "Terminado.",
    "fr": "Terminé.",
    "de": "Fertig.",
    "pt-BR": "Concluído.",
    "ar": "انتهى.",
    "yo": "Ó ti parí.",
}


@pytest.mark.parametrize(
    ("language", "summary", "lead_said"),
    [
        ("en", "All done.", False),
        ("en", "Could not finish the export.", True),
        ("es", "La exportación ha terminado.", False),
        ("es", "La exportación no ha terminado.", True),
        ("es", "Informe listo para revisar.", False),
        ("fr", "Voyage préparé. Session terminée.", False),
        ("fr", "La session n'est pas terminée.", True),
        ("de", "Export abgeschlossen.", False),
        ("de", "Der Export ist nicht abgeschlossen.", True),
        ("pt-BR", "Exportação concluída.", False),
        ("pt-BR", "A exportação não foi concluída.", True),
        ("ar", "اكتمل التصدير.", False),
        ("ar", "التقرير جاهز للمراجعة.", True),
        ("yo", "Ó ti parí. $500 ti wà nínú àkáǹtì ìfowópamọ́ rẹ báyìí.", False),
        ("yo", unicodedata.normalize("NFD", "Iṣẹ́ náà ti parí."), False),
        ("yo", "Kò tíì parí.", True),
        ("yo", "Ìwé náà ti ṣetán.", False),
    ],
)
def test_a_summary_that_already_says_it_finished_gets_no_lead(
    language: str, summary: str, lead_said: bool
) -> None:
    heard = Heard(language)
    said = heard.feed(localized(frame("agent.session.completed", summary_normal=summary), language))
    assert len(said) == 1
    lead = LEADS[language]
    assert said[0].text == (f"{lead} {summary}" if lead_said else summary)


@pytest.mark.parametrize(
    ("language", "summary"),
    [
        ("es", "Exportación cancelada."),
        ("fr", "Export annulé."),
        ("de", "Export abgebrochen."),
        ("pt-BR", "Exportação cancelada."),
        ("ar", "أُلغي التصدير."),
        ("yo", "A ti fagilé ìgbéjáde náà."),
    ],
)
def test_a_summary_that_already_says_it_was_cancelled_gets_no_lead(
    language: str, summary: str
) -> None:
    heard = Heard(language)
    event = frame("agent.session.cancelled", cancelled_by="user", summary_normal=summary)
    assert parts(heard.feed(localized(event, language))) == [(language, summary, False)]


def test_the_yoruba_demo_says_it_finished_once() -> None:
    heard = Heard("yo")
    for line in demo_lines():
        heard.feed(line)
    completed = [a for a in heard.spoken if a.event_id == "evt_demo0026bank"]
    assert parts(completed) == [
        ("yo", "Ó ti parí. $500 ti wà nínú àkáǹtì ìfowópamọ́ rẹ báyìí.", False)
    ]
    assert sum(a.text.count("Ó ti parí") for a in heard.spoken) == 1


def test_a_withdrawn_question_is_named_in_its_own_language() -> None:
    """§6.8: the notice is our phrase (Spanish) and the action as the producer wrote it."""
    heard = Heard("es")
    heard.feed(localized(confirmation(timeout_seconds=60), "en"))
    cancelled = frame(
        "agent.session.cancelled", cancelled_by="producer", summary_normal="Stopped.", at=1.0
    )
    said = heard.feed(localized(cancelled, "en"), now=1.0)
    notice = [a for a in said if a.kind == "system.prompt_voided"]
    assert parts(notice) == [
        ("es", "Ya no hace falta responder:", False),
        ("en", "Transfer $500.00 from checking to savings.", True),
    ]
    assert {a.event_id for a in notice} == {heard.spoken[0].event_id}


def test_an_expired_question_in_the_listeners_language_stays_one_sentence() -> None:
    heard = Heard("es")
    question = clarification(question="¿Qué cuenta?", timeout_seconds=5)
    heard.feed(localized(question, "es"))
    heard.run(heard.engine.tick(10.0), 10.0)
    [expired] = [a for a in heard.spoken if a.kind == "system.prompt_expired"]
    assert (expired.language, expired.continues) == ("es", False)
    assert expired.text.endswith("¿Qué cuenta?")


def test_critical_speech_between_two_parts_makes_the_message_start_again() -> None:
    """Resume after a barge-in, or a critical turn between parts: the whole message again."""
    first = Announcement("Terminado.", "es", event_id="e5")
    second = Announcement("Plan ready to review.", "en", event_id="e5", continues=True)
    urgent = Announcement("Error.", "en", urgency=Urgency.CRITICAL, event_id="e6")

    def heard_after(scheduler: SpeechScheduler, now: float) -> list[str]:
        said: list[str] = []
        while (current := scheduler.speaking_id) is not None:
            commands = scheduler.on_done(current, now)
            said += [c.announcement.text for c in commands if isinstance(c, Speak)]
        return said

    # Barge-in on the second part, resume mode: both parts again, in order.
    scheduler = SpeechScheduler(UserSettings(after_interrupt="resume"))
    scheduler.submit(first, 0.0)
    scheduler.submit(second, 0.0)
    done = scheduler.speaking_id
    assert done is not None
    scheduler.on_done(done, 1.0)  # now saying the second part
    commands = scheduler.submit(urgent, 1.5)
    boundary = scheduler.next_wakeup()  # the end of the word being said (issue 30)
    assert boundary is not None and boundary <= 1.95
    commands += scheduler.tick(boundary)
    assert isinstance(commands[0], Cancel)
    assert heard_after(scheduler, 2.0) == ["Terminado.", "Plan ready to review."]

    # A critical message queued while the first part is said goes next; then the whole message.
    scheduler = SpeechScheduler()
    scheduler.submit(Announcement("Critical first", urgency=Urgency.CRITICAL), 0.0)
    scheduler.submit(first, 0.0)
    scheduler.submit(second, 0.0)
    assert heard_after(scheduler, 1.0) == ["Terminado.", "Plan ready to review."]
    scheduler = SpeechScheduler()
    scheduler.submit(first, 0.0)
    scheduler.submit(second, 0.0)
    # Arrived exactly as the first part ended (a paced backend, a replay's clock).
    scheduler._queues[Urgency.CRITICAL].append(_Queued(urgent, 0.5, 1.0))
    assert heard_after(scheduler, 1.0) == ["Error.", "Terminado.", "Plan ready to review."]


# -- §11.1.3 variants over the user's whole chain -----------------------------------------


def with_variants(raw: str, primary: str, **variants: str) -> str:
    event = json.loads(raw)
    event["localization_hints"] = {"primary_language": primary}
    event.update(variants)
    return json.dumps(event)


def test_a_listener_of_french_then_spanish_hears_the_spanish_variant() -> None:
    """No French variant: the next language of the chain wins over the English base."""
    heard = Heard("fr", "es")
    raw = with_variants(
        frame("agent.session.started", summary_normal="Checking the weather."),
        "en",
        summary_normal_es="Consultando el tiempo.",
    )
    said = heard.feed(raw)
    assert [(a.language, a.text) for a in said] == [("es", "Consultando el tiempo.")]


def test_the_first_language_of_the_chain_still_wins_when_offered() -> None:
    heard = Heard("fr", "es")
    raw = with_variants(
        frame("agent.session.started", summary_normal="Checking the weather."),
        "en",
        summary_normal_es="Consultando el tiempo.",
        summary_normal_fr="Consultation de la météo.",
    )
    assert [(a.language, a.text) for a in heard.feed(raw)] == [("fr", "Consultation de la météo.")]


def test_a_question_is_asked_in_the_second_language_of_the_chain() -> None:
    heard = Heard("fr", "es")
    raw = with_variants(
        confirmation(timeout_seconds=60),
        "en",
        action_es="Transferir 500 dólares de la cuenta corriente a la de ahorros.",
    )
    said = heard.feed(raw)
    assert ("es", "Transferir 500 dólares de la cuenta corriente a la de ahorros.") in [
        (a.language, a.text) for a in said
    ]
    assert not any("Transfer $500.00" in a.text for a in said)


def test_no_language_of_the_chain_offered_keeps_the_producers_own_text() -> None:
    heard = Heard("fr", "de")
    raw = with_variants(
        frame("agent.session.started", summary_normal="Checking the weather."),
        "en",
        summary_normal_es="Consultando el tiempo.",
    )
    assert [(a.language, a.text) for a in heard.feed(raw)] == [("en", "Checking the weather.")]
