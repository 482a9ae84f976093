"""The text and jsonl backends, the speech driver, and ``announcer replay``/``demo``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.pipeline import Engine
from announcer.speech.backend import SpeechBackend, VoiceSettings
from announcer.speech.driver import SpeechDriver
from announcer.speech.jsonl import JsonlBackend
from announcer.speech.text import TextBackend
from tests.engine.aaep import frame
from tests.shared_data import SHARED as SHARED_ROOT
from tests.support.speech_record import spoken_in as spoken_texts

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "announcer" / "data" / "banking_session.jsonl"
FIXTURES = SHARED_ROOT / "aaep/fixtures"
JSONL_KEYS = {"action", "text", "language", "urgency", "interrupt", "event_id", "session_id", "t"}


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command, printing: ``--speech text`` unless the test names another backend
    (by default a replay speaks through ``auto``: tests/speech/test_replay_aloud.py)."""
    if "--speech" not in args and args[0] in ("replay", "demo"):
        args = (*args, "--speech", "text")
    return subprocess.run(
        [sys.executable, "-m", "announcer", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_backends_satisfy_the_interface() -> None:
    assert isinstance(TextBackend(io.StringIO()), SpeechBackend)
    assert isinstance(JsonlBackend(io.StringIO()), SpeechBackend)


def test_text_backend_writes_one_plain_line_per_announcement() -> None:
    out = io.StringIO()
    backend = TextBackend(out)
    done: list[int] = []
    backend.speak(Announcement("Two\nlines  here."), VoiceSettings(), lambda: done.append(1))
    backend.speak(Announcement("[b]literal[/b]"), VoiceSettings(), lambda: done.append(2))
    assert out.getvalue() == "Two lines here.\n[b]literal[/b]\n"
    assert done == [1, 2]


def test_driver_turns_a_barge_in_into_a_cancel_line() -> None:
    out = io.StringIO()
    clock = [0.0]
    engine = Engine()

    class Slow(JsonlBackend):
        """Finishes only when told, like a real synthesiser."""

        def speak(
            self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
        ) -> None:
            super().speak(announcement, voice, lambda: None)

    driver = SpeechDriver(Slow(out, clock=lambda: clock[0]))
    driver.execute(
        # Another session's news: critical news never cuts off its own session's lead-up.
        engine.receive(
            frame("agent.tool.invoked", session="sess_o", tool="t", summary_normal="Working."),
            "c",
            0.0,
        )
    )
    clock[0] = 1.5
    # Critical news cuts off another session's status (a question would wait for the end
    # of the sentence instead, issue 20).
    driver.execute(
        engine.receive(
            frame(
                "agent.session.errored",
                urgency="critical",
                error_category="permanent",
                summary_normal="The export failed.",
            ),
            "c",
            1.5,
        )
    )
    # Issue 30 item 4: cut at the end of the word being said, within half a second.
    wake = engine.next_wakeup()
    assert wake is not None and 1.5 <= wake <= 1.95
    clock[0] = wake
    driver.execute(engine.tick(wake))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["action"] for r in records] == ["speak", "cancel", "speak"]
    assert all(set(r) == JSONL_KEYS for r in records)
    assert records[1]["text"] == "Working."
    assert records[2]["urgency"] == "critical" and records[2]["interrupt"] is True
    assert records[2]["t"] == round(wake, 3)


def test_driver_accepts_completions_from_another_thread() -> None:
    woke = threading.Event()

    class Threaded(TextBackend):
        def speak(
            self, announcement: Announcement, voice: VoiceSettings, on_done: Callable[[], None]
        ) -> None:
            threading.Thread(target=on_done).start()

    driver = SpeechDriver(Threaded(io.StringIO()), notify=woke.set)
    engine = Engine()
    driver.execute(
        engine.receive(frame("agent.tool.invoked", tool="t", summary_normal="Hi."), "c", 0.0)
    )
    assert woke.wait(timeout=30)
    assert driver.take_completed() == [engine.scheduler.speaking_id]


def run_replay(*options: str) -> list[dict[str, object]]:
    result = cli("replay", str(DEMO), "--speech", "jsonl", "--no-delay", *options)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_replay_jsonl_records_have_the_shared_format() -> None:
    records = run_replay()
    assert records and all(set(r) == JSONL_KEYS for r in records)
    times = [float(r["t"]) for r in records]  # type: ignore[arg-type]
    assert times == sorted(times)
    # The clarification barges in on normal speech; the cut is recorded.
    assert any(r["action"] == "cancel" for r in records)


def test_replay_verbosity_changes_what_is_said() -> None:
    terse = spoken_texts(run_replay("--verbosity", "terse"))
    normal = spoken_texts(run_replay("--verbosity", "normal"))
    detailed = spoken_texts(run_replay("--verbosity", "detailed"))
    assert terse[0] == "Banking assistant started."
    # Issue 20: at normal verbosity a session's start is a status line fitted to the rate.
    assert normal[0] == "Harbor Bank Assistant is moving $500 from checking…"
    assert detailed[0].startswith("Harbor Bank Assistant is moving $500 from your checking account")
    assert sum(map(len, terse)) < sum(map(len, normal))


def test_replay_cognitive_load_changes_how_much_is_said() -> None:
    low = spoken_texts(run_replay("--cognitive-load", "low"))
    medium = spoken_texts(run_replay("--cognitive-load", "medium"))
    high = spoken_texts(run_replay("--cognitive-load", "high", "--pace", "400"))
    assert len(low) < len(medium) < len(high)
    assert not any("Checking the balance" in text for text in low)
    # Low load says the streamed answer once, whole.
    assert any(t.startswith("Transferred $500.00 successfully. Your new checking") for t in low)
    assert any("Working out which accounts you mean" in t or "Matching" in t for t in high)


def test_replay_language_prefers_matching_variants() -> None:
    said = spoken_texts(run_replay("--language", "yo"))
    assert said[0].startswith("Olùrànlọ́wọ́ Harbor Bank")


def test_replay_text_backend_is_plain_lines() -> None:
    result = cli("replay", str(DEMO), "--no-delay", "--speech", "text")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Harbor Bank Assistant is moving $500 from checking…"
    assert lines[-1] == "All done. $500 is now in your savings account."
    assert any(line.startswith("Error. The statement export failed") for line in lines)
    assert not any(line.startswith("{") for line in lines)


@pytest.mark.parametrize(
    "name",
    ["captured-minimal-producer-run.jsonl", "captured-minimal-producer-confirmation-run.jsonl"],
)
def test_replay_plays_the_reference_producer_captures(name: str) -> None:
    result = cli("replay", str(FIXTURES / name), "--no-delay")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert result.stderr == ""


def test_replay_reports_invalid_lines_and_keeps_going(tmp_path: Path) -> None:
    bad = tmp_path / "mixed.jsonl"
    good = frame("agent.tool.invoked", tool="t", summary_normal="Still here.")
    bad.write_text("{not json\n" + good + "\n[1, 2]\n", encoding="utf-8")
    result = cli("replay", str(bad), "--no-delay")
    assert result.returncode == 0
    assert result.stdout == "Still here.\n"
    assert "2 of 3 messages" in result.stderr and "announcer validate" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = cli("replay", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 2
    assert "no such file" in result.stderr and "Traceback" not in result.stderr


def test_replay_reads_standard_input() -> None:
    result = cli(
        "replay",
        "-",
        "--no-delay",
        stdin=frame("agent.tool.invoked", tool="t", summary_normal="Piped.") + "\n",
    )
    assert result.stdout == "Piped.\n"


def test_replay_with_speed_honours_timestamps_quickly() -> None:
    result = cli("replay", str(DEMO), "--speed", "200")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) > 10


def test_demo_is_the_default_command() -> None:
    result = cli("demo", "--no-delay")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("Harbor Bank Assistant")


def test_an_urgent_line_in_the_demo_is_critical() -> None:
    records = run_replay()
    critical = [
        r for r in records if r["urgency"] == Urgency.CRITICAL.value and r["action"] == "speak"
    ]
    kinds = [str(r["text"]).split(":")[0].split(".")[0] for r in critical]
    # Why a critical question ended is said at its urgency too: the user heard the
    # question and may be about to answer it.
    # The first withdrawal, with the agent's reason and no other question open, is short
    # (issue 30 item 4); the second names its question.
    assert kinds == [
        "Question",
        "Withdrawn",
        "Confirmation needed",
        "No answer needed any more",
        "Error",
    ]


def test_replay_reads_a_pretty_printed_single_event() -> None:
    result = cli(
        "replay", str(FIXTURES / "valid" / "agent.tool.invoked.high-risk.json"), "--no-delay"
    )
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == "Transferring $500 from checking to savings. This cannot be undone.\n"


def test_replay_of_a_rejected_confirmation_warns_the_listener() -> None:
    result = cli("replay", str(FIXTURES / "invalid" / "wrong-default-decision.json"), "--no-delay")
    # issue 22 item 5: the question keeps its words, the risk and the dangerous default.
    assert result.stdout == (
        "Unreadable question from bad-bank-agent; it cannot be answered here: Delete all "
        "customer records. All records permanently deleted from production database. High "
        "risk. This cannot be undone. If you do not answer within 1 minute, the agent will "
        "go ahead.\n"
    )
    assert "1 of 1 messages" in result.stderr


def test_replay_and_demo_start_from_the_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file = tmp_path / "config.toml"
    settings_file.write_text('# mine\nverbosity = "terse"\n', encoding="utf-8")
    monkeypatch.setenv("ANNOUNCER_CONFIG", str(settings_file))
    assert spoken_texts(run_replay())[0] == "Banking assistant started."
    # A flag wins over the file.
    normal = spoken_texts(run_replay("--verbosity", "normal"))
    assert normal[0].startswith("Harbor Bank Assistant is moving $500")
    demo = cli("demo", "--no-delay")
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.splitlines()[0] == "Banking assistant started."
    # The environment wins over the file; --config names another file.
    monkeypatch.setenv("ANNOUNCER_VERBOSITY", "detailed")
    assert spoken_texts(run_replay())[0].startswith(
        "Harbor Bank Assistant is moving $500 from your"
    )
    monkeypatch.delenv("ANNOUNCER_VERBOSITY")
    other = tmp_path / "other.toml"
    other.write_text('verbosity = "detailed"\n', encoding="utf-8")
    detailed = spoken_texts(run_replay("--config", str(other)))
    assert detailed[0].startswith("Harbor Bank Assistant is moving $500 from your")
