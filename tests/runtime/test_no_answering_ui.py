"""``listen --ui none``: nothing can answer, so questions say so and name the agent's default.

Real CLI, real fixtures (the AAEP conformance captures and our bundled banking
session), speech recorded by the jsonl backend. Nothing is ever answered for the user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.shared_data import SHARED
from tests.support.producers import ws_url
from tests.support.speech_record import speak_records

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = SHARED / "aaep/fixtures"
CONFIRMATION_RUN = FIXTURES / "captured-minimal-producer-confirmation-run.jsonl"
BANKING = ROOT / "announcer/data/banking_session.jsonl"
# Key help of the Textual dialogs and of the plain line UI: none of it may be said.
KEY_HELP = ("Press A", "Type A", "press Enter", "Press Y", "Type Y", "Pulse A", "Escriba A")


def listen_without_ui(tmp_path: Path, source: Path, *extra: str) -> list[dict[str, object]]:
    speech = tmp_path / "speech.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            "--ui",
            "none",
            "--speech",
            f"jsonl:{speech}",
            "--exit-when-done",
            *extra,
            str(source),
        ],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return speak_records(speech)


def after_question(records: list[dict[str, object]], starts: str) -> tuple[str, str]:
    """The question that starts with ``starts`` and the sentence said right after it."""
    index = next(i for i, r in enumerate(records) if str(r["text"]).startswith(starts))
    question, notice = records[index], records[index + 1]
    assert notice["event_id"] == question["event_id"]  # kept with its question
    assert notice["interrupt"] is False  # never cuts the question off
    return str(question["text"]), str(notice["text"])


def test_confirmation_says_it_cannot_be_answered_and_the_default_is_reject(tmp_path: Path) -> None:
    records = listen_without_ui(tmp_path, CONFIRMATION_RUN)
    question, notice = after_question(records, "Confirmation needed.")
    assert not any(keys in question for keys in KEY_HELP)
    assert notice == (
        "This question cannot be answered here. When the time is up, "
        "the agent will apply its default and reject it."
    )
    assert not any(keys in str(r["text"]) for r in records for keys in KEY_HELP)


def test_a_default_accept_is_named_too(tmp_path: Path) -> None:
    event = json.loads((FIXTURES / "valid/agent.awaiting.confirmation.json").read_text())
    # A low-risk, undoable action may default to accept (§6.4.1); said, never done by us.
    event.update(default_decision="accept", risk_level="low", irreversible=False)
    event.pop("reversibility", None)
    source = tmp_path / "accept.jsonl"
    source.write_text(json.dumps(event) + "\n", encoding="utf-8")
    _question, notice = after_question(listen_without_ui(tmp_path, source), "Confirmation needed.")
    assert notice.endswith("the agent will apply its default and go ahead.")


def test_clarification_names_the_default_response_by_its_label(tmp_path: Path) -> None:
    records = listen_without_ui(tmp_path, BANKING)
    question, notice = after_question(records, "Question.")
    assert not any(keys in question for keys in KEY_HELP)
    # default_response "sav-3344" is the choice labelled "Everyday savings ending 3344"
    assert notice == (
        "This question cannot be answered here. When the time is up, "
        "the agent will use its default answer: Everyday savings ending 3344."
    )


def test_in_spanish(tmp_path: Path) -> None:
    records = listen_without_ui(tmp_path, CONFIRMATION_RUN, "--language", "es")
    _question, notice = after_question(records, "Se necesita confirmación.")
    assert notice == (
        "Esta pregunta no se puede responder aquí. Cuando se acabe el tiempo, "
        "el agente aplicará su opción predeterminada y la rechazará."
    )


def test_over_a_live_connection_it_declares_it_cannot_reply(tmp_path: Path) -> None:
    """§5.3.1.4: ``--ui none`` (no ``--auto-reject``) says supports_confirmation_reply false,
    so the producer applies its default at once and sends no question (issue 12, item 8)."""
    from tests.producer.live import start_producer_process, stop_process

    scenario = ROOT / "tests/producer/scenarios/confirm.json"
    producer, port = start_producer_process("--scenario", str(scenario), "--speed", "0.05")
    try:
        records = listen_without_ui_live(tmp_path, ws_url(port))
    finally:
        stop_process(producer)
    texts = [str(r["text"]) for r in records]
    assert not any(t.startswith("Confirmation needed.") for t in texts)
    assert "The email was not sent." in texts  # the producer's default: reject


def listen_without_ui_live(tmp_path: Path, source: str) -> list[dict[str, object]]:
    speech = tmp_path / "speech.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "announcer",
            "listen",
            "--ui",
            "none",
            "--speech",
            f"jsonl:{speech}",
            "--exit-when-done",
            source,
        ],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return speak_records(speech)


async def test_the_plain_ui_with_its_input_at_an_end_says_it_cannot_reply(tmp_path: Path) -> None:
    """Issue 29, item 15: ``--ui plain`` whose standard input has ended (``< /dev/null``)
    can take no answer, yet it declared it could reply. Now what the producer holds for
    the subscription, read on the producer's side, says it cannot (§5.3.1.4)."""
    import asyncio

    from tests.producer.live import wait_for
    from tests.support.scripted import scripted

    server, core = await scripted()
    listener = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "announcer", "listen", "--ui", "plain",
        "--speech", f"jsonl:{tmp_path / 'speech.jsonl'}", ws_url(server),
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip

    def declared() -> list[dict[str, object]]:
        return [sub.capabilities for sub in core.subscriptions.values()]

    try:
        await wait_for(
            lambda: (
                bool(declared())
                and all(caps["supports_confirmation_reply"] is False for caps in declared())
            )
        )
        [capabilities] = declared()
        assert capabilities["supports_clarification_reply"] is False
        assert capabilities["supported_conformance_levels"] == [1]
    finally:
        listener.terminate()
        await listener.wait()
        await server.close()
