"""``announcer voices``: which speech outputs work here, and which voice says each language."""

from __future__ import annotations

import argparse
import json
from typing import Any

from announcer.speech.registry import backend_statuses
from announcer.speech.voices import PROFILES_DIR, VoiceResolver, load_profiles


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "voices",
        help="list speech backends with their status and the voice for each language",
        description="List speech backends (available, or why not) and the voices per language.",
    )
    parser.add_argument("--language", help="show only this BCP 47 language tag (en-US matches en)")
    parser.add_argument(
        "--all", action="store_true", help="also list every installed engine voice by language"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _installed_pyttsx3_voices() -> tuple[list[Any], str]:
    from announcer.speech.backend import BackendUnavailable
    from announcer.speech.pyttsx3_backend import shared_synthesizer

    synth = shared_synthesizer()
    try:
        synth.start()
    except BackendUnavailable as exc:
        return [], str(exc)
    return synth.voices, ""


def _speechd_voices() -> tuple[list[tuple[str, str, str]], str]:
    from announcer.speech.speechd_backend import SpeechdBackend

    backend = SpeechdBackend(autospawn=False)
    try:
        backend.start()
    except Exception as exc:
        return [], str(exc)
    try:
        return backend.voices(), ""
    finally:
        backend.close()


SPEAKING_BACKENDS = ("screenreader", "speechd", "pyttsx3")


def _nothing_speaks_sentence() -> str:
    """Said when no backend here makes sound: what to install, in the user's language."""
    from announcer.config.loader import load_settings
    from announcer.i18n.translate import catalog_language, translator
    from announcer.platform.speech_install import speech_install_hint

    language = catalog_language(load_settings(report=None).languages)
    _t = translator(language).gettext  # _t: babel.cfg extracts its phrases
    what = speech_install_hint()
    if what is None:
        return _t(
            "Nothing here can speak yet: the speech software is installed, but no sound "
            "device answers (the reasons are above)."
        )
    return _t("Nothing here can speak yet. To hear announcer, install: {what}").format(what=what)


def run(args: argparse.Namespace) -> int:
    statuses = backend_statuses()
    speaks = any(s.available for s in statuses if s.name in SPEAKING_BACKENDS)
    install = None if speaks else _nothing_speaks_sentence()
    profiles = load_profiles()
    engine_voices, engine_problem = _installed_pyttsx3_voices()
    speechd_voices, _ = _speechd_voices()
    pyttsx3 = VoiceResolver("pyttsx3", profiles, installed=[v.id for v in engine_voices])
    languages = sorted({p.language for p in profiles.values()}, key=str.lower)
    if args.language:
        languages = [args.language]
    rows = []
    for language in languages:
        choice = pyttsx3.choose(language)
        speechd_names = sorted(
            {
                name
                for name, lang, _ in speechd_voices
                if lang.lower().split("-")[0] == language.lower().split("-")[0]
            }
        )
        rows.append(
            {
                "language": language,
                "profile": choice.profile.language if choice.profile else None,
                "name": choice.profile.name if choice.profile else None,
                "pyttsx3_voice": choice.settings.voice,
                "rate_wpm": choice.settings.rate_wpm,
                "speechd_voices": len(speechd_names),
            }
        )
    by_language: dict[str, list[str]] = {}
    for engine_voice in engine_voices:
        for tag in engine_voice.languages or ("und",):
            by_language.setdefault(tag.split("-")[0].lower(), []).append(engine_voice.id)
    if args.language:
        wanted = args.language.lower().split("-")[0]
        by_language = {k: v for k, v in by_language.items() if k == wanted}
    if args.json:
        print(
            json.dumps(
                {
                    "backends": [
                        {"name": s.name, "available": s.available, "detail": s.detail}
                        for s in statuses
                    ],
                    "languages": rows,
                    "profiles_dir": str(PROFILES_DIR),
                    "pyttsx3_voices_installed": len(engine_voices),
                    "install": install,
                    **({"pyttsx3_voices": by_language} if args.all else {}),
                },
                ensure_ascii=False,
            )
        )
        return 0
    print("Speech backends:")
    for status in statuses:
        state = "available" if status.available else "not available"
        detail = status.detail
        if status.available:
            # "available (available, …)" said the word twice (issue 30 item 8)
            detail = detail.removeprefix("available").strip(" ,")
            if detail.startswith("(") and detail.endswith(")"):
                detail = detail[1:-1]
        print(f"  {status.name}: {state}" + (f" ({detail})" if detail and detail != state else ""))
    if install is not None:
        print()
        print(install)
    print()
    print(f"Voices per language (profiles in {PROFILES_DIR}):")
    for row in rows:
        if row["profile"] is None:
            print(f"  {row['language']}: no voice profile; the engine's default voice is used")
            continue
        voice = row["pyttsx3_voice"] or (
            f"none installed ({engine_problem})" if engine_problem else "none installed"
        )
        line = f"  {row['language']} ({row['name']}): pyttsx3 voice {voice}, {row['rate_wpm']} wpm"
        if row["speechd_voices"]:
            line += f"; speech-dispatcher has {row['speechd_voices']} voices"
        print(line)
    if args.all:
        print()
        print(f"Installed pyttsx3 voices ({len(engine_voices)}):")
        for tag in sorted(by_language):
            print(f"  {tag}: {', '.join(sorted(set(by_language[tag])))}")
    return 0
