"""What ``listen``, ``agent`` and ``demo`` share: the interface, the settings from the
arguments, the speech driver, and running a session under an interface.

The commands import this module, never each other (pyproject.toml's import-linter
contract "Commands are independent of each other"). Heavy modules (the runtime,
Textual) are imported where they are used, so that registering a command stays cheap.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from announcer.engine.settings import UserSettings
    from announcer.runtime.session import LiveSession


def ui_choices() -> list[str]:
    """The ``--ui`` choices: ``tui`` where Textual is installed.

    Found, not imported: Textual and the app cost a fifth of a second, which the
    plain and silent UIs, and ``--help``, never pay (only ``_run_tui`` imports them).
    """
    choices = ["plain", "none"]
    if importlib.util.find_spec("textual") is not None:
        choices.insert(0, "tui")
    return choices


def default_ui() -> str:
    """The Textual UI on an interactive terminal; the plain line UI for pipes and scripts."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    return "tui" if interactive and "tui" in ui_choices() else "plain"


def settings_from_args(args: argparse.Namespace) -> UserSettings:
    """Flags win over the environment, which wins over the settings file (``--config PATH``)."""
    settings = _load_user_settings(getattr(args, "config", None), args)
    if getattr(args, "auto_reject", False):
        settings = settings.model_copy(update={"reply_policy": "auto_reject"})
    return settings


def _load_user_settings(
    path: Path | None = None, flags: argparse.Namespace | None = None
) -> UserSettings:
    """The settings file, ``ANNOUNCER_*`` variables and the flags, or defaults without them.

    ``path`` is ``--config PATH``; None means ``$ANNOUNCER_CONFIG`` or the platform's file.
    """
    from announcer.config.loader import load_settings
    from announcer.engine.settings import UserSettings

    if path is not None and not path.is_file():
        # a mistyped path must not look like the user's preferences were read
        print(
            f"announcer: --config {path}: no such file; using default settings",
            file=sys.stderr,
        )
    try:
        loaded = load_settings(path, flags=flags)
    except Exception as exc:
        print(f"announcer: ignoring the settings file: {exc}", file=sys.stderr)
        return UserSettings()
    return loaded if isinstance(loaded, UserSettings) else UserSettings()


def make_driver(spec: str, settings: UserSettings | None = None, *, ui: str | None = None) -> Any:
    """A speech driver for ``--speech NAME[:ARG]`` (or the ``backend`` setting); None: print only.

    ``auto`` tries a screen reader, speech-dispatcher, then pyttsx3 (and, without the
    plain or Textual UI, text output); ``jsonl:PATH`` records every speech decision;
    ``wav:DIR`` saves what would be heard as WAV files; ``text`` writes spoken lines to
    standard error (under the Textual UI, its transcript is those lines). ``none`` prints
    announcements only.

    Under the plain and Textual UIs, ``auto``'s last resort is the interface's own lines:
    both show every announcement. The Textual UI also shows what ``auto`` says about its
    outputs (which one speaks, why the others failed, how to get a voice) in its
    transcript, not on standard error underneath the app (issue 14).
    """
    from announcer.speech.driver import SpeechDriver
    from announcer.speech.registry import user_voice

    try:
        backend = speech_backend(spec, settings, ui=ui)
        if backend is None:
            return None
        backend.start()
    except ValueError as exc:
        raise SystemExit(f"announcer: --speech: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"announcer: --speech {spec}: {exc.strerror or exc}") from None
    except Exception as exc:
        if spec.partition(":")[0] != "auto":
            raise SystemExit(f"announcer: speech backend unavailable: {exc}") from None
        print(f"announcer: no speech here ({exc}); printing only", file=sys.stderr)
        return None
    return SpeechDriver(backend, user_voice(settings))


def speech_backend(
    spec: str, settings: UserSettings | None = None, *, ui: str | None = None, notices: Any = None
) -> Any:
    """The backend ``spec`` names, not started, as suits the interface; None for ``none``.

    ``notices``: where ``auto`` under the Textual UI says which output speaks (the app
    listens to it); a new one is made when None.
    """
    from announcer.speech.auto import HeldNotices, notify_stderr
    from announcer.speech.registry import backend_from_spec

    # The plain and Textual UIs already show every line: a text "voice" would print it
    # twice (or, under Textual, raw beneath the app), so ``auto``'s last resort is the
    # lines on screen, and under Textual ``text`` is those lines too.
    return backend_from_spec(
        spec,
        settings,
        notify=(notices or HeldNotices()) if ui == "tui" else notify_stderr,
        shown=ui in ("plain", "tui"),
        full_screen=ui == "tui",
    )  # text goes to stderr


def speech_switcher(ui: str | None, driver: Any) -> Any:
    """How the running session starts another backend (the Textual settings screen):
    as at start-up for this interface, with ``auto``'s notices going where the app
    already listens."""
    notices = getattr(getattr(driver, "backend", None), "notices", None)

    def create(spec: str, settings: UserSettings) -> Any:
        backend = speech_backend(spec, settings, ui=ui, notices=notices)
        if backend is None:
            raise ValueError("'none' turns speech off; it is not a voice to switch to")
        return backend

    return create


async def run_session(
    session: LiveSession,
    ui_name: str,
    before: Any = None,
    *,
    config: Path | None = None,
    plain: Any = None,
) -> int:
    """Run ``session`` under ``ui_name``; ``plain`` is a PlainUi to attach again (the
    demo run again keeps one reader of standard input)."""
    import asyncio

    loop = asyncio.get_running_loop()
    # Ctrl-C, a kill and a closed terminal (SIGHUP) all close subscriptions (§5.8), remove
    # sockets and end every agent's processes: the goodbye runs, then announcer exits.
    for sig in stop_signals():
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, session.stop)
    if ui_name == "plain":
        if plain is None:
            from announcer.ui.plain import PlainUi

            plain = PlainUi()
        plain.attach(session)
    elif ui_name == "tui":
        return await _run_tui(session, config)
    else:
        from announcer.ui.no_answer import NoAnswerUi

        # Nothing can answer: each question says so and names the agent's default.
        NoAnswerUi().attach(session)
    return await session.run()


def stop_signals() -> list[signal.Signals]:
    """The signals that end a session cleanly: SIGINT, SIGTERM and, where it exists, SIGHUP."""
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


async def _run_tui(session: LiveSession, config: Path | None = None) -> int:
    tui = importlib.import_module("announcer.ui.tui")
    runner = getattr(tui, "run_with_session", None)
    if runner is None:
        print("announcer: the full-screen UI cannot attach to a live session yet", file=sys.stderr)
        return 2
    saver_for = importlib.import_module("announcer.ui.tui.runner").settings_saver
    # settings changed in the UI go back to the file they were read from (--config PATH)
    result = await runner(session, save_settings=saver_for(session.settings, config))
    return int(result or 0)
