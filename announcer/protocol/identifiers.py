"""Identifier and timestamp grammars of AAEP (§3.2.3-§3.2.5, §5.4, §6.2.1).

Everything here is pure: ``new_*_id`` use :mod:`secrets` for randomness, and
timestamps are rendered from a ``datetime`` or a float the caller passes in.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

ID_BODY = r"[A-Za-z0-9]{1,64}"
EVENT_ID = re.compile(rf"evt_{ID_BODY}")
SESSION_ID = re.compile(rf"sess_{ID_BODY}")
REPLY_TOKEN = re.compile(rf"rpl_{ID_BODY}")
SUBSCRIPTION_ID = re.compile(rf"sub_{ID_BODY}")
TOOL_CALL_ID = re.compile(rf"call_{ID_BODY}")
OUTPUT_ID = re.compile(rf"out_{ID_BODY}")

# §3.2.5: date T time, no fraction or exactly 3 or 6 digits, then Z or ±HH:MM.
# §3.2.5, in syntax both Python's re and pydantic-core's Rust regex read alike.
TIMESTAMP_GRAMMAR = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{3}|\.[0-9]{6})?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})"
)
TIMESTAMP = re.compile(TIMESTAMP_GRAMMAR)
# The BCP 47 shape the official schemas use (§11.1.2).
LANGUAGE_TAG = re.compile(r"[a-zA-Z]{1,8}(?:-[a-zA-Z0-9]{1,8})*")
SEMVER = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:-[A-Za-z0-9.-]+)?")

ID_RULES: dict[str, tuple[re.Pattern[str], str, str]] = {
    "evt": (EVENT_ID, 'must be "evt_" followed by 1-64 letters or digits', "§3.2.3"),
    "sess": (SESSION_ID, 'must be "sess_" followed by 1-64 letters or digits', "§3.2.4"),
    "rpl": (REPLY_TOKEN, 'must be "rpl_" followed by 1-64 letters or digits', "§6.2.1"),
    "sub": (SUBSCRIPTION_ID, 'must be "sub_" followed by 1-64 letters or digits', "§5.4.1"),
    "call": (TOOL_CALL_ID, 'must be "call_" followed by 1-64 letters or digits', "§4.3.1"),
    "out": (OUTPUT_ID, 'must be "out_" followed by 1-64 letters or digits', "§4.3.3"),
}


def _new(prefix: str) -> str:
    # §3.2.3: 128 random bits as 32 hexadecimal characters.
    return f"{prefix}_{secrets.token_hex(16)}"


def new_event_id() -> str:
    return _new("evt")


def new_session_id() -> str:
    return _new("sess")


def new_reply_token() -> str:
    return _new("rpl")


def new_subscription_id() -> str:
    return _new("sub")


def is_event_id(value: object) -> bool:
    return isinstance(value, str) and EVENT_ID.fullmatch(value) is not None


def is_session_id(value: object) -> bool:
    return isinstance(value, str) and SESSION_ID.fullmatch(value) is not None


def is_reply_token(value: object) -> bool:
    return isinstance(value, str) and REPLY_TOKEN.fullmatch(value) is not None


def is_subscription_id(value: object) -> bool:
    return isinstance(value, str) and SUBSCRIPTION_ID.fullmatch(value) is not None


def parse_timestamp(value: str) -> datetime | None:
    """The instant an AAEP timestamp names, or None when it breaks §3.2.5."""
    if TIMESTAMP.fullmatch(value) is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:  # 2026-02-30, 25:00, offset ±24:00...
        return None


def format_timestamp(moment: datetime) -> str:
    """Render §3.2.5: milliseconds unless the value needs microseconds; Z for UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    offset = moment.utcoffset()
    precision = "milliseconds" if moment.microsecond % 1000 == 0 else "microseconds"
    text = moment.isoformat(timespec=precision)
    if offset is not None and offset.total_seconds() == 0:
        text = text[: -len("+00:00")] + "Z"
    return text


def timestamp_from_epoch(seconds: float) -> str:
    """A UTC timestamp for a wall-clock reading the caller took."""
    return format_timestamp(datetime.fromtimestamp(seconds, tz=UTC))
