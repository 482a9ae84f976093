"""``announcer demo-producer``: a real AAEP Level 3 producer to try announcer on.

It serves WebSocket (``/aaep/v1/ws``, subprotocol ``aaep.v1``) and SSE+POST
(``/aaep/v1/...``) on one loopback port, optionally a Unix socket, or speaks
JSON-RPC on stdio. What its pretend agent does comes from a scenario file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import os
import ssl
import sys

from announcer.producer.core import ProducerCore, ProducerOptions
from announcer.producer.scenario import available_scenarios, load_scenario
from announcer.producer.server import ProducerServer, serve_stdio


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo-producer",
        help="run the built-in demo AAEP producer on loopback",
        description=__doc__,
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (0 picks a free one)")
    parser.add_argument("--scenario", default="tour", help="bundled scenario name or a file path")
    parser.add_argument("--list-scenarios", action="store_true", help="list bundled scenarios")
    parser.add_argument("--speed", type=float, default=1.0, help="multiply every pause by this")
    parser.add_argument("--unix", metavar="PATH", help="also serve a Unix socket at PATH")
    parser.add_argument("--unix-framing", choices=["length", "ndjson"], default="length")
    parser.add_argument("--stdio", action="store_true", help="speak JSON-RPC 2.0 on stdin/stdout")
    parser.add_argument(
        "--no-handshake", action="store_true", help="behave as a Level 1/2 producer"
    )
    parser.add_argument(
        "--reference-paths",
        action="store_true",
        help="serve GET /events and POST /messages like the public reference producer",
    )
    parser.add_argument("--token-env", metavar="VAR", help="require the bearer token in $VAR")
    parser.add_argument("--reject-first", type=int, default=0, metavar="N")
    parser.add_argument("--retry-after", type=int, default=1, metavar="SECONDS")
    parser.add_argument("--heartbeat", type=float, default=15.0, metavar="SECONDS")
    parser.add_argument("--loop", action="store_true", help="run the scenario again and again")
    parser.add_argument("--tls-cert", metavar="PEM", help="serve wss:// and https:// with this")
    parser.add_argument("--tls-key", metavar="PEM", help="private key for --tls-cert")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.set_defaults(func=run)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_core(args: argparse.Namespace) -> ProducerCore:
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        raise SystemExit(f"announcer demo-producer: ${args.token_env} is empty or unset")
    options = ProducerOptions(
        speed=args.speed,
        handshake=not (args.no_handshake or args.reference_paths),
        auth_token=token,
        reject_first=args.reject_first,
        retry_after_seconds=args.retry_after,
        loop=args.loop,
    )
    return ProducerCore(load_scenario(args.scenario), options)


def run(args: argparse.Namespace) -> int:
    if args.list_scenarios:
        for name in available_scenarios():
            print(name)
        return 0
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="demo-producer: %(message)s",
    )
    if not _is_loopback(args.host):
        print("announcer demo-producer: the demo serves loopback only (no TLS)", file=sys.stderr)
        return 2
    core = build_core(args)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args, core))
    return 0


async def _serve(args: argparse.Namespace, core: ProducerCore) -> None:
    if args.stdio:
        await serve_stdio(core)
        return
    ssl_context = None
    if args.tls_cert:
        ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ssl_context.load_cert_chain(args.tls_cert, args.tls_key)
    server = ProducerServer(
        core,
        args.host,
        args.port,
        unix_path=args.unix,
        unix_framing=args.unix_framing,
        paths="reference" if args.reference_paths else "aaep",
        heartbeat_seconds=args.heartbeat,
        ssl_context=ssl_context,
    )
    await server.start()
    lines = [f"announcer demo producer listening on {server.base_url}"]
    if not args.reference_paths:
        ws = "wss" if ssl_context else "ws"
        lines.append(f"  WebSocket: {ws}://{args.host}:{server.port}/aaep/v1/ws")
    if args.unix:
        lines.append(f"  Unix socket: unix:{args.unix}")
    print("\n".join(lines), file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()
