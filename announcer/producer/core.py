"""The demo producer's brain: subscriptions, the scenario run, and blocking prompts.

Transport front-ends (``server.py``) turn connections into calls on
:class:`ProducerCore`; the core decides what each subscription receives. It
implements the Level 3 producer contract a subscriber relies on: the handshake
with honoured capabilities narrower than or equal to the request (§5.4.4),
rate limiting with critical events exempt (§5.5.4, §5.6.1), the blocking
confirmation contract with timeouts and default decisions (§6.1, §6.4),
single-use reply tokens (§6.3.5), cancellation of a pending prompt (§6.8) and
the default decision applied when the replying subscriber goes away (§5.8.2).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from announcer.producer.scenario import Scenario, localise, pick_language
from announcer.protocol.events import Decision

log = logging.getLogger("announcer.producer")

AAEP_CONTEXT = "https://aaep-protocol.org/context/v1"
AAEP_VERSION = "1.0.0"
PRODUCER_MAX_EVENTS_PER_SECOND = 20
LOG_LENGTH = 1000
_CRITICAL_TYPES = {
    "agent.session.errored",
    "agent.awaiting.confirmation",
    "agent.awaiting.clarification",
    "agent.handoff.requested",
}
_DEFAULT_CAPABILITIES: dict[str, Any] = {
    "preferred_verbosity": "normal",
    "languages": ["en-US"],
    "supports_confirmation_reply": False,
    "supports_clarification_reply": False,
    "coalesce_boundaries": ["sentence", "completion"],
    "event_filters": {"include": ["aaep:agent.*"], "exclude": []},
    "supported_conformance_levels": [1],
    "cognitive_load": "medium",
}


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(16)}"


@dataclass(slots=True)
class ProducerOptions:
    speed: float = 1.0
    handshake: bool = True
    auth_token: str | None = None
    max_subscriptions: int = 16
    reject_first: int = 0
    retry_after_seconds: int = 1
    sse_grace_seconds: float = 60.0
    loop: bool = False


@dataclass(slots=True)
class ReceivedReply:
    """A reply the producer accepted, kept so tests can check the token echoed."""

    type: str
    reply_token: str
    subscription_id: str | None
    decision: str | None
    response: Any
    decided_by: str | None
    message: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Subscription:
    """One subscriber's terms and its outgoing event log (for SSE resume, §B.1.5)."""

    subscription_id: str
    capabilities: dict[str, Any]
    handshaken: bool
    log: deque[tuple[int, dict[str, Any]]] = field(default_factory=lambda: deque(maxlen=LOG_LENGTH))
    next_index: int = 0
    closed: bool = False
    attached: int = 0
    detached_at: float | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _bucket: float = 0.0
    _bucket_at: float = field(default_factory=time.monotonic)
    _held: deque[dict[str, Any]] = field(default_factory=deque)
    _pump: asyncio.Task[None] | None = None

    @property
    def language(self) -> str:
        return str(self.capabilities.get("languages", ["en"])[0])

    def replies_supported(self, kind: str) -> bool:
        return bool(self.capabilities.get(f"supports_{kind}_reply", False))

    def _append(self, message: dict[str, Any]) -> None:
        self.log.append((self.next_index, message))
        self.next_index += 1
        self._changed.set()

    async def follow(
        self, after_event_id: str | None = None, *, from_start: bool = False
    ) -> AsyncIterator[dict[str, Any]]:
        """Every logged message after ``after_event_id`` (or from now), then new ones.

        ``from_start`` replays the whole log: an SSE stream opened after the POST
        handshake must not miss what was emitted in between.
        """
        position = (
            (self.log[0][0] if self.log else self.next_index) if from_start else (self.next_index)
        )
        if after_event_id is not None:
            for index, message in self.log:
                if message.get("event_id") == after_event_id:
                    position = index + 1
                    break
            else:
                position = -1  # not resumable: caller sends a state summary first
        if position == -1:
            position = self.next_index
        while not self.closed:
            oldest = self.log[0][0] if self.log else self.next_index
            position = max(position, oldest)
            if position < self.next_index:
                message = self.log[position - oldest][1]
                position += 1
                yield message
                continue
            self._changed.clear()
            await self._changed.wait()

    def offer(self, message: dict[str, Any]) -> None:
        """Queue an event under the honoured rate; critical events flush and go now."""
        if message.get("urgency") == "critical":
            # §5.5.4/§5.6.1: never delay critical; flush held events first to keep order (§8.2.3)
            while self._held:
                self._append(self._held.popleft())
            self._append(message)
            return
        self._held.append(message)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        rate = float(self.capabilities.get("max_events_per_second") or 0) or None
        while self._held and not self.closed:
            if rate is not None:
                now = time.monotonic()
                self._bucket = min(rate, self._bucket + (now - self._bucket_at) * rate)
                self._bucket_at = now
                if self._bucket < 1.0:
                    await asyncio.sleep((1.0 - self._bucket) / rate)
                    continue
                self._bucket -= 1.0
            if self._held:
                self._append(self._held.popleft())

    def close(self) -> None:
        self.closed = True
        self._changed.set()
        if self._pump is not None:
            self._pump.cancel()


