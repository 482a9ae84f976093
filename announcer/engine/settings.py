"""The user's listening preferences, as the engine sees them.

This is the one settings model of the product: the config adapter loads and
saves it, the transports derive handshake capabilities from it (§5.3.1), and
the policy engine and scheduler read it. Keep it free of I/O.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from announcer.protocol.events import Verbosity
from announcer.protocol.handshake import CognitiveLoad


class EventFilters(BaseModel):
    """§5.3.1.7 include/exclude patterns over event types."""

    model_config = ConfigDict(extra="forbid")

    include: list[str] = Field(default_factory=lambda: ["*"])
    exclude: list[str] = Field(default_factory=list)


class SavedProducer(BaseModel):
    """A producer the user listens to often: ``announcer listen NAME`` finds it here.

    The token itself never lives in the settings file, only the name of the
    environment variable that holds it.
    """

    model_config = ConfigDict(extra="forbid")

    # Any SOURCE ``announcer listen`` takes (announcer.transports.schemes, the one table;
    # ``listen --help`` prints it), e.g. "wss://127.0.0.1:8765/aaep" or "acp:claude".
    source: str = Field(min_length=1)
    token_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class UserSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    verbosity: Verbosity = "normal"
    cognitive_load: CognitiveLoad = "medium"
    languages: list[str] = Field(default_factory=lambda: ["en"])
    do_not_interrupt: bool = False
    earcons: bool = True
    # Words per minute the user can follow; the scheduler paces and bounds queued speech with it.
    pace_wpm: int = Field(default=180, ge=60, le=600)
    # Longest a question's lead-up may delay it, and background news may wait while newer
    # news waits behind it (issue 14 e). Status news has its own rule (issue 20, scheduler).
    max_news_delay_seconds: float = Field(default=3.0, ge=1.0, le=60.0)
    # How much faster than the user's rate the agent's own words may be said when they pile
    # up (issue 20): they are never skipped, so a backlog is caught up by speaking faster.
    max_rate_factor: float = Field(default=1.5, ge=1.0, le=3.0)
    max_events_per_second: float | None = Field(default=None, gt=0)
    filters: EventFilters = Field(default_factory=EventFilters)
    muted_producers: list[str] = Field(default_factory=list)
    # What happens to queued lower-urgency speech after a critical barge-in.
    after_interrupt: Literal["resume", "drop"] = "resume"
    # Never "accept": a configured policy may only ever reject (§6, docs/security.md).
    reply_policy: Literal["ask", "auto_reject"] = "ask"
    # Seconds an answer key waits after a question appears or replaces another (and until
    # its first words were spoken), so a key meant for the last question never answers
    # this one (announcer.engine.answer_guard). 0 turns the wait off; not recommended.
    answer_arming_seconds: float = Field(default=1.0, ge=0.0, le=10.0)
    # Which confirmations need a second, different key to accept: "risky" (high-risk or
    # irreversible ones, and those whose risk is not stated) or "always". There is
    # deliberately no "never".
    two_key_accept: Literal["risky", "always"] = "risky"
    # A question whose agent waits without a deadline (ACP permissions) is said to be
    # still waiting every this many seconds while it stays open; 0 turns it off.
    question_reminder_seconds: float = Field(default=60.0, ge=0.0, le=86_400.0)
    # While an agent's turn runs and nothing has been said for this many seconds, one short
    # "Still working: ..." is said (issue 33, item 3); 0 turns it off.
    silence_notice_seconds: float = Field(default=30.0, ge=0.0, le=3_600.0)
    # At the end of an agent's turn that lasted at least this many seconds, one digest of
    # it: files changed, commands run, your answers, errors, its last words (issue 33,
    # item 2); 0: only when asked (":digest").
    digest_after_seconds: float = Field(default=120.0, ge=0.0, le=86_400.0)
    # The ACP agent registry ``announcer agent`` offers beside its presets: a file, a
    # folder or an https:// address of a ``registry.json`` (docs/agents.md). None: none.
    agent_registry: str | None = Field(default=None, min_length=1, max_length=4096)
    backend: str = "auto"
    # Braille through the screen reader: "auto" when it has a display, "on", "off".
    # Questions are brailled whatever this says (speech/screenreader.py).
    braille: Literal["auto", "on", "off"] = "auto"
    voices: dict[str, str] = Field(default_factory=dict)
    # With several agents side by side, the engine voice each speaks with, by the agent's
    # short name ("claude" = "...") (issue 33, item 4); an agent left out gets a distinct
    # installed voice of the user's language where the speech output lists them.
    agent_voices: dict[str, str] = Field(default_factory=dict)
    rate_wpm: int | None = Field(default=None, ge=60, le=600)
    pitch: float | None = Field(default=None, ge=0.0, le=1.0)
    volume: float | None = Field(default=None, ge=0.0, le=1.0)
    # Saved producers by name (config file tables ``[producers.NAME]``).
    producers: dict[str, SavedProducer] = Field(default_factory=dict)
