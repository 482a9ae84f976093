"""One registry of speech backends, and one function that builds every backend from a spec.

Every command (listen, agent, demo, replay, watch) and the running session's speech
switch build their backend with ``backend_from_spec``; a name without an
implementation fails here, and so does a module that builds a backend by hand.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement
from announcer.engine.settings import UserSettings
from announcer.speech import registry
from announcer.speech.auto import FallbackBackend
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.jsonl import JsonlBackend
from announcer.speech.text import PrintedBackend, TextBackend

PACKAGE = Path(registry.__file__).resolve().parents[1]


def test_every_registered_implementation_builds_a_backend(tmp_path: Path) -> None:
    for name, build in registry.IMPLEMENTATIONS.items():
        request = registry.BuildRequest(UserSettings(), tmp_path / name, io.StringIO())
        try:
            backend = build(request)
        except BackendUnavailable as exc:  # a system library missing here, said in words
            assert str(exc), name
            continue
        assert isinstance(backend, SpeechBackend), name


def test_every_speech_name_and_every_auto_voice_has_an_implementation() -> None:
    assert set(registry.BACKEND_NAMES) - {"auto"} <= set(registry.IMPLEMENTATIONS)
    for chain in (
        registry.auto_backend(notify=lambda _message: None),
        registry.printed_fallback_backend(notify=lambda _message: None),
    ):
        names = [name for name, _factory in chain._factories]
        assert names and set(names) <= set(registry.IMPLEMENTATIONS), names


def test_none_is_no_backend_and_a_bad_spec_names_the_rule() -> None:
    assert registry.backend_from_spec("none") is None
    with pytest.raises(ValueError, match="the name must be one of"):
        registry.backend_from_spec("loudspeaker")
    with pytest.raises(ValueError, match="wav:DIR"):
        registry.backend_from_spec("wav")
    with pytest.raises(ValueError, match="the name must be one of"):
        registry.backend_from_spec("printed")  # the interfaces' last resort, not a voice


def test_text_writes_to_the_stream_given_and_to_standard_error_without_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stream = io.StringIO()
    backend = registry.backend_from_spec("text", stream=stream)
    assert isinstance(backend, TextBackend)
    spoken: list[bool] = []
    backend.speak(Announcement("Build finished."), VoiceSettings(), lambda: spoken.append(True))
    assert stream.getvalue() == "Build finished.\n" and spoken == [True]
    to_stderr = registry.backend_from_spec("text")
    assert to_stderr is not None
    to_stderr.speak(Announcement("Tests passed."), VoiceSettings(), lambda: None)
    assert capsys.readouterr().err == "Tests passed.\n"


def test_an_interface_that_shows_every_line_ends_auto_in_those_lines() -> None:
    told: list[str] = []
    auto = registry.backend_from_spec("auto", shown=True, notify=told.append)
    assert isinstance(auto, FallbackBackend)
    assert [name for name, _ in auto._factories][-1] == "printed"
    plain_auto = registry.backend_from_spec("auto", notify=told.append)
    assert isinstance(plain_auto, FallbackBackend)
    assert [name for name, _ in plain_auto._factories][-1] == "text"
    # under a full-screen app, text is the app's transcript lines, never written beneath it
    assert isinstance(registry.backend_from_spec("text", full_screen=True), PrintedBackend)
    # text where the interface shows every line is those lines: printed once (issue 30 item 7)
    assert isinstance(registry.backend_from_spec("text", shown=True), PrintedBackend)


def test_jsonl_stamps_the_clock_given_and_jsonl_path_writes_a_file(tmp_path: Path) -> None:
    now = [5.0]
    stream = io.StringIO()
    backend = registry.backend_from_spec("jsonl", stream=stream, clock=lambda: now[0])
    assert isinstance(backend, JsonlBackend)
    backend.start()
    now[0] = 7.5
    backend.speak(Announcement("Deploy?"), VoiceSettings(), lambda: None)
    assert json.loads(stream.getvalue())["t"] == 2.5
    path = tmp_path / "speech.jsonl"
    to_file = registry.backend_from_spec(f"jsonl:{path}")
    assert isinstance(to_file, JsonlBackend)
    to_file.speak(Announcement("Saved."), VoiceSettings(), lambda: None)
    to_file.close()
    assert json.loads(path.read_text(encoding="utf-8"))["text"] == "Saved."


BACKEND_CLASSES = {
    "FallbackBackend",
    "JsonlBackend",
    "PacedBackend",
    "PrintedBackend",
    "PrismSpeechdBackend",
    "Pyttsx3Backend",
    "ScreenReaderBackend",
    "SpeechdBackend",
    "TextBackend",
    "WavBackend",
}
# Modules outside the speech package that may name a backend class themselves, and why.
BUILD_THEIR_OWN = {
    # lists speech-dispatcher's voices through its own client: nothing is spoken
    "cli/commands/voices.py",
    # the pace replay drives a paced backend on its own loop clock (a test and benchmark
    # driver, leaving the package: issue 24 item 5)
    "runtime/pace_replay.py",
}


def test_no_module_outside_the_speech_package_builds_a_backend_by_hand() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("speech/") or relative in BUILD_THEIR_OWN:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name) and called.id in BACKEND_CLASSES:
                found.append(f"{relative}:{node.lineno} {called.id}")
    assert not found, "build it with announcer.speech.registry.backend_from_spec: " + str(found)
