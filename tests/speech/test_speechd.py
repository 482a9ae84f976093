"""speech-dispatcher through its real server (a private instance on a socket of our own)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
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

# the bindings' reader thread ends with sys.exit() when the connection closes
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


@pytest.fixture
def speechd_address(tmp_path: Path) -> Iterator[str]:
    if shutil.which("speech-dispatcher") is None:
        pytest.skip("speech-dispatcher is a Linux service; ./test installs it on Debian")
    socket_path = tmp_path / "speechd.sock"
    pid_file = tmp_path / "speechd.pid"
    launcher = subprocess.Popen(
        [
            "speech-dispatcher",
            "--run-single",
            "--timeout",
            "0",
            "--communication-method",
            "unix_socket",
            "--socket-path",
            str(socket_path),
            "--pid-file",
            str(pid_file),
            "--log-dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_for(lambda: socket_path.exists() and pid_file.exists())
        yield f"unix_socket:{socket_path}"
    finally:
        # the server detaches into a session of its own (pid in its pid file), and its
        # output modules join it: end exactly that group, then the launcher
        server_pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
        if server_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server_pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)
        launcher.wait(timeout=30)


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


def test_speaks_through_the_server_and_stops_on_demand(speechd_address: str) -> None:
    backend = SpeechdBackend(address=speechd_address, autospawn=False)
    backend.start()
    try:
        assert isinstance(backend, SpeechBackend) and backend.capabilities.has_priorities
        assert any(lang.startswith("en") for _, lang, _ in backend.voices())
        done = Done()
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
