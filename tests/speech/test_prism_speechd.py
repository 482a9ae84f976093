"""prismatoid's Speech Dispatcher backend through a real server, heard through a real sink.

The test starts its own PulseAudio (a private socket, a pipe sink clocked like a sound
card) and its own speech-dispatcher (its own configuration: espeak-ng into that
PulseAudio, its own socket). What the sink plays is read back as samples, so "spoke",
"was cut off by a critical message" and "has gone quiet" are measured on real audio.
"""

from __future__ import annotations

import array
import contextlib
import math
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import VoiceSettings
from announcer.speech.screenreader import PrismSpeechdBackend, ScreenReaderBackend

from .helpers import Done, wait_for

RATE = 22050  # the sink's format: 16-bit mono, as espeak-ng speaks
BYTES_PER_S = RATE * 2
WINDOW = RATE // 10  # 100 ms
LOUD = 0.01  # RMS of a 100 ms window that has speech in it


@dataclass
class Capture:
    """What the sink has played so far: bytes, appended in real time by a reader thread."""

    data: bytearray = field(default_factory=bytearray)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mark(self) -> int:
        with self.lock:
            return len(self.data) // 2

    def loud_windows(self, start: int, end: int | None = None) -> list[bool]:
        with self.lock:
            samples = array.array("h", bytes(self.data[: len(self.data) // 2 * 2]))
        end = len(samples) if end is None else end
        loud = []
        for at in range(start, end - WINDOW + 1, WINDOW):
            window = samples[at : at + WINDOW]
            rms = math.sqrt(sum(x * x for x in window) / len(window)) / 32768
            loud.append(rms > LOUD)
        return loud

    def heard_since(self, start: int) -> bool:
        return any(self.loud_windows(start))

    def quiet_for(self, start: int, seconds: float) -> bool:
        """The last ``seconds`` since ``start`` were silent."""
        tail = self.loud_windows(start)[-int(seconds * 10) :]
        return len(tail) >= int(seconds * 10) and not any(tail)


def _end_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@pytest.fixture
def pulse(tmp_path: Path) -> Iterator[tuple[str, Capture]]:
    """A private PulseAudio whose only sink writes what it plays to a FIFO we read."""
    if shutil.which("pulseaudio") is None:
        pytest.skip("pulseaudio is missing; ./test installs it on Debian")
    runtime = tmp_path / "pulse"
    runtime.mkdir()
    fifo = runtime / "played.raw"
    socket_path = runtime / "native"
    env = {
        **os.environ,
        "HOME": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
        "PULSE_RUNTIME_PATH": str(runtime),
        "PULSE_STATE_PATH": str(runtime / "state"),
    }
    server = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--use-pid-file=no",
            f"--log-target=file:{runtime / 'pulse.log'}",
            "-L",
            f"module-native-protocol-unix socket={socket_path} auth-anonymous=1",
            "-L",
            f"module-pipe-sink file={fifo} sink_name=capture format=s16le rate={RATE} "
            "channels=1 use_system_clock_for_timing=yes",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    capture = Capture()
    reader: threading.Thread | None = None
    try:
        assert wait_for(
            lambda: (socket_path.exists() and fifo.exists()) or server.poll() is not None
        )
        assert server.poll() is None, (runtime / "pulse.log").read_text()

        def read() -> None:
            with fifo.open("rb", buffering=0) as played:
                while chunk := played.read(4096):
                    with capture.lock:
                        capture.data += chunk

        reader = threading.Thread(target=read, name="pulse-capture", daemon=True)
        reader.start()
        assert wait_for(lambda: capture.mark() > 0)
        yield f"unix:{socket_path}", capture
    finally:
        _end_group(server.pid)
        server.wait(timeout=30)
        if reader is not None:
            reader.join(timeout=30)


@pytest.fixture
def speechd_on_pulse(
    tmp_path: Path, pulse: tuple[str, Capture], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Capture]:
    """speech-dispatcher with a configuration of its own, speaking into ``pulse``."""
    if shutil.which("speech-dispatcher") is None:
        pytest.skip("speech-dispatcher is a Linux service; ./test installs it on Debian")
    module_conf = Path("/etc/speech-dispatcher/modules/espeak-ng.conf")
    if not module_conf.is_file():
        pytest.skip("speech-dispatcher-espeak-ng is missing")
    pulse_server, capture = pulse
    conf = tmp_path / "speechd-conf"
    (conf / "modules").mkdir(parents=True)
    (conf / "modules" / "espeak-ng.conf").write_text(module_conf.read_text())
    (conf / "speechd.conf").write_text(
        'AudioOutputMethod "pulse"\n'
        'AddModule "espeak-ng" "sd_espeak-ng" "espeak-ng.conf"\n'
        "DefaultModule espeak-ng\n"
        'DefaultLanguage "en"\n'
    )
    socket_path = tmp_path / "speechd.sock"
    pid_file = tmp_path / "speechd.pid"
    launcher = subprocess.Popen(
        [
            "speech-dispatcher",
            "--run-single",
            "--timeout",
            "0",
            "--config-dir",
            str(conf),
            "--communication-method",
            "unix_socket",
            "--socket-path",
            str(socket_path),
            "--pid-file",
            str(pid_file),
            "--log-dir",
            str(tmp_path),
        ],
        env={**os.environ, "PULSE_SERVER": pulse_server, "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_for(lambda: socket_path.exists() and pid_file.exists())
        # libspeechd (inside prismatoid) finds the server here, and never spawns another
        monkeypatch.setenv("SPEECHD_ADDRESS", f"unix_socket:{socket_path}")
        yield capture
    finally:
        server_pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
        if server_pid is not None:
            _end_group(server_pid)
        _end_group(launcher.pid)
        launcher.wait(timeout=30)


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
