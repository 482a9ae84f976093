"""prismatoid's Speech Dispatcher backend through a real server, heard through a real sink.

The test starts its own PulseAudio (a private socket, a pipe sink clocked like a sound
card) and its own speech-dispatcher (its own configuration: espeak-ng into that
PulseAudio, its own socket). What the sink plays is read back as samples, so "spoke",
"was cut off by a critical message" and "has gone quiet" are measured on real audio.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import VoiceSettings
from announcer.speech.screenreader import PrismSpeechdBackend, ScreenReaderBackend

from .helpers import Done, wait_for
from .sound_server import Capture

LONG = "This sentence keeps the speech server busy for a long while. " * 12


def test_speaks_is_cut_off_by_a_critical_message_and_goes_quiet(
    speechd_on_pulse: Capture,
) -> None:
    capture = speechd_on_pulse
    backend = ScreenReaderBackend(target="speechd", braille="off")
    backend.start()
    try:
        assert backend.output_name == "Speech Dispatcher"
        first, second = Done(), Done()
        began = capture.mark()
        backend.speak(Announcement(LONG), VoiceSettings(), first)
        assert wait_for(lambda: capture.heard_since(began)), "no speech reached the sink"
        assert backend.is_speaking() and first.calls == 0
        # a critical message arrives: what was being said is cut at once
        cut = capture.mark()
        backend.speak(
            Announcement("Critical: the build failed.", urgency=Urgency.CRITICAL),
            VoiceSettings(),
            second,
        )
        assert first.calls == 1
        assert second.wait() and second.calls == 1
        assert not backend.is_speaking()
        # the sink goes quiet soon after the short critical message, long before the rest
        # of the long text (about 50 seconds of speech) could have been said
        assert wait_for(
            lambda: capture.heard_since(cut) and capture.quiet_for(cut, 1.5), timeout=60
        )
        heard_after_cut = sum(capture.loud_windows(cut)) / 10
        assert 0.5 < heard_after_cut < 6, heard_after_cut
    finally:
        backend.close()


def test_the_auto_chain_joins_the_running_server_without_python3_speechd(
    speechd_on_pulse: Capture,
) -> None:
    capture = speechd_on_pulse
    backend = PrismSpeechdBackend(autospawn=False)
    backend.start()
    try:
        done = Done()
        began = capture.mark()
        backend.speak(Announcement("Tests passed."), VoiceSettings(), done)
        assert wait_for(lambda: capture.heard_since(began))
        assert done.wait() and done.calls == 1
    finally:
        backend.close()


def test_the_auto_chain_starts_no_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPEECHD_ADDRESS", f"unix_socket:{tmp_path / 'nobody.sock'}")
    with pytest.raises(Exception, match="no speech-dispatcher server is running"):
        PrismSpeechdBackend(autospawn=False).start()
    assert not (tmp_path / "nobody.sock").exists()
