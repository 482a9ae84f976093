"""The screen-reader backend. NVDA cannot run here, so a stand-in plays its part."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from announcer.engine.announcement import Announcement, Urgency
from announcer.speech.backend import BackendUnavailable, SpeechBackend, VoiceSettings
from announcer.speech.registry import split_speech_spec
from announcer.speech.screenreader import ScreenReaderBackend, orca_is_running

from .helpers import Done


class FakeNvda:
    """Stands in for accessible_output2.outputs.nvda.NVDA (Windows only)."""

    name = "NVDA"

    def __init__(self, running: bool = True) -> None:
        self.running = running
        self.spoken: list[tuple[str, bool]] = []
        self.brailled: list[str] = []
        self.silenced = 0

    def is_active(self) -> bool:
        return self.running

    def speak(self, text: str, interrupt: bool = False) -> None:
        self.spoken.append((text, interrupt))

    def braille(self, text: str) -> None:
        self.brailled.append(text)

    def silence(self) -> None:
        self.silenced += 1


def test_speaks_and_brailles_through_the_running_screen_reader() -> None:
    stopped, nvda = FakeNvda(running=False), FakeNvda()
    backend = ScreenReaderBackend([stopped, nvda])
    backend.start()
    assert isinstance(backend, SpeechBackend) and backend.capabilities.supports_braille
    assert backend.output is nvda
    done = Done()
    backend.speak(Announcement("Tests passed."), VoiceSettings(rate_wpm=600), done)
    assert nvda.spoken == [("Tests passed.", False)]
    assert nvda.brailled == ["Tests passed."]
    assert done.wait() and done.calls == 1


def test_critical_and_interrupting_map_to_the_interrupt_flag() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda])
    backend.start()
    for announcement in (
        Announcement("Confirm?", urgency=Urgency.CRITICAL),
        Announcement("Now.", interrupt=True),
        Announcement("Later.", urgency=Urgency.BACKGROUND),
    ):
        backend.speak(announcement, VoiceSettings(), Done())
        backend.stop()
    assert [flag for _, flag in nvda.spoken] == [True, True, False]


def test_stop_silences_and_completes_once() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda])
    backend.start()
    done = Done()
    backend.speak(Announcement("A long sentence " * 30), VoiceSettings(), done)
    assert backend.is_speaking()
    backend.stop()
    assert nvda.silenced == 1 and done.calls == 1 and not backend.is_speaking()
    backend.stop()
    assert nvda.silenced == 1 and done.calls == 1


def test_braille_can_be_turned_off() -> None:
    nvda = FakeNvda()
    backend = ScreenReaderBackend([nvda], braille="off")
    backend.start()
    backend.speak(Announcement("Hi."), VoiceSettings(), Done())
    assert nvda.brailled == []


def test_no_running_screen_reader_is_a_clear_message() -> None:
    with pytest.raises(BackendUnavailable, match="no screen reader is running"):
        ScreenReaderBackend([FakeNvda(running=False)]).start()


def test_on_this_machine_the_real_discovery_explains_itself() -> None:
    if orca_is_running():
        pytest.skip("a screen reader is running here")
    # the auto chain's step: only a running screen reader, never a synthesiser (nor a
    # speech-dispatcher started for it)
    with pytest.raises(BackendUnavailable, match="no screen reader is running") as err:
        ScreenReaderBackend(screen_readers_only=True).start()
    assert "\n" not in str(err.value)


def test_orca_is_found_by_its_process(tmp_path: Path) -> None:
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "cmdline").write_bytes(b"/usr/bin/python3\0/usr/bin/orca\0--replace\0")
    (tmp_path / "2").mkdir()
    (tmp_path / "2" / "cmdline").write_bytes(b"bash\0")
    assert orca_is_running(tmp_path)
    (tmp_path / "1" / "cmdline").write_bytes(b"vim\0orca-notes.txt\0")
    assert not orca_is_running(tmp_path)


class FakePrismNvda(FakeNvda):
    """Stands in for prismatoid's NVDA backend (PrismOutput): it says when it speaks."""

    def __init__(self, *, supports_braille: bool = True) -> None:
        super().__init__()
        self.supports_braille = supports_braille
        self.reports_speaking = True
        self.speaking = threading.Event()

    def speak(self, text: str, interrupt: bool = False) -> None:
        super().speak(text, interrupt)
        self.speaking.set()

    def silence(self) -> None:
        super().silence()
        self.speaking.clear()

    def is_speaking(self) -> bool:
        return self.speaking.is_set()


