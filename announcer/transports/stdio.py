"""Appendix B.6: spawn a producer and speak JSON-RPC 2.0 over its stdin and stdout.

The producer's stderr is for people (B.6.5): it is passed through to ours,
never parsed. Stopping the transport stops the child: first a polite
``aaep.close``, then SIGTERM, then SIGKILL, to it and every process it started
(it runs in a session of its own; :mod:`announcer.transports.processes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import shlex
from typing import Any, Final

from announcer.platform.process import own_group
from announcer.protocol.decode import loads_strict
from announcer.transports.base import (
    SourceUnavailable,
    TransportError,
    TransportOptions,
    release_process_pipes,
)
from announcer.transports.failure import Cause, Fault
from announcer.transports.processes import (
    can_watch_exits,
    end_family,
    exited,
    kill_family_now,
    track,
)
from announcer.transports.stream import MessageStreamTransport
from announcer.transports.unix import UnixSocketTransport

log = logging.getLogger("announcer.transports")

_METHODS = {
    "subscription.request": "aaep.subscribe",
    "subscription.renegotiate": "aaep.renegotiate",
    "confirmation.reply": "aaep.reply",
    "clarification.reply": "aaep.reply",
    "subscription.close": "aaep.close",
}
_REQUESTS = {"aaep.subscribe", "aaep.renegotiate"}
# After the producer's exit, how long a line it wrote just before may take through the pipe.
LAST_LINE_SECONDS = 0.5
# How long a write that found its pipe broken waits for the producer's exit status.
ENDED_WAIT_SECONDS: Final = 5.0


class StdioTransport(MessageStreamTransport):
    def __init__(
        self, command: str, options: TransportOptions, source_id: str | None = None
    ) -> None:
        super().__init__()
        self.argv = shlex.split(command)
        if not self.argv:
            raise TransportError("stdio: needs a command, e.g. stdio:'my-agent --aaep'")
        self.options = options
        self.source_id = source_id or f"stdio:{command}"
        self.description = f"stdio:{self.argv[0]}"
        self._proc: asyncio.subprocess.Process | None = None
        self._exit: asyncio.Task[int | None] | None = None
        self._ids = itertools.count(1)

    async def connect(self) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None,
                limit=self.options.max_frame_bytes + 16,
                **own_group(),  # its own group and session: ended with announcer
            )
        except OSError as exc:
            # Not found, not executable: trying again cannot help.
            fault = (
                Fault.COMMAND_NOT_FOUND
                if isinstance(exc, FileNotFoundError)
                else Fault.COMMAND_NOT_STARTED
            )
            raise SourceUnavailable(
                f"cannot start the command {self.argv[0]}: {exc.strerror}",
                Cause(fault, command=self.argv[0]),
            ) from None
        track(self._proc.pid)
        if can_watch_exits():
            self._exit = asyncio.ensure_future(self._exit_status(self._proc))

    @staticmethod
    async def _exit_status(proc: asyncio.subprocess.Process) -> int | None:
        """The producer's exit itself, not its standard output closing: a command it started
        may hold that open long after the producer died, and the source would look alive."""
        status = await exited(proc.pid)
        for _ in range(100):  # reaped by asyncio's watcher: its status arrives in a moment
            if status is not None or proc.returncode is not None:
                break
            await asyncio.sleep(0.01)
        return proc.returncode if status is None else status

    async def _next_line(self, stdout: asyncio.StreamReader) -> bytes:
        """The next line, as ``readuntil``; b"" once the producer has exited and no line it
        wrote is left on its way."""
        watch = self._exit
        if watch is None:
            return await stdout.readuntil(b"\n")
        reading = asyncio.ensure_future(stdout.readuntil(b"\n"))
        try:
            await asyncio.wait((reading, watch), return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                await asyncio.wait((reading,), timeout=LAST_LINE_SECONDS)
            return reading.result() if reading.done() else b""
        finally:
            if not reading.done():
                reading.cancel()  # what is buffered stays buffered

    async def _read(self) -> str | None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        while True:
            try:
                line = await self._next_line(proc.stdout)
            except asyncio.LimitOverrunError:
                self.options.drop_oversize()
                await UnixSocketTransport._skip_rest_of_line(proc.stdout)
                continue
            except asyncio.IncompleteReadError as exc:
                line = exc.partial
            if not line:
                watch = self._exit
                code = watch.result() if watch is not None and watch.done() else None
                if code is None:
                    code = await proc.wait()
                raise TransportError(
                    f"the producer process exited with status {code}",
                    Cause(Fault.PROCESS_EXITED, status=code),
                )
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                self.options.drop_not_utf8()
                continue
            try:
                envelope = loads_strict(text)  # duplicate keys are not silently merged
            except ValueError as exc:
                log.info("stdio line refused: %s", exc)
                self.options.count_drop("stdio line is not valid JSON")
                continue
            if not isinstance(envelope, dict) or envelope.get("jsonrpc") != "2.0":
                self.options.count_drop("stdio line is not JSON-RPC 2.0")
                continue
            if "result" in envelope:
                return json.dumps(envelope["result"], ensure_ascii=False)
            if "error" in envelope:
                error = envelope["error"]
                message = error.get("message") if isinstance(error, dict) else error
                log.warning("the producer answered a request with an error: %s", message)
                continue
            method = envelope.get("method")
            if method == "aaep.ping" and "id" in envelope:
                await self._send_envelope({"jsonrpc": "2.0", "id": envelope["id"], "result": {}})
                continue
            if method in ("aaep.event", "aaep.message", "aaep.renegotiate", "aaep.close"):
                params = envelope.get("params")
                if method == "aaep.close" and not (
                    isinstance(params, dict) and params.get("type") == "subscription.close"
                ):
                    return None
                return json.dumps(params, ensure_ascii=False)
            self.options.count_drop(f"unknown JSON-RPC method {method!r}")

    async def _send_envelope(self, envelope: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise TransportError(
                "the producer process is not running", Cause(Fault.PROCESS_NOT_RUNNING)
            )
        proc.stdin.write(json.dumps(envelope, ensure_ascii=False).encode("utf-8") + b"\n")
        try:
            await proc.stdin.drain()
        except (ConnectionError, BrokenPipeError):
            # Mostly it has ended, and how is what the user needs ("ended with status 0"),
            # whichever the loop learnt first, the broken pipe or the exit (on a loaded
            # machine the pipe often comes first).
            code = await self._ended_status(proc)
            if code is not None:
                raise TransportError(
                    f"the producer process exited with status {code}",
                    Cause(Fault.PROCESS_EXITED, status=code),
                ) from None
            raise TransportError(
                "the producer process stopped reading", Cause(Fault.PROCESS_NOT_RUNNING)
            ) from None

    async def _ended_status(self, proc: asyncio.subprocess.Process) -> int | None:
        """Its exit status if it ended or ends within ``ENDED_WAIT_SECONDS``, else None (it
        closed its input and runs on)."""
        watch = self._exit
        if watch is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                return await asyncio.wait_for(asyncio.shield(watch), ENDED_WAIT_SECONDS)
            return None
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(proc.wait(), ENDED_WAIT_SECONDS)
        return None

    async def _write(self, message: dict[str, Any]) -> None:
        method = _METHODS.get(str(message.get("type")), "aaep.reply")
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": message}
        if method in _REQUESTS:
            envelope["id"] = next(self._ids)
        await self._send_envelope(envelope)

    async def close(self, reason: str = "subscriber_shutdown") -> None:
        proc = self._proc
        self._proc = None
        if self._exit is not None:
            self._exit.cancel()
            self._exit = None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 3)  # after aaep.close, it may go
            alive = proc.returncode is None
            # then SIGTERM and SIGKILL to it and whatever it started, by their own ids
            await end_family(proc.pid, tree=alive)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 3)
        finally:
            kill_family_now(proc.pid, tree=proc.returncode is None)
            release_process_pipes(proc)  # even when this close was cut short
