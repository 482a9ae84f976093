"""Backends by name, for the CLI and the runtime: ``create_backend("auto", settings)``.

Names: auto, pyttsx3, screenreader, speechd, wav, text, jsonl, paced. The text and
jsonl backends live in ``announcer.speech.text`` / ``announcer.speech.jsonl``
and are loaded lazily, so a broken audio stack never stops text output.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from announcer.engine.settings import UserSettings
from announcer.speech.auto import FallbackBackend, notify_stderr
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings

BACKEND_NAMES = ("auto", "screenreader", "speechd", "pyttsx3", "wav", "text", "jsonl", "paced")


def user_voice(settings: UserSettings | None) -> VoiceSettings:
    if settings is None:
        return VoiceSettings()
    return VoiceSettings(rate_wpm=settings.rate_wpm, pitch=settings.pitch, volume=settings.volume)


def _load_class(module: str, class_name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), class_name)
    except (ImportError, AttributeError) as exc:
        raise BackendUnavailable(f"{module}.{class_name} is not available ({exc})") from exc


def _text_backend(stream: IO[str] | None) -> SpeechBackend:
    cls = _load_class("announcer.speech.text", "TextBackend")
    return cls() if stream is None else cls(stream)  # type: ignore[no-any-return]


def _jsonl_backend(stream: IO[str] | None) -> SpeechBackend:
    cls = _load_class("announcer.speech.jsonl", "JsonlBackend")
    return cls() if stream is None else cls(stream)  # type: ignore[no-any-return]


def backend_factory(
    name: str,
    settings: UserSettings | None = None,
    *,
    audio_dir: Path | None = None,
    stream: IO[str] | None = None,
    speechd_autospawn: bool = True,
    screen_reader: str | None = None,
) -> Callable[[], SpeechBackend]:
    """A callable that builds (not starts) the backend called ``name``.

    ``speechd_autospawn=False`` is the auto chain: join only what already runs (a
    running screen reader, a running speech-dispatcher), never start a service.
    ``screen_reader`` is the NAME of ``--speech screenreader:NAME``.
    """
    voice = user_voice(settings)
    voices = dict(settings.voices) if settings is not None else {}
    earcons = settings.earcons if settings is not None else True

    def pyttsx3() -> SpeechBackend:
        from announcer.speech.pyttsx3_backend import Pyttsx3Backend

        return Pyttsx3Backend(earcons=earcons, user_voice=voice, user_voices=voices)

    braille = settings.braille if settings is not None else "auto"

    def screenreader() -> SpeechBackend:
        from announcer.speech.screenreader import ScreenReaderBackend

        return ScreenReaderBackend(
            target=screen_reader, screen_readers_only=not speechd_autospawn, braille=braille
        )

    def speechd() -> SpeechBackend:
        from announcer.speech.speechd_backend import SpeechdBackend, import_speechd

        if import_speechd() is None:
            # a uv or pipx install has no python3-speechd: prismatoid speaks SSIP itself
            from announcer.speech.screenreader import PrismSpeechdBackend

            return PrismSpeechdBackend(autospawn=speechd_autospawn)
        return SpeechdBackend(autospawn=speechd_autospawn, user_voice=voice, user_voices=voices)

    def wav() -> SpeechBackend:
        from announcer.speech.wav import WavBackend

        if audio_dir is None:
            raise BackendUnavailable("the wav backend needs a folder: --speech wav:DIR")
        return WavBackend(audio_dir, earcons=earcons, user_voice=voice, user_voices=voices)

    def paced() -> SpeechBackend:
        from announcer.speech.paced import PacedBackend

        # Silent, at the user's voice rate (else the pace they follow); jsonl records on ``stream``.
        rate = settings.rate_wpm or settings.pace_wpm if settings is not None else None
        return PacedBackend(rate_wpm=rate, stream=stream)

    factories: dict[str, Callable[[], SpeechBackend]] = {
        "pyttsx3": pyttsx3,
        "screenreader": screenreader,
        "speechd": speechd,
        "wav": wav,
        "text": lambda: _text_backend(stream),
        "jsonl": lambda: _jsonl_backend(stream),
        "paced": paced,
    }
    if name not in factories:
        raise ValueError(f"backend: must be one of {', '.join(BACKEND_NAMES)}, not {name!r}")
    return factories[name]


def auto_backend(
    settings: UserSettings | None = None,
    *,
    stream: IO[str] | None = None,
    notify: Callable[[str], None] = notify_stderr,
) -> FallbackBackend:
    """Screen reader, else a running speech-dispatcher, else pyttsx3 with audio, else text."""
    order = ("screenreader", "speechd", "pyttsx3", "text")
    return FallbackBackend(
        [
            (name, backend_factory(name, settings, stream=stream, speechd_autospawn=False))
            for name in order
        ],
        notify=notify,
        translate=catalog_gettext(settings),
    )


def printed_fallback_backend(
    settings: UserSettings | None = None,
    *,
    notify: Callable[[str], None] = notify_stderr,
) -> FallbackBackend:
    """``auto`` for an interface that prints every announcement itself (plain UI, replay).

    A text "voice" would print each line twice, so when every voice has failed the
    lines on screen are all that is left: the printed backend ends each one at once.
    """
    from announcer.speech.text import PrintedBackend

    order = ("screenreader", "speechd", "pyttsx3")
    return FallbackBackend(
        [(name, backend_factory(name, settings, speechd_autospawn=False)) for name in order]
        + [("printed", PrintedBackend)],
        notify=notify,
        translate=catalog_gettext(settings),
    )


def catalog_gettext(settings: UserSettings | None) -> Callable[[str], str]:
    """The user's catalog, for what the speech layer says about itself (switches, failures)."""
    from announcer.i18n.translate import catalog_language, translator

    return translator(catalog_language(settings.languages if settings else ["en"])).gettext


