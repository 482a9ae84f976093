"""``announcer listen SOURCE...``: hear one or more live producers and answer them.

SOURCE is ``ws://`` or ``wss://`` (WebSocket, B.2), ``http://`` or ``https://``
(SSE + POST, B.1), ``unix:/path`` (B.4), ``stdio:COMMAND`` (B.6), ``acp:NAME`` or
``acp:COMMAND`` (an ACP agent, as ``announcer agent`` starts it), a JSON Lines file, or
``-`` for standard input. Several sources may be given at once, mixed in one engine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import logging
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from announcer.config import add_settings_flags, resolve_source
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language
from announcer.runtime.session import FrameAdapter, LiveSession
from announcer.transports import TransportError, TransportOptions

log = logging.getLogger("announcer.cli")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "listen", help="listen to live AAEP producers and answer them", description=__doc__
    )
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a source, or the NAME of a producer saved in the settings file",
    )
    add_listen_options(parser)
    parser.set_defaults(func=run)


def add_listen_options(parser: argparse.ArgumentParser) -> None:
    ui = parser.add_argument_group("interface")
    ui.add_argument(
        "--ui",
        choices=ui_choices(),
        default=default_ui(),
        help="tui (full screen, the default on an interactive terminal), plain, or none",
    )
    ui.add_argument(
        "--auto-reject",
        action="store_true",
        help="reject every confirmation without asking (never accepts anything)",
    )
    ui.add_argument("--exit-when-done", action="store_true", help="stop when sessions end")
    parser.add_argument("--format", default="aaep", metavar="NAME", help="input format adapter")
    # --speech, --language, --verbosity, the voice flags and --config: one set for every command.
    add_settings_flags(parser)
    conn = parser.add_argument_group("connection")
    conn.add_argument(
        "--allow-insecure", action="store_true", help="allow ws:// or http:// off loopback"
    )
    conn.add_argument("--ca-file", metavar="PATH", help="trust this CA for wss:// and https://")
    conn.add_argument(
        "--token-env", metavar="VAR", help="bearer token from this environment variable"
    )
    conn.add_argument("--token-file", metavar="PATH", help="bearer token from this file")
    conn.add_argument("--max-frame-bytes", type=int, default=1024 * 1024, metavar="N")
    conn.add_argument("--stall-timeout", type=float, default=45.0, metavar="SECONDS")
    conn.add_argument("--handshake-timeout", type=float, default=5.0, metavar="SECONDS")
    conn.add_argument("--unix-framing", choices=["length", "ndjson"], default="length")
    conn.add_argument("--events-path", metavar="PATH", help="SSE event stream path")
    conn.add_argument("--replies-path", metavar="PATH", help="reply POST path")
    conn.add_argument("--subscribe-path", metavar="PATH", help="subscription POST path")
    parser.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")


def ui_choices() -> list[str]:
    choices = ["plain", "none"]
    with contextlib.suppress(ImportError):
        importlib.import_module("announcer.ui.tui")
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
    try:
        config = importlib.import_module("announcer.config.settings")
        loader = getattr(config, "load_settings", None)
    except ImportError:
        loader = None
    if loader is None:
        return UserSettings()
    if path is not None and not path.is_file():
        # a mistyped path must not look like the user's preferences were read
        print(
            f"announcer: --config {path}: no such file; using default settings",
            file=sys.stderr,
        )
    try:
        loaded = loader(path, flags=flags)
    except Exception as exc:
        print(f"announcer: ignoring the settings file: {exc}", file=sys.stderr)
        return UserSettings()
    return loaded if isinstance(loaded, UserSettings) else UserSettings()


def resolve_sources(sources: list[str], settings: UserSettings) -> tuple[list[str], str | None]:
    """Saved producer names become their sources; also the first saved ``token_env``.

    One run shares one token option, so ``--token-env`` (when given) wins over the file.
    """
    resolved: list[str] = []
    token_env: str | None = None
    for source in sources:
        target, saved_token_env = resolve_source(source, settings)
        resolved.append(target)
        if token_env is None and saved_token_env:
            token_env = saved_token_env
    return resolved, token_env


def options_from_args(
    args: argparse.Namespace, saved_token_env: str | None = None
) -> TransportOptions:
    return TransportOptions(
        allow_insecure=args.allow_insecure,
        ca_file=args.ca_file,
        token_env=args.token_env or (None if args.token_file else saved_token_env),
        token_file=args.token_file,
        max_frame_bytes=args.max_frame_bytes,
        stall_seconds=args.stall_timeout,
        unix_framing=args.unix_framing,
        events_path=args.events_path,
        replies_path=args.replies_path,
        subscribe_path=args.subscribe_path,
    )


def format_adapter(name: str, language: str = "en") -> Callable[[], FrameAdapter] | None:
    """``--format NAME``: a factory of per-source adapters turning input lines into AAEP dicts.

    ``language`` is the language of the sentences the adapters make up (the user's).

    Each source gets its own adapter from the factory: an adapter keeps the stream's
    sessions, sequence numbers and open tool calls, and two agents' streams must never
    share them (one's tool result would close the other's tool call).
    """
    if name == "aaep":
        return None
    try:
        formats = importlib.import_module("announcer.formats")
        get_adapter = formats.get_adapter
    except (ImportError, AttributeError):
        raise SystemExit(
            f"announcer: --format {name} needs the format adapters, which this build lacks"
        ) from None
    mapping: Any = None
    adapter_name = name
    if name.startswith("mapping:"):
        # --format mapping:FILE: an AEP mapping file makes any agent's hook payloads audible
        path = name.removeprefix("mapping:")
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise SystemExit(
                f"announcer: --format {name}: cannot read {path}: {exc.strerror}"
            ) from None
        try:
            mapping = formats.parse_mapping(text)
        except formats.MappingError as exc:
            raise SystemExit(f"announcer: --format {name}: {exc}") from None
        adapter_name = f"{mapping.agent}-hooks"
    try:
        get_adapter(adapter_name, mapping=mapping)  # refuse an unknown name before starting
    except (KeyError, ValueError, LookupError) as exc:
        raise SystemExit(f"announcer: unknown --format {name!r}: {exc}") from None

    def new_adapter() -> FrameAdapter:
        return _frame_adapter(name, get_adapter(adapter_name, mapping=mapping, language=language))

    return new_adapter


def _frame_adapter(name: str, adapter: Any) -> FrameAdapter:
    """Wrap one FormatAdapter (announcer.formats) as the runtime's line -> events callable.

    ``feed(line, now)`` gives events and diagnostics; ``finish(now)`` closes what the
    stream left open (runtime.session calls it at the end of a finite source).
    """

    def to_events(line: str) -> list[dict[str, Any]]:
        out = adapter.feed(line, time.time())
        for diagnostic in out.diagnostics:
            log.warning("--format %s: line not announced: %s", name, diagnostic)
        return list(out.events)

    def finish() -> list[dict[str, Any]]:
        return list(adapter.finish(time.time()).events)

    to_events.finish = finish  # type: ignore[attr-defined]
    return to_events


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
    from announcer.speech.backends import backend_from_spec
    from announcer.speech.registry import printed_fallback_backend, split_speech_spec

    name, _ = split_speech_spec(spec)
    if name == "auto" and ui in ("plain", "tui"):
        # The UI already shows every line; a text "voice" would print it twice (or,
        # under Textual, raw beneath the app). When every voice has failed, the lines
        # on screen are all that is left.
        return printed_fallback_backend(
            settings, notify=(notices or HeldNotices()) if ui == "tui" else notify_stderr
        )
    if name == "text" and ui == "tui":
        # Text lines written beneath the Textual app would land inside its screen;
        # its transcript already shows every announcement, one per line.
        from announcer.speech.text import PrintedBackend

        return PrintedBackend()
    return backend_from_spec(spec, settings)  # text goes to stderr


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


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="announcer: %(message)s",
    )
    settings = settings_from_args(args)
    agents = acp_agents(list(args.sources), settings)
    if isinstance(agents, str):
        print(agents, file=sys.stderr)
        return 2
    named, transports = agents
    if transports or any(source.startswith("stdio:") for source in args.sources):
        from announcer.transports.processes import become_subreaper

        become_subreaper()  # a command an agent leaves behind stays ours to find and end
    sources, saved_token_env = resolve_sources(
        [s for s in args.sources if s not in named], settings
    )
    options = options_from_args(args, saved_token_env)
    adapter_factory = format_adapter(args.format, catalog_language(settings.languages))
    driver = make_driver(settings.backend, settings, ui=args.ui)
    try:
        session = LiveSession(
            sources,
            settings,
            options,
            transports=transports,
            driver=driver,
            backend_factory=speech_switcher(args.ui, driver),
            handshake_timeout=args.handshake_timeout,
            exit_when_done=args.exit_when_done,
            adapter_factory=adapter_factory,
            # §5.3.1.4: --ui none cannot answer; only --auto-reject replies there.
            can_reply=args.ui != "none" or settings.reply_policy == "auto_reject",
            diagnostics_file=_diagnostics_path(),
        )
    except TransportError as exc:
        print(f"announcer: {exc}", file=sys.stderr)
        return 2
    # Modules, models and settings live as long as the process: keep the garbage
    # collector from rescanning them while events stream in.
    gc.collect()
    gc.freeze()
    try:
        return asyncio.run(run_session(session, args.ui, config=args.config))
    finally:
        for transport in transports:
            transport.kill_now()  # an agent's process group ends with announcer


def acp_agents(sources: list[str], settings: UserSettings) -> tuple[set[str], list[Any]] | str:
    """``acp:NAME`` / ``acp:COMMAND`` sources (or saved ones) as agents beside the others.

    The SOURCE words that are agents, and one ACP transport each, named by its short
    name so several sources can be told apart; or a sentence saying what is wrong.
    """
    acp_words = [
        s
        for s in sources
        if s.startswith("acp:") or resolve_source(s, settings)[0].startswith("acp:")
    ]
    if not acp_words:
        return set(), []
    from announcer.cli.commands.agent import acp_transports, resolve_agent

    found = []
    for word in acp_words:
        one = resolve_agent(word.removeprefix("acp:"), settings)
        if isinstance(one, str):
            return one
        found.append(one)
    from announcer.cli.commands.agent import unique_labels

    transports = acp_transports(
        unique_labels(found),
        cwd=None,
        language=catalog_language(settings.languages),
        named=len(sources) > 1,
    )
    return set(acp_words), transports


def _diagnostics_path() -> Path | None:
    """Where every dropped frame is logged (envelope fields only), in the state directory."""
    try:
        from announcer.runtime.diagnostics import default_log_path

        return default_log_path()
    except Exception as exc:  # no state directory: the diagnostics screen still counts
        log.error("no diagnostics log file: %s", exc)
        return None


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