@dataclass(slots=True)
class _Prompt:
    kind: str
    token: str
    fields: dict[str, Any]
    future: asyncio.Future[Any]


class ProducerCore:
    def __init__(self, scenario: Scenario, options: ProducerOptions | None = None) -> None:
        self.scenario = scenario
        self.options = options or ProducerOptions()
        self.subscriptions: dict[str, Subscription] = {}
        self.replies: list[ReceivedReply] = []
        self.handshakes_seen = 0
        self.closed_by_subscriber = 0
        self.renegotiations = 0
        self.session_id = new_id("sess")
        self._sequence = 0
        self._state = "idle"
        self._prompts: dict[str, _Prompt] = {}
        self._used_tokens: set[str] = set()
        self._runner: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()

    # ---- handshake (chapter 5) -------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        return {
            "@context": AAEP_CONTEXT,
            "type": "aaep:producer.manifest",
            **self.scenario.agent,
            "aaep_versions_supported": [AAEP_VERSION],
            "conformance_levels_supported": [1, 2, 3] if self.options.handshake else [1, 2],
            "transports_supported": ["sse", "websocket", "unix-socket", "stdio-jsonrpc"],
            "languages_supported": list(self.scenario.languages),
            "default_verbosity": "normal",
            "max_concurrent_subscriptions": self.options.max_subscriptions,
            # Where the B.1/B.2 endpoints live on this origin (§5.10, B.7.1).
            "endpoints": {
                "subscriptions": "/aaep/v1/subscriptions",
                "events": "/aaep/v1/events",
                "replies": "/aaep/v1/replies",
                "websocket": "/aaep/v1/ws",
            },
        }

    def subscribe(
        self, request: Any, authorization: str | None = None
    ) -> tuple[dict[str, Any], Subscription | None]:
        """Answer a ``subscription.request``: accepted with honoured terms, or rejected."""
        self.handshakes_seen += 1
        if not isinstance(request, dict) or request.get("type") != "subscription.request":
            return _rejected("unknown", "The first message must be a subscription.request."), None
        if self.options.auth_token is not None:
            if not authorization:
                return _rejected("authentication_required", "A bearer token is required."), None
            if authorization != f"Bearer {self.options.auth_token}":
                return _rejected("authorization_denied", "That token is not authorised."), None
        version = str(request.get("aaep_version", ""))
        if version.split(".")[0] != AAEP_VERSION.split(".")[0]:
            return _rejected("version_unsupported", f"AAEP {version} is not supported."), None
        capabilities = request.get("capabilities")
        if not isinstance(capabilities, dict):
            return _rejected("capabilities_incompatible", "capabilities must be an object."), None
        if capabilities.get("accept_signed_manifests_only"):
            return (
                _rejected("manifest_signature_required", "This demo has no signed manifest."),
                None,
            )
        if self.handshakes_seen <= self.options.reject_first or (
            len(self.subscriptions) >= self.options.max_subscriptions
        ):
            rejected = _rejected("rate_limit", "Too many subscribers right now.")
            rejected["retry_after_seconds"] = self.options.retry_after_seconds
            return rejected, None
        honoured, notes = self._honour(capabilities)
        sub = Subscription(new_id("sub"), honoured, handshaken=True)
        self.subscriptions[sub.subscription_id] = sub
        accepted: dict[str, Any] = {
            "type": "subscription.accepted",
            "subscription_id": sub.subscription_id,
            "aaep_version": AAEP_VERSION,
            "producer": dict(self.scenario.agent),
            "honored_capabilities": honoured,
        }
        if notes:
            accepted["negotiation_notes"] = " ".join(notes)
        log.info("subscription %s accepted", sub.subscription_id)
        self._start_scenario()
        return accepted, sub

    def anonymous(self) -> Subscription:
        """A subscriber that never shook hands (Level 1): defaults apply (§9.3.3)."""
        capabilities = dict(_DEFAULT_CAPABILITIES)
        if not self.options.handshake:
            # Like the public reference producer: replies accepted from anyone holding the token.
            capabilities["supports_confirmation_reply"] = True
            capabilities["supports_clarification_reply"] = True
        sub = Subscription(new_id("sub"), capabilities, handshaken=False)
        self.subscriptions[sub.subscription_id] = sub
        self._start_scenario()
        return sub

    def _honour(self, requested: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        honoured: dict[str, Any] = dict(_DEFAULT_CAPABILITIES)
        notes: list[str] = []
        for key, value in requested.items():
            if key in _DEFAULT_CAPABILITIES or key in ("pace_wpm", "max_events_per_second"):
                honoured[key] = value
        rate = requested.get("max_events_per_second")
        if isinstance(rate, int | float) and rate > PRODUCER_MAX_EVENTS_PER_SECOND:
            honoured["max_events_per_second"] = PRODUCER_MAX_EVENTS_PER_SECOND
            notes.append(f"Rate capped at {PRODUCER_MAX_EVENTS_PER_SECOND} events per second.")
        wanted = [str(tag) for tag in honoured.get("languages") or ["en-US"]]
        usable = [tag for tag in wanted if _matches_any(tag, self.scenario.languages)]
        if usable:
            honoured["languages"] = usable  # §5.4.4: a subset of the request
        else:
            honoured["languages"] = wanted[:1]
            notes.append(
                f"No text in {', '.join(wanted)}; texts come in {self.scenario.languages[0]}."
            )
        levels = honoured.get("supported_conformance_levels") or [1]
        honoured["supported_conformance_levels"] = [lvl for lvl in levels if lvl in (1, 2, 3)]
        return honoured, notes

    def handle(self, sub: Subscription | None, message: Any) -> dict[str, Any] | None:
        """A message after the handshake; returns a response message when one is due."""
        if not isinstance(message, dict):
            log.warning("dropped a message that is not a JSON object")
            return None
        kind = message.get("type")
        if kind in ("confirmation.reply", "clarification.reply"):
            self._reply(sub, message)
            return None
        if kind == "subscription.renegotiate":
            if sub is None or message.get("subscription_id") != sub.subscription_id:
                return _rejected("unknown", "Unknown subscription.")
            changes = message.get("capabilities")
            if not isinstance(changes, dict):
                return _rejected("capabilities_incompatible", "capabilities must be an object.")
            self.renegotiations += 1
            merged = {**sub.capabilities, **changes}  # §5.7.1 omitted fields keep their value
            honoured, notes = self._honour(merged)
            sub.capabilities = honoured
            accepted = {
                "type": "subscription.accepted",
                "subscription_id": sub.subscription_id,
                "aaep_version": AAEP_VERSION,
                "producer": dict(self.scenario.agent),
                "honored_capabilities": honoured,
            }
            if notes:
                accepted["negotiation_notes"] = " ".join(notes)
            return accepted
        if kind == "subscription.close":
            if sub is not None:
                self.closed_by_subscriber += 1
                self.close(sub)
            return None
        if kind == "subscription.request":
            log.warning("a second subscription.request on one connection was ignored")
            return None
        log.warning("dropped a message of unknown type %r", kind)
        return None

    def close(self, sub: Subscription) -> None:
        sub.close()
        self.subscriptions.pop(sub.subscription_id, None)
        self._check_prompts_still_answerable()

    def status(self) -> dict[str, Any]:
        """Counters for people and tests watching the demo (``GET /demo/status``)."""
        return {
            "subscriptions": len(self.subscriptions),
            "handshakes": self.handshakes_seen,
            "renegotiations": self.renegotiations,
            "closed_by_subscriber": self.closed_by_subscriber,
            "replies": len(self.replies),
            "session_id": self.session_id,
            "state": self._state,
        }

    def find(self, subscription_id: str | None) -> Subscription | None:
        return self.subscriptions.get(subscription_id or "")

    # ---- replies (chapter 6) ---------------------------------------------------

    def _reply(self, sub: Subscription | None, message: dict[str, Any]) -> bool:
        token = message.get("reply_token")
        prompt = self._prompts.get(token) if isinstance(token, str) else None
        if prompt is None or prompt.future.done():
            reason = "already used" if token in self._used_tokens else "unknown or expired"
            log.warning("ignored a reply: token %s (§6.3.4)", reason)
            return False
        if (
            sub is not None
            and sub.handshaken
            and (message.get("subscription_id") != sub.subscription_id)
        ):
            log.warning("ignored a reply naming another subscription")
            return False
        expected = "confirmation.reply" if prompt.kind == "confirmation" else "clarification.reply"
        if message.get("type") != expected:
            log.warning("ignored a %s to a %s", message.get("type"), prompt.kind)
            return False
        if prompt.kind == "confirmation":
            allowed = prompt.fields.get("allowed_replies", list(get_args(Decision)))
            value: Any = message.get("decision")
            if value not in allowed:
                log.warning("ignored a confirmation.reply with decision %r", value)
                return False
        else:
            value = message.get("response")
            if not _response_fits(value, prompt.fields):
                log.warning("ignored a clarification.reply whose response does not fit (§6.5.5)")
                return False
        self._used_tokens.add(prompt.token)
        self.replies.append(
            ReceivedReply(
                type=expected,
                reply_token=prompt.token,
                subscription_id=message.get("subscription_id"),
                decision=message.get("decision"),
                response=message.get("response"),
                decided_by=message.get("decided_by"),
                message=dict(message),
            )
        )
        prompt.future.set_result(value)
        return True

    def _check_prompts_still_answerable(self) -> None:
        """§5.8.2: with nobody left who can reply, pending prompts take their defaults."""
        for prompt in list(self._prompts.values()):
            if prompt.future.done():
                continue
            if not any(s.replies_supported(prompt.kind) for s in self.subscriptions.values()):
                prompt.future.set_result(None)

    # ---- the scenario run --------------------------------------------------------

    def _start_scenario(self) -> None:
        """Run the scenario for the first subscriber, and again for one arriving after it ended."""
        if self._runner is None or self._runner.done():
            if self._runner is not None:
                self.session_id = new_id("sess")
                self._sequence = 0
            self.finished.clear()
            self._runner = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
        for sub in list(self.subscriptions.values()):
            sub.close()

    async def _run(self) -> None:
        try:
            while True:
                await self._sleep(0.2)
                await self._steps(self.scenario.steps, None)
                if not self.options.loop:
                    break
                self.session_id = new_id("sess")
                await self._sleep(2.0)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the scenario run failed")
        finally:
            self.finished.set()

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.options.speed)

    async def _steps(self, steps: list[dict[str, Any]], answer: str | None) -> None:
        for step in steps:
            if "pause" in step:
                await self._sleep(float(step["pause"]))
            elif "emit" in step:
                self.emit(step["emit"], step.get("fields", {}), answer)
            elif "confirm" in step:
                await self._confirm(step)
            elif "clarify" in step:
                await self._clarify(step)

    def emit(self, short_type: str, fields: dict[str, Any], answer: str | None = None) -> None:
        """Build one event per subscription in its language and hand it to the shaper."""
        if short_type == "agent.session.started" and self._sequence > 0:
            self.session_id = new_id("sess")
            self._sequence = 0
        event_id = new_id("evt")
        timestamp = now_rfc3339()
        sequence = self._sequence
        self._sequence += 1
        if short_type == "agent.state.changed":
            self._state = str(localise(fields.get("to_state", self._state), "en"))
        for sub in list(self.subscriptions.values()):
            if short_type.startswith("agent.awaiting."):
                kind = short_type.rsplit(".", 1)[1]
                if not sub.replies_supported(kind):
                    continue  # §5.3.1.4: never send a prompt a subscriber cannot answer
            language = pick_language(self.scenario.languages, sub.capabilities.get("languages", []))
            event: dict[str, Any] = {
                "@context": AAEP_CONTEXT,
                "aaep_version": AAEP_VERSION,
                "type": f"aaep:{short_type}",
                "event_id": event_id,
                "session_id": self.session_id,
                "sequence_number": sequence,
                "timestamp": timestamp,
                "producer": dict(self.scenario.agent),
                "urgency": "critical" if short_type in _CRITICAL_TYPES else "normal",
                "verbosity": sub.capabilities.get("preferred_verbosity", "normal"),
                "localization_hints": {
                    "primary_language": language,
                    "available_languages": list(self.scenario.languages),
                },
            }
            event.update(localise(fields, language, answer))
            if not _passes_filters(event, sub.capabilities):
                continue
            sub.offer(event)

    async def _wait_prompt(self, kind: str, fields: dict[str, Any], step: dict[str, Any]) -> Any:
        token = new_id("rpl")
        fields = {**fields, "reply_token": token}
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        prompt = _Prompt(kind, token, fields, future)
        self._prompts[token] = prompt
        self._state = "awaiting_input"
        self.emit(f"agent.awaiting.{kind}", fields)
        self._check_prompts_still_answerable()
        timeout = float(fields["timeout_seconds"])
        cancel_after = step.get("cancel_after_seconds")
        if cancel_after is not None:
            cancel_after = float(cancel_after) * self.options.speed  # a scenario pause
        limit = timeout if cancel_after is None else min(timeout, cancel_after)
        try:
            return await asyncio.wait_for(asyncio.shield(future), limit)
        except TimeoutError:
            if cancel_after is not None and cancel_after < timeout:
                return _CANCELLED
            return None
        finally:
            if not future.done():
                future.cancel()
            self._used_tokens.add(token)
            self._prompts.pop(token, None)

    async def _confirm(self, step: dict[str, Any]) -> None:
        fields = dict(step["confirm"])
        fields.setdefault("summary_normal", fields["action"])
        decision = await self._wait_prompt("confirmation", fields, step)
        action = localise(fields["action"], "en")
        if decision is _CANCELLED:
            # §6.8: the token is void; say so with a state change back to thinking.
            self.emit(
                "agent.state.changed",
                {
                    "from_state": "awaiting_input",
                    "to_state": "thinking",
                    "summary_normal": step.get(
                        "cancelled_text", f"No longer needed: {action}. Nothing was done."
                    ),
                },
            )
            return
        defaulted = decision is None
        if defaulted:
            decision = fields["default_decision"]
        if decision == "accept":
            text = step.get("accepted_text", "Accepted; proceeding.")
            if defaulted:
                text = step.get("timeout_text", "No answer in time; the default, accept, applies.")
            self.emit(
                "agent.state.changed",
                {
                    "from_state": "awaiting_input",
                    "to_state": "calling_tool",
                    "summary_normal": text,
                },
            )
            await self._steps(step.get("if_accepted", []), None)
        else:
            text = step.get("rejected_text", "Rejected; nothing was done.")
            if defaulted:
                text = step.get("timeout_text", "No answer in time; nothing was done.")
            self.emit(
                "agent.state.changed",
                {"from_state": "awaiting_input", "to_state": "thinking", "summary_normal": text},
            )
            await self._steps(step.get("if_rejected", []), None)

    async def _clarify(self, step: dict[str, Any]) -> None:
        fields = dict(step["clarify"])
        fields.setdefault("summary_normal", fields["question"])
        response = await self._wait_prompt("clarification", fields, step)
        if response is None or response is _CANCELLED:
            default = fields.get("default_response")
            answer = str(default) if default is not None else None
            if answer is None:
                self.emit(
                    "agent.state.changed",
                    {
                        "from_state": "awaiting_input",
                        "to_state": "thinking",
                        "summary_normal": "No answer in time; skipping that question.",
                    },
                )
                return
        elif isinstance(response, bool):
            answer = "yes" if response else "no"
        else:
            answer = str(response)
        self.emit(
            "agent.state.changed",
            {
                "from_state": "awaiting_input",
                "to_state": "thinking",
                "summary_normal": "Thanks, noted.",
            },
        )
        await self._steps(step.get("then", []), answer)