def test_the_end_of_speech_is_what_the_screen_reader_reports() -> None:
    nvda = FakePrismNvda()
    backend = ScreenReaderBackend([nvda], poll_s=0.001)
    backend.start()
    done = Done()
    # at 600 wpm two words take 0.5 s by estimate; the reader is still speaking long after
    backend.speak(Announcement("Still speaking."), VoiceSettings(rate_wpm=600), done)
    assert not done.wait(timeout=1.0) and backend.is_speaking()
    nvda.speaking.clear()  # the screen reader finished
    assert done.wait() and done.calls == 1 and not backend.is_speaking()


def test_a_reader_that_never_starts_ends_by_the_estimate() -> None:
    nvda = FakePrismNvda()
    nvda.speak = lambda text, interrupt=False: nvda.spoken.append((text, interrupt))  # type: ignore[method-assign]
    backend = ScreenReaderBackend([nvda], poll_s=0.001)
    backend.start()
    done = Done()
    backend.speak(Announcement("Hi."), VoiceSettings(rate_wpm=600), done)
    assert done.wait() and done.calls == 1


@pytest.mark.parametrize(
    ("mode", "has_display", "brailled"),
    [("auto", True, True), ("auto", False, False), ("on", False, True), ("off", True, False)],
)
def test_braille_setting(mode: str, has_display: bool, brailled: bool) -> None:
    nvda = FakePrismNvda(supports_braille=has_display)
    backend = ScreenReaderBackend([nvda], braille=mode)
    backend.start()
    backend.speak(Announcement("Tests passed."), VoiceSettings(), Done())
    backend.stop()
    assert nvda.brailled == (["Tests passed."] if brailled else [])


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_questions_are_always_brailled(mode: str) -> None:
    nvda = FakePrismNvda(supports_braille=False)
    backend = ScreenReaderBackend([nvda], braille=mode)
    backend.start()
    for question in (
        Announcement("Delete the branch?", kind="confirmation", urgency=Urgency.CRITICAL),
        Announcement("Which file?", kind="clarification"),
        Announcement("Allow the edit?", kind="agent.permission", earcon="needs_you"),
    ):
        backend.speak(question, VoiceSettings(), Done())
        backend.stop()
    assert nvda.brailled == ["Delete the branch?", "Which file?", "Allow the edit?"]


def test_a_named_screen_reader_that_is_not_here_says_so() -> None:
    with pytest.raises(BackendUnavailable, match=r"screenreader:nvda is not available") as err:
        ScreenReaderBackend(target="nvda").start()
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="must be one of nvda, jaws, voiceover"):
        ScreenReaderBackend(target="emacspeak")


def test_the_speech_flag_names_a_screen_reader() -> None:
    assert split_speech_spec("screenreader:NVDA") == ("screenreader", "nvda")
    assert split_speech_spec("screenreader") == ("screenreader", "")
    with pytest.raises(ValueError, match="the screen reader must be one of nvda, jaws"):
        split_speech_spec("screenreader:narrator")


def test_every_screen_reader_name_is_a_prismatoid_backend() -> None:
    prism = pytest.importorskip("prism")
    from announcer.speech.screenreader import PRISM_SCREEN_READERS, SCREEN_READER_TARGETS

    for member in (*SCREEN_READER_TARGETS.values(), *PRISM_SCREEN_READERS):
        assert member in prism.BackendId.__members__, member


def test_the_auto_chain_tries_a_running_screen_reader_then_speechd_then_pyttsx3_then_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from announcer.engine.settings import UserSettings
    from announcer.speech import speechd_backend
    from announcer.speech.registry import auto_backend
    from announcer.speech.screenreader import PrismSpeechdBackend

    chain = auto_backend(UserSettings(braille="off"), notify=lambda _message: None)
    assert [name for name, _ in chain._factories] == ["screenreader", "speechd", "pyttsx3", "text"]
    screen_reader = chain._factories[0][1]()
    assert isinstance(screen_reader, ScreenReaderBackend)
    assert screen_reader.screen_readers_only and screen_reader.braille == "off"
    # a uv or pipx install has no python3-speechd: Speech Dispatcher comes through prismatoid,
    # and the chain only joins a server that already runs
    monkeypatch.setattr(speechd_backend, "import_speechd", lambda: None)
    speechd = chain._factories[1][1]()
    assert isinstance(speechd, PrismSpeechdBackend) and not speechd.autospawn


def test_the_auto_chain_says_which_screen_reader_it_found() -> None:
    from announcer.speech.auto import FallbackBackend

    said: list[str] = []
    chain = FallbackBackend(
        [("screenreader", lambda: ScreenReaderBackend([FakeNvda()]))], notify=said.append
    )
    chain.start()
    assert said == ["speaking through screenreader (NVDA)"]
