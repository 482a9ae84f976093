"""Yoruba is said, not spelled (issue 14 item 6): no voice names its tone marks aloud.

espeak-ng has no Yoruba voice; any other voice reads "Ọ̀rọ̀" as "letter e dot below
grave …". Checked with espeak-ng's own phoneme output (``espeak-ng -q -x``) on the very
text the backend hands the engine, and with the length of the real audio.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement
from announcer.speech.audio import SinkPlayer, wav_info, wav_rms
from announcer.speech.backend import VoiceSettings
from announcer.speech.pyttsx3_backend import Pyttsx3Backend
from announcer.speech.voices import load_profiles, without_marks
from announcer.speech.wav import WavBackend

from .helpers import Done

# From the bundled banking session's Yoruba variant, and a question in Yoruba.
YORUBA = [
    "Olùrànlọ́wọ́ Harbor Bank ń gbé $500 láti àkáǹtì checking sí savings fún ọ.",
    "Ṣé o fẹ́ tẹ̀síwájú? Ó ti parí.",
]
# espeak-ng's phonemes for the words it says instead of a mark or a letter it cannot read
SPELLED_OUT = ("gr'A:v", "kj'u:t", "l'et@", "l,Et3", "m'akr")


def phonemes(text: str, voice: str) -> str:
    result = subprocess.run(
        ["espeak-ng", "-q", "-x", "-v", voice, text],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


@pytest.fixture
def backend(sink: SinkPlayer) -> Pyttsx3Backend:
    speaking = Pyttsx3Backend(sink)
    speaking.start()
    return speaking


def test_yoruba_is_read_by_a_voice_that_can_say_it(backend: Pyttsx3Backend) -> None:
    try:
        assert backend.voice_for("yo").voice == "bnt/sw"
        assert load_profiles()["yo"].without_marks
    finally:
        backend.close()


@pytest.mark.parametrize("text", YORUBA)
def test_no_tone_mark_or_letter_is_spelled_out(backend: Pyttsx3Backend, text: str) -> None:
    try:
        voice = backend.voice_for("yo").voice
        assert voice is not None
        said = phonemes(backend.text_for(text, "yo"), voice)
    finally:
        backend.close()
    assert said.strip()
    assert not [word for word in SPELLED_OUT if word in said], said
    # the check can fail: the text as written is spelled out by the same voice
    assert any(word in phonemes(text, voice) for word in SPELLED_OUT)


def test_a_language_with_no_voice_at_all_loses_its_marks_too(backend: Pyttsx3Backend) -> None:
    """Igbo: no profile and no espeak-ng voice; the default voice must not say "grave"."""
    try:
        text = backend.text_for("Ọ̀ dị̀ mma.", "ig")
        said = phonemes(text, "en")
    finally:
        backend.close()
    assert text == "O di mma."
    assert not [word for word in SPELLED_OUT if word in said], said


def test_languages_with_a_voice_keep_every_mark(backend: Pyttsx3Backend) -> None:
    try:
        assert backend.text_for("Très bien, à demain.", "fr") == "Très bien, à demain."
        assert backend.text_for("Sí, señor.", "es") == "Sí, señor."
    finally:
        backend.close()
    # marks that are letters of their script are never removed
    assert without_marks("नमस्ते दुनिया") == "नमस्ते दुनिया"
    assert without_marks("สวัสดี") == "สวัสดี"


def test_the_heard_yoruba_is_words_not_a_spelling(tmp_path: Path) -> None:
    """Real audio: the sentence as the user hears it is far shorter than its spelling."""
    wav = WavBackend(tmp_path / "audio")
    wav.start()
    try:
        done = Done()
        wav.speak(Announcement(YORUBA[0], language="yo"), VoiceSettings(), done)
        assert done.wait()
    finally:
        wav.close()
    heard = tmp_path / "audio" / "0001.wav"
    spelled = tmp_path / "spelled.wav"
    subprocess.run(
        ["espeak-ng", "-v", "bnt/sw", "-s", "160", "-w", str(spelled), YORUBA[0]],
        check=True,
        timeout=60,
    )
    assert wav_rms(heard) > 0.02
    assert wav_info(heard).duration_s < 0.7 * wav_info(spelled).duration_s
