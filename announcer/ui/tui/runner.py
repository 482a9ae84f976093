"""Run the Textual app and a live session on one event loop.

The runtime's ``LiveSession`` is asyncio code; Textual runs on asyncio too, so
both share the loop and the session's callbacks reach the app without threads.
Quitting the app closes the subscriptions (§5.8); a session that ends on its
own (``--exit-when-done``) closes the app.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from announcer.engine.settings import UserSettings
from announcer.ui.tui.app import AnnouncerApp
from announcer.ui.tui.session import UiSession
from announcer.ui.tui.text import _


class RunnableSession(UiSession):
    """A session that runs until it is stopped or done (the live runtime)."""

    async def run(self) -> int:
        raise NotImplementedError


def settings_saver(
    in_force: UserSettings, path: Path | None = None
) -> Callable[[UserSettings], object] | None:
    """Comment-preserving saves through announcer.config, when this build has it.

    ``path`` is the file given with ``--config``; None means the usual settings file.

    Only what the user changes is written: values that came from flags or the
    environment for this run stay out of the file.
    """
    try:
        config = importlib.import_module("announcer.config")
        store = config.SettingsStore.load(path)
    except (ImportError, AttributeError):
        return None
    store.settings = in_force
    return cast("Callable[[UserSettings], object]", store.save)


#: log records kept while the app owns the terminal; older ones are counted, not kept
HELD_LOG_RECORDS = 200


class _HeldRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: collections.deque[logging.LogRecord] = collections.deque(
            maxlen=HELD_LOG_RECORDS
        )
        self.overflow = 0
        self.overflow_level = logging.NOTSET  # the most severe record not kept

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) == self.records.maxlen:
            self.overflow += 1
            self.overflow_level = max(self.overflow_level, self.records[0].levelno)
        self.records.append(record)


@contextlib.contextmanager
def logs_held_while_the_app_runs() -> Iterator[None]:
    """Log lines to the terminal wait until the app has given the terminal back.

    Textual draws on the same terminal as the root logger's stream handlers (standard
    error): a line written there lands inside the app's screen, where a screen reader
    reads it as part of whatever it overwrote. Such handlers are set aside while the app
    runs and get the held records (the newest ``HELD_LOG_RECORDS``, with a count of the
    rest) afterwards. Handlers that write files stay as they are.
    """
    root = logging.getLogger()
    terminal = [
        handler
        for handler in root.handlers
        if isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
        and getattr(handler, "stream", None) in (sys.stderr, sys.__stderr__, sys.stdout)
    ]
    if not terminal:
        yield
        return
    held = _HeldRecords()
    for handler in terminal:
        root.removeHandler(handler)
    root.addHandler(held)
    try:
        yield
    finally:
        root.removeHandler(held)
        for handler in terminal:
            root.addHandler(handler)
        if held.overflow:
            # at the level of the worst line lost, which passed the same filters
            logging.getLogger("announcer").log(
                held.overflow_level,
                "%d earlier log lines from while the app ran were not kept",
                held.overflow,
            )
        for record in held.records:
            for handler in terminal:
                if record.levelno >= handler.level:
                    handler.handle(record)


def _stop_on_signals(session: RunnableSession, app: AnnouncerApp) -> asyncio.Event:
    """SIGINT, SIGTERM and a closed terminal (SIGHUP) end the app and the session.

    The session then says goodbye to each producer and ends every agent's processes;
    stopping the session alone would leave the app open ("Listening has stopped").
    Returns the event set when such a signal came.
    """
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()

    def stop() -> None:
        session.stop()
        stopped.set()
        app.exit()

    app.terminal_gone = stop  # a login found the terminal closed: as SIGHUP

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop)
    return stopped


# After a signal, how long the app has to close before it is cancelled (no terminal left).
EXIT_INSIST_SECONDS = 10.0


async def _exit_when_stopped(
    app: AnnouncerApp, stopped: asyncio.Event, app_run: asyncio.Future[None]
) -> None:
    """A signal that comes while the app is still starting is not heard by ``exit``:
    ask again until the app has closed, then cancel it (its terminal may be gone)."""
    await stopped.wait()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EXIT_INSIST_SECONDS
    while not app_run.done() and loop.time() < deadline:
        app.exit()
        await asyncio.sleep(0.25)
    if not app_run.done():
        app_run.cancel()


def _output_survives_a_closed_terminal() -> None:
    """Keep Textual's output thread draining after the terminal has gone.

    Its first write to a closed terminal (EIO after SIGHUP) ends the thread, its queue
    fills, and the app blocks for ever in a write: it never hears the signal, and the
    agents it started are never ended. Here a failed write means the terminal is gone,
    and what follows is dropped instead.
    """
    from announcer.ui.tui.textual_private import writer_thread

    writer = writer_thread()
    if getattr(writer, "_announcer_survives", False):
        return

    def run(self: Any) -> None:
        write, flush = self._file.write, self._file.flush
        get, waiting = self._queue.get, self._queue.qsize
        gone = False
        while True:
            text = get()
            if text is None:
                break
            if gone:
                continue
            try:
                write(text)
                if waiting() == 0:
                    flush()
            except (OSError, ValueError):  # the terminal closed: nothing more to show
                gone = True
        if not gone:
            with contextlib.suppress(OSError, ValueError):
                flush()

    writer.run = run  # type: ignore[method-assign]
    writer._announcer_survives = True  # type: ignore[attr-defined]


def _input_ends_on_a_closed_terminal() -> None:
    """End Textual's input thread when the terminal has gone, and say so to the app.

    Textual's reader takes an empty read (end of input: a closed terminal reads as
    nothing, at once, for ever) as "nothing yet" and reads again: the thread spins at full
    CPU until the app stops it, and when the app never does (its loop cancelled, or
    already over) the process never exits, since the thread is not a daemon. Here the
    first empty or failed read ends the thread and calls the app's ``terminal_gone``
    (the runner makes it the same as SIGHUP).
    """
    import codecs
    import selectors

    from textual.drivers import linux_driver

    from announcer.ui.tui.textual_private import xterm_parser

    XTermParser = xterm_parser()

    driver = linux_driver.LinuxDriver
    if getattr(driver, "_announcer_input_ends", False):
        return

    def terminal_closed(self: Any) -> None:
        hook = getattr(self._app, "terminal_gone", None)
        if callable(hook):
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                self._loop.call_soon_threadsafe(hook)

    def run_input_thread(self: Any) -> None:
        parser = XTermParser(self._debug)
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        fileno = self.fileno
        with selectors.SelectSelector() as selector:
            selector.register(fileno, selectors.EVENT_READ)
            while not self.exit_event.is_set():
                if selector.select(0.1):
                    try:
                        data = os.read(fileno, 4096)
                    except OSError:  # EIO: the terminal hung up
                        data = b""
                    if not data:
                        terminal_closed(self)
                        return
                    text = decode(data)  # "" for half a character: feed("") means the end
                    for event in parser.feed(text) if text else ():
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)

    driver.run_input_thread = run_input_thread  # type: ignore[method-assign]
    driver._announcer_input_ends = True  # type: ignore[attr-defined]


async def run_with_session(
    session: RunnableSession,
    *,
    headless: bool = False,
    save_settings: Callable[[UserSettings], object] | None = None,
) -> int:
    """Show ``session`` in the Textual app until the user quits or the session ends."""
    saver = save_settings if save_settings is not None else settings_saver(session.settings)
    _output_survives_a_closed_terminal()
    if sys.platform != "win32":
        _input_ends_on_a_closed_terminal()
    app = AnnouncerApp(session, save_settings=saver)
    runner: asyncio.Task[int] = asyncio.ensure_future(session.run())

    def session_over(_task: asyncio.Task[int]) -> None:
        if session.exit_when_done:
            app.exit()  # the user asked to stop when the sessions end
        elif app.is_running:
            app.say(_("Listening has stopped. Press Control Q to quit."))

    runner.add_done_callback(session_over)
    stopped = _stop_on_signals(session, app)
    insist: asyncio.Task[None] | None = None
    try:
        with logs_held_while_the_app_runs():
            app_run = asyncio.ensure_future(app.run_async(headless=headless))
            insist = asyncio.ensure_future(_exit_when_stopped(app, stopped, app_run))
            try:
                await app_run
            except asyncio.CancelledError:
                if not (stopped.is_set() and app_run.cancelled()):
                    raise  # our own task was cancelled, not the app by a signal
    finally:
        if insist is not None:
            insist.cancel()
        session.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(runner), timeout=10)
    if app.return_code not in (None, 0):
        return int(app.return_code)  # the app crashed: never report success (issue 14)
    if runner.done() and not runner.cancelled() and runner.exception() is None:
        return int(runner.result() or 0)
    return 1
