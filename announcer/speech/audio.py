"""Interruptible WAV playback through a player subprocess, and WAV facts.

pyttsx3 cannot stop its own playback (it shells out to ``aplay`` and waits), so
every audio backend here synthesises to a WAV file and plays it with a player
process that ``stop`` kills: the sound ends within milliseconds on every
platform. Earcons go through the same path, so a barge-in silences them too.

Players, most preferred first: ``paplay``/``pw-play``/``aplay`` on Linux,
``afplay`` on macOS, ``winsound`` on Windows, and the sink player
(``announcer/speech/sink_player.py``), which writes the samples in real time to
files instead of a sound card: tests and benchmarks listen through it.
"""

from __future__ import annotations

import array
import enum
import math
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import wave
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

SINK_PLAYER_SCRIPT = Path(__file__).with_name("sink_player.py")


# ---------------------------------------------------------------- WAV facts


@dataclass(frozen=True, slots=True)
class WavInfo:
    channels: int
    sample_width: int
    frame_rate: int
    frames: int

    @property
    def duration_s(self) -> float:
        return self.frames / self.frame_rate if self.frame_rate else 0.0


def wav_info(path: Path) -> WavInfo:
    with wave.open(str(path), "rb") as wav:
        return WavInfo(wav.getnchannels(), wav.getsampwidth(), wav.getframerate(), wav.getnframes())


def wav_rms(path: Path) -> float:
    """Root mean square of a 16-bit WAV, from 0.0 (silence) to 1.0 (full scale)."""
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"{path}: sample width must be 2 bytes, got {wav.getsampwidth()}")
        samples = array.array("h", wav.readframes(wav.getnframes()))
    if sys.byteorder == "big":
        samples.byteswap()
    if not samples:
        return 0.0
    return math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768.0


