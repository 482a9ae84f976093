"""speech-dispatcher through its real server (a private instance on a socket of our own)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.speechd_backend import (
    SpeechdBackend,
    import_speechd,
    priority_for,
    ssip_rate,
)

from .helpers import Done, wait_for
from .sound_server import Capture

# the bindings' reader thread ends with sys.exit() when the connection closes
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


@pytest.fixture
def speechd_address(speechd_on_pulse: Capture) -> str:
    """The private server speaking into a real sink (tests/speech/sound_server.py): with no
    audio to open, the server's BEGIN event was a race it lost about 1 time in 8."""
    return os.environ["SPEECHD_ADDRESS"]


def test_the_bindings_import_from_the_system_when_the_venv_lacks_them() -> None:
    if shutil.which("speech-dispatcher") is None:
        pytest.skip("speech-dispatcher is a Linux service")
    module = import_speechd()
    assert module is not None and hasattr(module, "SSIPClient")


@pytest.mark.parametrize(
    ("urgency", "kind", "priority"),
    [
        (Urgency.CRITICAL, "agent.confirmation.requested", "important"),
        (Urgency.NORMAL, "agent.tool.invoked", "message"),
        (Urgency.NORMAL, "agent.output.streaming", "text"),
        (Urgency.BACKGROUND, "agent.state.changed", "notification"),
        (Urgency.BACKGROUND, "agent.progress", "progress"),
    ],
)
def test_urgency_maps_to_speech_dispatcher_priorities(
    urgency: Urgency, kind: str, priority: str
) -> None:
    assert priority_for(Announcement("x", urgency=urgency, kind=kind)) == priority


def test_rate_maps_onto_ssip_scale() -> None:
    assert ssip_rate(180) == 0
    assert ssip_rate(80) == -100 and ssip_rate(450) == 100
    assert ssip_rate(30) == -100 and ssip_rate(900) == 100
    assert 0 < ssip_rate(250) < 100


def test_no_server_is_a_clear_one_line_reason(tmp_path: Path) -> None:
    if import_speechd() is None:
        pytest.skip("speech-dispatcher bindings absent")
    backend = SpeechdBackend(address=f"unix_socket:{tmp_path / 'none.sock'}", autospawn=False)
    with pytest.raises(BackendUnavailable, match="no speech-dispatcher server answers") as err:
        backend.start()
    assert "\n" not in str(err.value)


def test_speaks_through_the_server_and_stops_on_demand(
    speechd_address: str, speechd_on_pulse: Capture
) -> None:
    capture = speechd_on_pulse
    backend = SpeechdBackend(address=speechd_address, autospawn=False)
    backend.start()
    try:
        assert isinstance(backend, SpeechBackend) and backend.capabilities.has_priorities
        assert any(lang.startswith("en") for _, lang, _ in backend.voices())
        done = Done()
        began = capture.mark()
        backend.speak(
            Announcement("A long announcement " * 20, urgency=Urgency.CRITICAL),
            VoiceSettings(rate_wpm=200, pitch=0.5, volume=0.8),
            done,
        )
        message = backend._current
        assert message is not None
        backend.flush(timeout=30)
        # the server has really begun speaking it (its BEGIN event came back)
        assert wait_for(lambda: message.began)
        assert wait_for(lambda: capture.heard_since(began)), "no speech reached the sink"
        assert backend.is_speaking()
        assert backend._applied["priority"] == "important"
        backend.stop()
        assert done.wait() and done.calls == 1
        assert not backend.is_speaking()
        again = Done()
        backend.speak(Announcement("Bonjour.", language="fr"), VoiceSettings(), again)
        # stop never waits for the server, which may be busy with its (absent) sound card
        backend.stop()
        assert again.calls == 1 and not backend.is_speaking()
    finally:
        backend.close()


def test_closing_right_after_a_message_is_not_a_failure(
    speechd_address: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A message still waiting to go out when the backend closes (announcer ending) is
    not logged as "speech-dispatcher stopped answering": the command thread used to send
    it on the client close() had just taken away."""
    for _ in range(5):  # the race: close() before the command thread sends the message
        backend = SpeechdBackend(address=speechd_address, autospawn=False)
        backend.start()
        done = Done()
        backend.speak(Announcement("Goodbye."), VoiceSettings(), done)
        backend.stop()
        backend.close()
        assert done.calls == 1
    assert not [r for r in caplog.records if "stopped answering" in r.getMessage()]