def create_backend(
    name: str,
    settings: UserSettings | None = None,
    *,
    audio_dir: Path | None = None,
    stream: IO[str] | None = None,
    notify: Callable[[str], None] = notify_stderr,
    screen_reader: str | None = None,
) -> SpeechBackend:
    """Build the named backend (not started). ``auto`` wraps the fallback chain."""
    if name == "auto":
        return auto_backend(settings, stream=stream, notify=notify)
    return backend_factory(
        name, settings, audio_dir=audio_dir, stream=stream, screen_reader=screen_reader
    )()


def split_speech_spec(spec: str) -> tuple[str, str]:
    """``--speech NAME[:ARG]``: ``"wav:/tmp/a"`` is ``("wav", "/tmp/a")``; names are case-blind.

    Raises ValueError naming the rule: an unknown name, or a missing or stray argument.
    """
    name, _, argument = spec.strip().partition(":")
    name = name.lower()
    if name not in (*BACKEND_NAMES, "none"):
        raise ValueError(
            f"--speech {spec!r}: the name must be one of {', '.join((*BACKEND_NAMES, 'none'))}"
        )
    if name == "wav" and not argument:
        raise ValueError("--speech wav:DIR: name the folder for the WAV files, e.g. wav:./audio")
    if name == "screenreader" and argument:
        from announcer.speech.screenreader import SCREEN_READER_TARGETS

        argument = argument.lower()
        if argument not in SCREEN_READER_TARGETS:
            raise ValueError(
                f"--speech {spec!r}: the screen reader must be one of "
                + ", ".join(SCREEN_READER_TARGETS)
            )
    elif argument and name not in ("wav", "jsonl"):
        raise ValueError(
            f"--speech {spec!r}: only wav:DIR and jsonl:PATH take an argument "
            "(and screenreader:NAME a screen reader's name)"
        )
    return name, argument


@dataclass(frozen=True, slots=True)
class BackendStatus:
    name: str
    available: bool
    detail: str


def backend_statuses(settings: UserSettings | None = None) -> list[BackendStatus]:
    """Try starting each real backend once, as ``auto`` would, and report what happened."""
    statuses = []
    for name in ("screenreader", "speechd", "pyttsx3", "text"):
        try:
            backend = backend_factory(name, settings, speechd_autospawn=False)()
            backend.start()
        except Exception as exc:
            statuses.append(BackendStatus(name, False, str(exc) or type(exc).__name__))
            continue
        detail = "available"
        player = getattr(backend, "player", None)
        if player is not None:
            detail = f"available, playing through {player.name}"
        output_name = getattr(backend, "output_name", None)
        if isinstance(output_name, str) and getattr(backend, "output", None) is not None:
            detail = f"available, {output_name}"
        backend.close()
        statuses.append(BackendStatus(name, True, detail))
    statuses.append(BackendStatus("wav", True, "available as --speech wav:DIR"))
    jsonl_ok = importlib.util.find_spec("announcer.speech.jsonl") is not None
    statuses.append(BackendStatus("jsonl", jsonl_ok, "available" if jsonl_ok else "not installed"))
    statuses.append(BackendStatus("paced", True, "available (silent, at your speech rate)"))
    return statuses


__all__ = [
    "BACKEND_NAMES",
    "BackendStatus",
    "auto_backend",
    "backend_factory",
    "backend_statuses",
    "create_backend",
    "printed_fallback_backend",
    "split_speech_spec",
]
