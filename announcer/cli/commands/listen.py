"""``announcer listen SOURCE...``: hear one or more live producers and answer them.

Several sources may be given at once, mixed in one engine. The kinds of SOURCE are one
table, :data:`announcer.transports.schemes.SOURCE_SCHEMES`, which ``--help`` prints.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from announcer.cli.launch import (
    default_ui,
    make_driver,
    run_session,
    settings_from_args,
    speech_switcher,
    ui_choices,
)
from announcer.config import add_settings_flags, resolve_source
from announcer.engine.settings import UserSettings
from announcer.i18n.translate import catalog_language
from announcer.runtime.failures import connection_failure
from announcer.runtime.session import FrameAdapter, LiveSession
from announcer.transports import TransportError, TransportOptions
from announcer.transports.schemes import sources_help

log = logging.getLogger("announcer.cli")

#: ``listen --help``: the sources it takes, from the one table (docs/transports.md)
DESCRIPTION = (
    "Hear one or more live producers and answer them. Several sources may be given\n"
    "at once, mixed in one engine. A SOURCE is one of these, or the NAME of a producer\n"
    "saved in the settings file:\n\n" + sources_help()
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "listen",
        help="listen to live AAEP producers and answer them",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    if options.ca_file is not None:
        try:
            options.ssl_context()  # a CA file that cannot be used: said once, before any retry
        except TransportError as exc:
            language = catalog_language(settings.languages)
            print(f"announcer: {connection_failure(str(exc), language)}", file=sys.stderr)
            return 2
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
    from announcer.cli.acp_agents import acp_transports, resolve_agent, unique_labels

    found = []
    for word in acp_words:
        one = resolve_agent(word.removeprefix("acp:"), settings)
        if isinstance(one, str):
            return one
        found.append(one)
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
