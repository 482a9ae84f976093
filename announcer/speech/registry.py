"""The one registry of speech backends: ``backend_from_spec("wav:DIR", settings)``.

Names: auto, pyttsx3, screenreader, speechd, wav, text, jsonl, paced (BACKEND_NAMES,
what ``--speech`` and the ``backend`` setting take); IMPLEMENTATIONS builds each. Every
backend module is loaded lazily, when its backend is built, so a broken audio stack
never stops text output.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

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


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """What one backend is built with: the user's settings and what the spec points at.

    ``stream``: where ``text``, ``jsonl`` and ``paced`` write (None: the backend's own);
    ``clock``: the seconds ``jsonl`` stamps its records with (a replay's recorded clock);
    ``speechd_autospawn=False`` is the auto chain: join only what already runs (a running
    screen reader, a running speech-dispatcher), never start a service;
    ``screen_reader`` is the NAME of ``--speech screenreader:NAME``.
    """

    settings: UserSettings | None = None
    audio_dir: Path | None = None
    stream: TextIO | None = None
    clock: Callable[[], float] | None = None
    speechd_autospawn: bool = True
    screen_reader: str | None = None

    @property
    def voice(self) -> VoiceSettings:
        return user_voice(self.settings)

    @property
    def voices(self) -> dict[str, Any]:
        return dict(self.settings.voices) if self.settings is not None else {}

    @property
    def earcons(self) -> bool:
        return self.settings.earcons if self.settings is not None else True


def _pyttsx3(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.pyttsx3_backend import Pyttsx3Backend

    return Pyttsx3Backend(
        earcons=request.earcons, user_voice=request.voice, user_voices=request.voices
    )


def _screenreader(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.screenreader import ScreenReaderBackend

    braille = request.settings.braille if request.settings is not None else "auto"
    return ScreenReaderBackend(
        target=request.screen_reader,
        screen_readers_only=not request.speechd_autospawn,
        braille=braille,
    )


def _speechd(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.speechd_backend import SpeechdBackend, import_speechd

    if import_speechd() is None:
        # a uv or pipx install has no python3-speechd: prismatoid speaks SSIP itself
        from announcer.speech.screenreader import PrismSpeechdBackend

        return PrismSpeechdBackend(autospawn=request.speechd_autospawn)
    return SpeechdBackend(
        autospawn=request.speechd_autospawn, user_voice=request.voice, user_voices=request.voices
    )


def _wav(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.wav import WavBackend

    if request.audio_dir is None:
        raise BackendUnavailable("the wav backend needs a folder: --speech wav:DIR")
    return WavBackend(
        request.audio_dir,
        earcons=request.earcons,
        user_voice=request.voice,
        user_voices=request.voices,
    )


def _text(request: BuildRequest) -> SpeechBackend:
    cls = _load_class("announcer.speech.text", "TextBackend")
    return cls() if request.stream is None else cls(request.stream)  # type: ignore[no-any-return]


def _jsonl(request: BuildRequest) -> SpeechBackend:
    cls = _load_class("announcer.speech.jsonl", "JsonlBackend")
    return cls(request.stream, clock=request.clock)  # type: ignore[no-any-return]


def _paced(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.paced import PacedBackend

    # Silent, at the user's voice rate (else the pace they follow); jsonl records on ``stream``.
    settings = request.settings
    rate = settings.rate_wpm or settings.pace_wpm if settings is not None else None
    return PacedBackend(rate_wpm=rate, stream=request.stream)


def _printed(request: BuildRequest) -> SpeechBackend:
    from announcer.speech.text import PrintedBackend

    return PrintedBackend()


#: The one registry of speech backends: each name and the function that builds it (not
#: started). ``auto`` is not here: it is the fallback chain over these (auto_backend).
#: ``printed`` is no voice the user picks: it is the last resort of an interface that
#: shows every announcement itself. tests/speech/test_paced.py builds every entry.
IMPLEMENTATIONS: dict[str, Callable[[BuildRequest], SpeechBackend]] = {
    "screenreader": _screenreader,
    "speechd": _speechd,
    "pyttsx3": _pyttsx3,
    "wav": _wav,
    "text": _text,
    "jsonl": _jsonl,
    "paced": _paced,
    "printed": _printed,
}


def backend_factory(
    name: str,
    settings: UserSettings | None = None,
    *,
    audio_dir: Path | None = None,
    stream: TextIO | None = None,
    clock: Callable[[], float] | None = None,
    speechd_autospawn: bool = True,
    screen_reader: str | None = None,
) -> Callable[[], SpeechBackend]:
    """A callable that builds (not starts) the backend called ``name`` (see BuildRequest)."""
    build = IMPLEMENTATIONS.get(name)
    if build is None:
        raise ValueError(f"backend: must be one of {', '.join(BACKEND_NAMES)}, not {name!r}")
    request = BuildRequest(settings, audio_dir, stream, clock, speechd_autospawn, screen_reader)
    return lambda: build(request)


def auto_backend(
    settings: UserSettings | None = None,
    *,
    stream: TextIO | None = None,
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
    order = ("screenreader", "speechd", "pyttsx3")
    return FallbackBackend(
        [(name, backend_factory(name, settings, speechd_autospawn=False)) for name in order]
        + [("printed", partial(IMPLEMENTATIONS["printed"], BuildRequest(settings)))],
        notify=notify,
        translate=catalog_gettext(settings),
    )


#: the voices in ``auto``'s order: one the user names falls back to those after it
VOICE_ORDER = ("screenreader", "speechd", "pyttsx3")


def chosen_voice_backend(
    name: str,
    settings: UserSettings | None = None,
    *,
    screen_reader: str | None = None,
    stream: TextIO | None = None,
    notify: Callable[[str], None] = notify_stderr,
    shown: bool = False,
) -> FallbackBackend:
    """``--speech speechd`` (``screenreader[:NAME]``, ``pyttsx3``): that voice, and when it
    fails mid-session the voices after it in ``auto``'s order, then text (or, under an
    interface that shows every line, those lines). It must start as named; a failure
    later is said once and falls back, as under ``auto`` (issue 29 item 4: a killed
    speech-dispatcher left the user in silence, told only with ``-v``)."""
    first = backend_factory(name, settings, stream=stream, screen_reader=screen_reader)
    later = VOICE_ORDER[VOICE_ORDER.index(name) + 1 :]
    factories = [(name, first)] + [
        (other, backend_factory(other, settings, speechd_autospawn=False)) for other in later
    ]
    if shown:
        factories.append(("printed", partial(IMPLEMENTATIONS["printed"], BuildRequest(settings))))
    else:
        factories.append(("text", backend_factory("text", settings, stream=stream)))
    return FallbackBackend(
        factories, notify=notify, translate=catalog_gettext(settings), chosen=True
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
    stream: TextIO | None = None,
    clock: Callable[[], float] | None = None,
    notify: Callable[[str], None] = notify_stderr,
    screen_reader: str | None = None,
) -> SpeechBackend:
    """Build the named backend (not started). ``auto`` wraps the fallback chain."""
    if name == "auto":
        return auto_backend(settings, stream=stream, notify=notify)
    return backend_factory(
        name, settings, audio_dir=audio_dir, stream=stream, clock=clock, screen_reader=screen_reader
    )()


def backend_from_spec(
    spec: str,
    settings: UserSettings | None = None,
    *,
    stream: TextIO | None = None,
    clock: Callable[[], float] | None = None,
    notify: Callable[[str], None] = notify_stderr,
    shown: bool = False,
    full_screen: bool = False,
) -> SpeechBackend | None:
    """The backend ``--speech NAME[:ARG]`` (or the ``backend`` setting) names, not started.

    Every command and the running session build their speech backend here.
    ``none`` is None (print only); ``jsonl:PATH`` records to a new file (kept open as long
    as the process runs), ``jsonl`` and ``text`` write to ``stream`` (standard error when
    None); ``wav:DIR`` saves one WAV per utterance, and ``speech.jsonl``, in DIR;
    ``screenreader:NAME`` speaks through that screen reader or speech API (nvda, jaws, ...).

    ``shown``: the interface shows every announcement itself (plain and Textual UIs,
    replay), so ``auto``'s last resort is those lines, not a text voice printing each one
    twice. ``full_screen``: text written beneath a full-screen app would land inside its
    screen, so ``text`` is the app's own transcript lines too.
    Raises ValueError for a spec :func:`split_speech_spec` refuses.
    """
    name, argument = split_speech_spec(spec)
    if name == "none":
        return None
    if name == "auto" and shown:
        return printed_fallback_backend(settings, notify=notify)
    if name == "text" and full_screen:
        return IMPLEMENTATIONS["printed"](BuildRequest(settings))
    if name in VOICE_ORDER:
        return chosen_voice_backend(
            name,
            settings,
            screen_reader=argument or None,
            stream=stream if stream is not None else sys.stderr,
            notify=notify,
            shown=shown,
        )
    if name == "jsonl" and argument:
        stream = open(argument, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as we do)
    if name == "wav":
        from announcer.speech.wav import WavBackend

        recorder = create_backend("wav", settings, audio_dir=Path(argument))
        if isinstance(recorder, WavBackend):
            _t = catalog_gettext(settings)

            def failed_to_save(why: str) -> None:  # told, never silent (a full disk)
                notify(
                    _t(
                        "Speech audio is not being saved: {reason}. The lines are still "
                        "shown; the next one tries again."
                    ).format(reason=why)
                )

            recorder.notify = failed_to_save
        return recorder
    return create_backend(
        name,
        settings,
        audio_dir=Path(argument) if name == "wav" else None,
        stream=stream if stream is not None else sys.stderr,
        clock=clock,
        notify=notify,
        screen_reader=argument if name == "screenreader" and argument else None,
    )


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
    "IMPLEMENTATIONS",
    "BackendStatus",
    "BuildRequest",
    "auto_backend",
    "backend_factory",
    "backend_from_spec",
    "backend_statuses",
    "create_backend",
    "printed_fallback_backend",
    "split_speech_spec",
]