def write_silence(path: Path, milliseconds: int, frame_rate: int = 22050) -> Path:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(frame_rate)
        wav.writeframes(b"\x00\x00" * (frame_rate * milliseconds // 1000))
    return path


def concatenate_wavs(sources: Sequence[Path], target: Path) -> Path:
    """Join WAVs of identical format (earcon then speech) into one file."""
    params = None
    with wave.open(str(target), "wb") as out:
        for source in sources:
            with wave.open(str(source), "rb") as wav:
                here = (wav.getnchannels(), wav.getsampwidth(), wav.getframerate())
                if params is None:
                    params = here
                    out.setnchannels(here[0])
                    out.setsampwidth(here[1])
                    out.setframerate(here[2])
                elif here != params:
                    raise ValueError(f"{source}: format {here} differs from {params}")
                out.writeframes(wav.readframes(wav.getnframes()))
    return target


# ---------------------------------------------------------------- playback


class PlaybackOutcome(enum.Enum):
    FINISHED = "finished"
    STOPPED = "stopped"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class PlaybackResult:
    outcome: PlaybackOutcome
    reason: str = ""


class Playback(Protocol):
    def stop(self) -> None:
        """Silence now; returns once the sound has stopped."""

    def append(self, path: Path) -> None:
        """Queue one more file (open-ended playbacks only)."""

    def end(self) -> None:
        """No more files will be appended: finish after the last one."""

    def is_active(self) -> bool: ...


class Player(Protocol):
    name: str

    def play(
        self,
        paths: Sequence[Path],
        on_finished: Callable[[PlaybackResult], None],
        *,
        open_ended: bool = False,
    ) -> Playback:
        """Play ``paths`` one after the other; ``on_finished`` is called exactly once.

        With ``open_ended`` the playback waits for more files until ``end`` is called.
        """

    def close(self) -> None: ...


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


class _Playlist:
    """Files to play in order; an open-ended list grows while it plays (long texts are
    synthesised a sentence ahead of the voice) until ``end`` is called."""

    def __init__(self, paths: Sequence[Path], open_ended: bool) -> None:
        self._queue: queue.Queue[Path | None] = queue.Queue()
        for path in paths:
            self._queue.put(path)
        if not open_ended:
            self._queue.put(None)

    def append(self, path: Path) -> None:
        self._queue.put(path)

    def end(self) -> None:
        self._queue.put(None)

    def next(self) -> Path | None:
        return self._queue.get()


class _ThreadPlayback:
    """A playlist played on a thread of its own; ``on_finished`` hears the outcome once.

    Subclasses say how to play (``_play``) and how to stop; they start the thread
    with ``_start`` once their own state is set.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        on_finished: Callable[[PlaybackResult], None],
        open_ended: bool,
    ) -> None:
        self._playlist = _Playlist(paths, open_ended)
        self._on_finished = on_finished
        self._done = threading.Event()

    def _start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="announcer-playback", daemon=True)
        thread.start()
        return thread

    def _run(self) -> None:
        result = PlaybackResult(PlaybackOutcome.FINISHED)
        try:
            result = self._play()
        finally:
            self._done.set()
            self._on_finished(result)

    def _play(self) -> PlaybackResult:
        raise NotImplementedError

    def append(self, path: Path) -> None:
        self._playlist.append(path)

    def end(self) -> None:
        self._playlist.end()

    def is_active(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)


class _ProcessPlayback(_ThreadPlayback):
    """One player process per file; ``stop`` kills the current one and waits for it."""

    def __init__(
        self,
        paths: Sequence[Path],
        start_process: Callable[[Path], subprocess.Popen[bytes]],
        on_finished: Callable[[PlaybackResult], None],
        player_name: str,
        open_ended: bool = False,
    ) -> None:
        super().__init__(paths, on_finished, open_ended)
        self._start_process = start_process
        self._player_name = player_name
        self._lock = threading.Lock()
        self._stopped = False
        self.process: subprocess.Popen[bytes] | None = None
        self.processes: list[subprocess.Popen[bytes]] = []
        self._thread = self._start()

    def _play(self) -> PlaybackResult:
        result = PlaybackResult(PlaybackOutcome.FINISHED)
        while True:
            path = self._playlist.next()
            with self._lock:
                if self._stopped or path is None:
                    break
                try:
                    process = self._start_process(path)
                except OSError as exc:
                    result = PlaybackResult(
                        PlaybackOutcome.FAILED, f"{self._player_name} could not start: {exc}"
                    )
                    break
                self.process = process
                self.processes.append(process)
            stderr = process.stderr.read() if process.stderr is not None else b""
            process.wait()
            with self._lock:
                if self._stopped:
                    break
            if process.returncode != 0:
                detail = _last_line(stderr.decode("utf-8", "replace"))
                result = PlaybackResult(
                    PlaybackOutcome.FAILED,
                    f"{self._player_name} failed (exit status {process.returncode})"
                    + (f": {detail}" if detail else ""),
                )
                break
        with self._lock:
            if self._stopped:
                result = PlaybackResult(PlaybackOutcome.STOPPED)
        return result

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            process = self.process
        self._playlist.end()  # wake a playlist waiting for its next file
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


class CommandPlayer:
    """A command-line player such as ``aplay -q FILE``."""

    def __init__(self, name: str, argv: Sequence[str]) -> None:
        self.name = name
        self._argv = list(argv)

    def command_for(self, path: Path) -> list[str]:
        return [*self._argv, str(path)]

    def start_process(self, path: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.command_for(path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def play(
        self,
        paths: Sequence[Path],
        on_finished: Callable[[PlaybackResult], None],
        *,
        open_ended: bool = False,
    ) -> _ProcessPlayback:
        return _ProcessPlayback(paths, self.start_process, on_finished, self.name, open_ended)

    def close(self) -> None:
        """Release anything kept ready between plays."""


class SinkPlayer(CommandPlayer):
    """Plays into files in real time, as a sound card would consume the samples.

    Each file played becomes ``out_dir/NNNN.wav`` (in play order), growing while it
    plays and cut short when stopped. It is the ears of the tests and benchmarks
    on machines without a sound card. Starting Python takes tens of milliseconds,
    so one player process is always kept on standby, waiting on its stdin for the
    next file: playing is then a pipe write, and a killed player is replaced at once.
    """

    def __init__(self, out_dir: Path, *, raw_out: Path | None = None) -> None:
        super().__init__("sink", [sys.executable, "-I", "-S", str(SINK_PLAYER_SCRIPT)])
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._raw_out = raw_out
        self._count = 0
        self._lock = threading.Lock()
        self._standby: subprocess.Popen[bytes] | None = None
        self.played: list[tuple[Path, Path]] = []

    def _next_out(self, path: Path) -> Path:
        self._count += 1
        out = self._raw_out or self.out_dir / f"{self._count:04d}.wav"
        self.played.append((path, out))
        return out

    def command_for(self, path: Path) -> list[str]:
        with self._lock:
            out = self._next_out(path)
        raw = ["--raw"] if self._raw_out is not None else []
        return [*self._argv, *raw, "--out", str(out), str(path)]

    def _spawn_standby(self) -> subprocess.Popen[bytes]:
        raw = ["--raw"] if self._raw_out is not None else []
        return subprocess.Popen(
            [*self._argv, *raw, "--standby"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def start_process(self, path: Path) -> subprocess.Popen[bytes]:
        with self._lock:
            process = self._standby
            self._standby = None
            if process is None or process.poll() is not None:
                process = self._spawn_standby()
            out = self._next_out(path)
        assert process.stdin is not None
        process.stdin.write(f"{path}\t{out}\n".encode())
        process.stdin.close()
        replacement = self._spawn_standby()
        with self._lock:
            old, self._standby = self._standby, replacement
        if old is not None:
            old.kill()
            old.wait()
        return process

    def close(self) -> None:
        with self._lock:
            standby, self._standby = self._standby, None
        if standby is not None:
            standby.kill()
            standby.wait()
            for stream in (standby.stdin, standby.stderr):
                if stream is not None:
                    stream.close()


class _WinsoundPlayback(_ThreadPlayback):
    """Windows: winsound plays asynchronously; purging stops it at once."""

    def __init__(
        self,
        paths: Sequence[Path],
        on_finished: Callable[[PlaybackResult], None],
        open_ended: bool = False,
    ) -> None:
        import winsound  # type: ignore[import-not-found,unused-ignore]

        super().__init__(paths, on_finished, open_ended)
        self._winsound: Any = winsound
        self._stop = threading.Event()
        self._start()

    def _play(self) -> PlaybackResult:
        ws = self._winsound
        result = PlaybackResult(PlaybackOutcome.FINISHED)
        while True:
            path = self._playlist.next()
            if path is None or self._stop.is_set():
                break
            try:
                ws.PlaySound(str(path), ws.SND_FILENAME | ws.SND_ASYNC | ws.SND_NODEFAULT)
            except RuntimeError as exc:
                result = PlaybackResult(PlaybackOutcome.FAILED, f"winsound failed: {exc}")
                break
            self._stop.wait(wav_info(path).duration_s)
        if self._stop.is_set():
            result = PlaybackResult(PlaybackOutcome.STOPPED)
        return result

    def stop(self) -> None:
        self._stop.set()
        self._playlist.end()
        ws = self._winsound
        ws.PlaySound(None, ws.SND_PURGE)


class WinsoundPlayer:
    name = "winsound"

    def play(
        self,
        paths: Sequence[Path],
        on_finished: Callable[[PlaybackResult], None],
        *,
        open_ended: bool = False,
    ) -> _WinsoundPlayback:
        return _WinsoundPlayback(paths, on_finished, open_ended)

    def close(self) -> None: ...


def _probe(player: CommandPlayer) -> str | None:
    """Play 20 ms of silence; return why it failed, or None when audio output works."""
    with tempfile.TemporaryDirectory(prefix="announcer-probe-") as tmp:
        probe = write_silence(Path(tmp) / "probe.wav", 20)
        try:
            done = subprocess.run(
                player.command_for(probe), capture_output=True, timeout=5, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{player.name} did not play a test sound ({exc})"
        if done.returncode != 0:
            detail = _last_line(done.stderr.decode("utf-8", "replace"))
            return f"{player.name} cannot open an audio device ({detail or done.returncode})"
    return None


_LINUX_PLAYERS = (("paplay", ["paplay"]), ("pw-play", ["pw-play"]), ("aplay", ["aplay", "-q"]))


def find_audio_player() -> tuple[Player | None, str]:
    """The first player that can really make sound here, or None and a one-line reason."""
    if sys.platform == "win32":
        return WinsoundPlayer(), "winsound"
    if sys.platform == "darwin":
        if shutil.which("afplay"):
            return CommandPlayer("afplay", ["afplay"]), "afplay"
        return None, "afplay is missing"
    reasons: list[str] = []
    for name, argv in _LINUX_PLAYERS:
        if shutil.which(argv[0]) is None:
            continue
        player = CommandPlayer(name, argv)
        reason = _probe(player)
        if reason is None:
            return player, name
        reasons.append(reason)
    if not reasons:
        return None, "no audio player found (install alsa-utils for aplay)"
    return None, "; ".join(reasons)