_CANCELLED = object()


def _rejected(code: str, message: str) -> dict[str, Any]:
    return {"type": "subscription.rejected", "reason_code": code, "reason_message": message}


def _matches_any(tag: str, available: list[str]) -> bool:
    primary = tag.split("-")[0].lower()
    return any(candidate.split("-")[0].lower() == primary for candidate in available)


def _pattern_matches(pattern: str, event_type: str) -> bool:
    if pattern.endswith("*"):
        return event_type.startswith(pattern[:-1])
    return pattern == event_type


def _passes_filters(event: dict[str, Any], capabilities: dict[str, Any]) -> bool:
    if event.get("urgency") == "critical":
        return True  # §5.5.4
    filters = capabilities.get("event_filters") or {}
    event_type = str(event["type"])
    include = filters.get("include") or ["aaep:agent.*"]
    exclude = filters.get("exclude") or []
    if any(_pattern_matches(str(p), event_type) for p in exclude):
        return False
    return any(_pattern_matches(str(p), event_type) for p in include)


def _response_fits(value: Any, fields: dict[str, Any]) -> bool:
    kinds = fields.get("accepted_response_kinds") or ["freetext"]
    for kind in kinds:
        if kind == "freetext" and isinstance(value, str) and value:
            return True
        if kind == "yes_no" and isinstance(value, bool):
            return True
        if kind == "numeric" and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if kind == "multiple_choice" and isinstance(value, str):
            choices = [c.get("value") for c in fields.get("choices", []) if isinstance(c, dict)]
            if value in choices:
                return True
    return False
