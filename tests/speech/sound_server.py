"""A real sound path for speech tests: a private PulseAudio whose sink is read back as
samples, and a private speech-dispatcher speaking espeak-ng into it.

This machine has no sound card. Without one, speech-dispatcher's output module has no
audio to open, and whether its BEGIN and END events come back is a race inside the
server (about 1 run in 8 never sent BEGIN). With a sink, the events come, and "spoke",
"was cut off" and "has gone quiet" are measured on real audio. The fixtures are
registered in tests/speech/conftest.py.
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

from tests.speech.helpers import wait_for

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


def end_group(pid: int) -> None:
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
        end_group(server.pid)
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
            end_group(server_pid)
        end_group(launcher.pid)
        launcher.wait(timeout=30)
